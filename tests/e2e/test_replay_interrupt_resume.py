"""A replay interrupted part-way through a node (Ctrl-C) resumes to exactly what an uninterrupted replay delivers.

The bug this guards: a node interrupted after it had read the logical clock (plan_stages: its dev-log row and its
commit date) or made model/tool calls ran again on ``resume`` with the clock and the trace's occurrence counters
where the interrupted attempt had left them. Its MEMORY.md row was dated 2 s later, the implementer's request (which
carries MEMORY.md) matched no recorded call, and every ``resume`` failed with a ReplayMissError shown as an
"internal error". Now every checkpoint carries the counters (``ForgeState.counters``) and a node starts from them.

The interrupts are injected in-process where Ctrl-C would raise KeyboardInterrupt, at fixed points inside nodes, so
the test is deterministic (the user's repro hit the window with ``timeout -s INT`` about once in 15 tries).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.trace import Trace
from orchestrator import api
from orchestrator.adapters.portability import artifact_digests
from orchestrator.core.nodes import _common
from orchestrator.errors import ForgeError
from orchestrator.store.gitaudit import AuditRepo
from orchestrator.store.paths import trace_dir

ROOT = Path(__file__).resolve().parents[2]
OP = "silu"  # the cheapest workspace replay; its design, implement and audit nodes call the model and tools


@pytest.fixture(autouse=True)
def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FORGE_MODEL", "FORGE_MODEL_DESIGNER", "FORGE_MODEL_IMPLEMENTER", "FORGE_MODEL_VERIFIER",
                "FORGE_MODEL_DEBUGGER", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def _history(op_dir: Path) -> list[str]:
    """Tree, date and subject of every audit commit (ids differ only by the run-id trailer)."""
    return AuditRepo(op_dir).raw("log", "--format=%T %ad %s").splitlines()


def _events(op_dir: Path, run_id: str) -> list[dict[str, Any]]:
    path = trace_dir(op_dir, run_id) / "events.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class Interrupts:
    """Raise KeyboardInterrupt (what Ctrl-C raises in the main thread) once at each named point.

    ``commit:<prefix>`` / ``committed:<prefix>``: just before / just after the audit commit whose subject starts
    with ``<prefix>`` (the node has read the clock for its dev-log row and the commit date); ``tool:<node>``: just
    after the first agent tool call of ``<node>`` returned (the node has made model and tool calls);
    ``end:<node>``: when the node has done everything (files written, MEMORY.md rendered) but its checkpoint
    is not written yet.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, points: list[str]) -> None:
        self.points, self.fired = list(points), []
        commit, call_tool, write_memory = AuditRepo.commit, Trace.call_tool, _common.write_memory

        def patched_commit(repo: AuditRepo, subject: str, trailers: dict[str, str], when: Any = None) -> str:
            self._maybe(f"commit:{subject}")
            sha = commit(repo, subject, trailers, when)
            self._maybe(f"committed:{subject}")
            return sha

        def patched_call_tool(trace: Trace, tool: str, arguments: dict, run: Callable[[], str], **kw: Any) -> str:
            out = call_tool(trace, tool, arguments, run, **kw)
            self._maybe(f"tool:{kw.get('node')}")
            return out

        def patched_write_memory(state: Any) -> bool:
            changed = write_memory(state)
            self._maybe(f"end:{state.get('node')}")  # the first call naming the node: its wrapper's last step
            return changed

        monkeypatch.setattr(AuditRepo, "commit", patched_commit)
        monkeypatch.setattr(_common, "write_memory", patched_write_memory)
        monkeypatch.setattr(Trace, "call_tool", patched_call_tool)

    def _maybe(self, where: str) -> None:
        """Points fire in the order given, each once (a point may be named twice: its next occurrence)."""
        if len(self.fired) < len(self.points) and where.startswith(point := self.points[len(self.fired)]):
            self.fired.append(point)
            raise KeyboardInterrupt(point)


