"""Checkpoints name only registered types (orchestrator.store.checkpoints.CHECKPOINT_TYPES), and resume with them.

Why: LangGraph's default serializer accepts any class a checkpoint names and logs "Deserializing unregistered
type runtime.verdicts.Verdict ..." (to be blocked in a future LangGraph). The run's savers register the project's
types; this walks a run through every gate, a debug loop and a resume from each gate, then decodes every stored
checkpoint and write, and fails on any type LangGraph had to let through unregistered or block.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from langgraph.checkpoint.serde import jsonplus
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from orchestrator import api
from orchestrator.adapters.scripted import ScriptedAgents
from orchestrator.core.snapshot import snapshot
from orchestrator.store.checkpoints import checkpoint_serde
from orchestrator.store.paths import checkpoint_db
from orchestrator.store.runs import latest_run
from runtime.verdicts import Verdict


@pytest.fixture
def serde_events(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Every event LangGraph's serializer reports (each time, unlike its log line, which it writes once per
    process and type)."""
    events: list[dict] = []
    monkeypatch.setattr(jsonplus, "emit_serde_event", events.append)
    return events


def _verdicts(value: Any) -> list[Verdict]:
    if isinstance(value, Verdict):
        return [value]
    if isinstance(value, dict):
        return [v for x in value.values() for v in _verdicts(x)]
    if isinstance(value, list | tuple):
        return [v for x in value for v in _verdicts(x)]
    return []


def _decode_everything(db: str, serde: Any) -> list[Any]:
    """Every checkpoint and pending write stored in ``db``, decoded."""
    con = sqlite3.connect(db)
    try:
        rows = [*con.execute("SELECT type, checkpoint FROM checkpoints"), *con.execute("SELECT type, value FROM writes")]
    finally:
        con.close()
    return [serde.loads_typed((type_, blob)) for type_, blob in rows]


def test_default_serializer_complains_about_a_verdict_ours_does_not(serde_events: list[dict]) -> None:
    """The check below can fail: LangGraph's default reports a Verdict as unregistered; ours rebuilds it."""
    blob = JsonPlusSerializer().dumps_typed({"last_verdict": Verdict.FAIL_NUMERIC})
    JsonPlusSerializer().loads_typed(blob)
    assert [(e["kind"], e["module"], e["name"]) for e in serde_events] == [
        ("msgpack_unregistered_allowed", "runtime.verdicts", "Verdict")]
    serde_events.clear()
    back = checkpoint_serde().loads_typed(blob)
    assert serde_events == [] and type(back["last_verdict"]) is Verdict


def _walk(op: Any, s: Any, verifier: Any, clock: Any) -> list[str]:
    """Run with approval ``stop``; at each gate read the state, approve, and resume with fresh agents (as a new
    process would, from the checkpoint alone). Returns the gates passed."""
    r = api.run(op, api.RunOptions(approve="stop", run_id="t1"),
                inject=api.Injected(agents=ScriptedAgents(s), verifier=verifier, clock=clock))
    gates = []
    while r.status == "waiting":
        assert r.gate is not None
        gates.append(r.gate.gate)
        snapshot(op, latest_run(op))  # reading state (the CLI's show/status) decodes too
        api.approve(op)
        r = api.resume(op, inject=api.Injected(agents=ScriptedAgents(s), verifier=verifier, clock=clock))
    assert r.status == "delivered", r
    return gates


def test_runs_through_gates_debug_and_resumes_store_only_registered_types(
        op_copy, script, verifier, clock, serde_events: list[dict]) -> None:
    double = verifier

    def typed(*args: Any, **kwargs: Any) -> Any:  # the double's verdicts typed as the real verifier's
        out = double(*args, **kwargs)
        return out.model_copy(update={"verdict": Verdict(out.verdict)})

    l1 = op_copy("sqrecip")
    gates = _walk(l1, script("sqrecip", implement={1: ["m1_numeric.py", "m1.py"], 2: ["m12.py"], 3: ["m123.py"]}),
                  typed, clock)
    assert "design" in gates and "module" in gates and gates[-1] == "final"
    assert "FAIL_NUMERIC" in (l1 / "MEMORY.md").read_text()  # the debug loop ran
    l0 = op_copy("affine")  # the L0 path keeps a Verdict in its final state
    assert _walk(l0, script("affine", "l0.yaml", implement={1: ["impl.py"]}), typed, clock)[-1] == "final"
    stored = [x for op in (l1, l0) for x in _decode_everything(str(checkpoint_db(op, "t1")), checkpoint_serde())]
    assert len(stored) > 20
    assert serde_events == [], serde_events
    found = _verdicts(stored)
    assert found, "no Verdict in any checkpoint: this test would prove nothing"
    assert all(type(v) is Verdict for v in found)  # rebuilt as Verdict, not left as its raw string

