"""The typed sub-states of ForgeState (design, gate, final) hold exactly what the nodes write.

Why: they were plain dicts whose keys were documented in a comment that drifted. They are TypedDicts now (plain
dicts at run time, so LangGraph's SQLite checkpointer stores them without an allowlist and checkpoints written
before the change resume unchanged); this test walks a run through every gate, with a stop and a resume
(a fresh process reading the checkpoint) at each one, and checks each sub-state against its declaration with
unknown keys forbidden.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, get_args, get_origin, get_type_hints

import pytest

from orchestrator import api
from orchestrator.adapters.scripted import ScriptedAgents
from orchestrator.core.snapshot import snapshot
from orchestrator.core.state import DesignState, FinalState, ForgeState
from orchestrator.store.runs import latest_run


def conforms(value: Any, hint: Any, where: str = "") -> list[str]:
    """Problems of ``value`` against a type hint (TypedDicts: unknown keys are problems too)."""
    if typing.is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: expected a dict, got {type(value).__name__}"]
        hints = get_type_hints(hint)
        problems = [f"{where}.{k}: not declared in {hint.__name__}" for k in value if k not in hints]
        for k, v in value.items():
            if k in hints:
                problems += conforms(v, hints[k], f"{where}.{k}")
        return problems
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return []
    if origin is Literal:
        return [] if value in args else [f"{where}: {value!r} not one of {args}"]
    if origin in (typing.Union, types.UnionType):
        return [] if any(not conforms(value, a, where) for a in args) else [f"{where}: {value!r} matches no {args}"]
    if hint is type(None):
        return [] if value is None else [f"{where}: expected None"]
    if origin in (list, dict):
        if not isinstance(value, origin):
            return [f"{where}: expected {origin.__name__}, got {type(value).__name__}"]
        if origin is list:
            return [p for i, v in enumerate(value) for p in conforms(v, args[0], f"{where}[{i}]")] if args else []
        return [p for k, v in value.items() for p in conforms(v, args[1], f"{where}[{k!r}]")] if args else []
    if hint is float:
        return [] if isinstance(value, int | float) and not isinstance(value, bool) else [f"{where}: not a float"]
    if hint is int:
        return [] if isinstance(value, int) and not isinstance(value, bool) else [f"{where}: not an int: {value!r}"]
    return [] if isinstance(value, hint) else [f"{where}: {value!r} is not {hint.__name__}"]


def test_the_checker_catches_an_undeclared_key_and_a_wrong_status() -> None:
    assert conforms({"attempts": 1, "status": "approved"}, DesignState) == []
    assert conforms({"attempts": 1, "stauts": "approved"}, DesignState) == [".stauts: not declared in DesignState"]
    assert conforms({"status": "done"}, DesignState)
    assert conforms({"perf": {"delivered": 1, "extra": 2}}, FinalState)


def _check(op, seen: dict[str, int]) -> dict:
    values, _, _ = snapshot(op, latest_run(op))
    hints = get_type_hints(ForgeState)
    for key in ("design", "gate", "final"):
        if values.get(key) is not None:
            assert conforms(values[key], hints[key], key) == [], values[key]
            seen[key] = seen.get(key, 0) + 1
    return values


def test_sub_states_conform_at_every_gate_across_stop_and_resume(op_copy, script, verifier, clock) -> None:
    op = op_copy("sqrecip")
    s = script("sqrecip", implement={1: ["m1.py"], 2: ["m12.py"], 3: ["m123.py"]},
               design=[("DESIGN_v1.md", "module_interfaces.yaml"), ("DESIGN.md", "module_interfaces.yaml")])
    seen: dict[str, int] = {}
    r = api.run(op, api.RunOptions(approve="stop", run_id="t1"),
                inject=api.Injected(agents=ScriptedAgents(s), verifier=verifier, clock=clock))
    gates = []
    while r.status == "waiting":
        assert r.gate is not None
        gates.append(r.gate.gate)
        _check(op, seen)
        if len(gates) == 1:
            api.reject(op, note="split differently")
        else:
            api.approve(op)
        # a new ScriptedAgents each time: the run continues from the checkpoint alone, as a new process would
        r = api.resume(op, inject=api.Injected(agents=ScriptedAgents(s), verifier=verifier, clock=clock))
    assert r.status == "delivered", r
    assert gates[:2] == ["design", "design"] and gates[-1] == "final" and "module" in gates
    values = _check(op, seen)
    assert seen == {"design": len(gates) + 1, "gate": len(gates), "final": len(gates) + 1}, (seen, gates)
    assert values["design"]["status"] == "approved" and values["design"]["notes"] == ["split differently"]
    assert values["gate"]["gate"] == "final" and values["gate"]["decision"] == "approve"
    assert values["final"]["verdict"] == "PASS" and values["final"]["file"] == "sqrecip_impl.py"
    assert values["final"]["commit"]


@pytest.mark.parametrize("key", ["design", "gate", "final"])
def test_every_sub_state_is_declared_typed_not_a_bare_dict(key: str) -> None:
    hint = get_type_hints(ForgeState)[key]
    assert typing.is_typeddict(hint) or any(typing.is_typeddict(a) for a in get_args(hint))