def _run_with_interrupts(op_dir: Path, interrupts: Interrupts) -> api.RunResult:
    """``run``, then ``resume`` after every interrupt (each a new call, as a new process would do)."""
    start: Callable[[], api.RunResult] = lambda: api.run(op_dir)  # noqa: E731
    for _ in range(len(interrupts.points) + 1):
        try:
            return start()
        except KeyboardInterrupt:
            start = lambda: api.resume(op_dir)  # noqa: E731
    raise AssertionError(f"interrupted more often than planned: {interrupts.fired}")


@pytest.mark.heavy_in_ci  # two replays of silu (about 2 x 3 s of CPU); the regression must stay in CI
def test_a_replay_interrupted_inside_nodes_resumes_to_what_an_uninterrupted_replay_delivers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ref = api.copy_op_inputs(ROOT / "workspace" / OP, tmp_path / "ref" / OP)
    reference = api.run(ref)
    assert reference.status == "delivered", reference

    op_dir = api.copy_op_inputs(ROOT / "workspace" / OP, tmp_path / "cut" / OP)
    points = ["tool:design",           # the first node with model + tool calls, before any checkpoint of its own
              "commit:design:",        # plan_stages, after its clock readings (the user's repro)
              "end:implement",         # attempt 1 wrote silu_impl.py (which the implementer reads when it runs)
              "tool:implement",        # attempt 2 (attempt 1 failed), after two model answers and a tool call
              "end:implement",         # attempt 2 overwrote attempt 1's silu_impl.py (attempt 2's prompt shows it)
              "committed:verify:",     # verify, after its commit (the commit is reused, not made twice)
              "end:audit",             # the verifier agent's node, done
              "commit:final:"]         # report, the last node
    interrupts = Interrupts(monkeypatch, points)
    result = _run_with_interrupts(op_dir, interrupts)
    assert interrupts.fired == points, interrupts.fired
    assert result.status == "delivered", result
    assert result.divergences == []

    manifest = json.loads((op_dir / "traces" / "default" / "manifest.json").read_text(encoding="utf-8"))
    assert artifact_digests(op_dir) == artifact_digests(ref) == manifest["artifacts"]  # MEMORY.md times included
    assert _history(op_dir) == _history(ref)  # same commits, same dates, no commit made twice
    # every model and tool call, also those made again after an interrupt, was answered from the recording
    calls = [e for e in _events(op_dir, result.run_id) if e["kind"] in ("llm_call", "tool_call")]
    assert calls and {e.get("cache") for e in calls} == {"hit"}, [(e["seq"], e["kind"], e.get("cache"))
                                                                 for e in calls if e.get("cache") != "hit"]
    assert not [e for e in _events(op_dir, result.run_id) if e["kind"] == "error"]


@pytest.mark.slow  # a partial replay and a resume
def test_a_miss_on_resume_says_to_replay_again_not_to_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If a resumed replay leaves its recording anyway, the message says so and how to start over - not an
    "internal error" whose advice (resume again) cannot work."""
    op_dir = api.copy_op_inputs(ROOT / "workspace" / OP, tmp_path / OP)
    interrupts = Interrupts(monkeypatch, ["commit:design:"])
    with pytest.raises(KeyboardInterrupt):
        api.run(op_dir)
    # the recording changes under the stopped run: its implementer calls no longer match any request
    events = op_dir / "traces" / "default" / "events.jsonl"
    lines = []
    for line in events.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["kind"] == "llm_call" and event.get("agent") == "implementer":
            event["request_key"] = "0" * 64
        lines.append(json.dumps(event))
    events.write_text("\n".join(lines) + "\n", encoding="utf-8")

    with pytest.raises(ForgeError) as info:
        api.resume(op_dir)
    message = info.value.message
    assert "resumed replay left its recording" in message and "agent=implementer" in message
    assert f"run {op_dir} --fresh" in message and f"resume {op_dir}" not in message
    assert "numerics" not in message and "internal error" not in message
    assert list((op_dir / ".forge").glob("run-*/replay-miss.txt"))
    with pytest.raises(ForgeError, match="nothing to resume"):
        api.resume(op_dir)
    assert interrupts.fired == ["commit:design:"]
