"""The second opinion in the pipeline: recorded like a tool result, replayed offline, fidelity findings kept.

No pypto needed: ``compile_kernel`` is replaced by a double where a live answer is wanted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import orchestrator.core.second_opinion as so
from orchestrator.core.delivery import compose_readme
from orchestrator.core.services import RunConfig
from runtime.toolchain import CompileError, CostFigures, ShapeResult, ToolchainResult


class FakeTrace:
    def __init__(self, mode: str = "record", events: list[dict[str, Any]] | None = None) -> None:
        self.mode = mode
        self.source_events = events or []
        self.emitted: list[tuple[str, dict[str, Any]]] = []

    def emit(self, kind: str, **fields: Any) -> int:
        self.emitted.append((kind, fields))
        return len(self.emitted)

    def recorded(self, kind: str, **match: Any) -> list[dict[str, Any]]:
        return [e for e in self.source_events if e["kind"] == kind and all(e.get(k) == v for k, v in match.items())]


class FakeServices:
    def __init__(self, trace: FakeTrace) -> None:
        self.trace = trace
        self.config = RunConfig()


ACCEPTED = ToolchainResult(
    kernel="silu_impl.py", status="accepted", pypto_version="0.2.0", python="/secret/host/python",
    duration_s=9.9, import_s=5.0, compile_s=2.0, layers={"bwrap": True},
    shapes=[ShapeResult(case="B64-fp32", status="accepted", duration_s=2.0,
                        cost=CostFigures(total_cycles=7103, utilization_percent=4.53, task_count=4))],
    cost=CostFigures(total_cycles=7103, utilization_percent=4.53, task_count=4))
REJECTED = ToolchainResult(
    kernel="silu_impl.py", status="rejected", pypto_version="0.2.0",
    error=CompileError(stage="pass", code="FFFFFF", message="ADD[10004] Tensor[8] is missing Alloc.",
                       file="silu_impl.py", line=31, line_exact=False))


@pytest.fixture
def op(tmp_path: Path) -> Path:
    (tmp_path / "silu_impl.py").write_text("# kernel\n")
    return tmp_path


def _no_compile(*a: Any, **k: Any) -> Any:
    raise AssertionError("the toolchain must not run here")


def test_live_answer_is_recorded_without_host_facts(op: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(so, "compile_kernel", lambda *a, **k: ACCEPTED)
    svc = FakeServices(FakeTrace("record"))
    final: dict[str, Any] = {"verdict": "PASS", "evidence": "e" * 64}
    so.attach(svc, {"run_id": "r1"}, op, "silu_impl.py", final)  # type: ignore[arg-type]
    readme = compose_readme({"op_name": "silu", "level": "L0", "spec": {}}, final)  # type: ignore[arg-type]
    assert "| B64-fp32 | 7103 |" in readme and "4.53%" in readme
    assert final["toolchain"]["status"] == "accepted" and final["toolchain"]["source"] == "live"
    kind, fields = svc.trace.emitted[0]
    assert kind == "verify" and fields["node"] == "toolchain" and fields["target"] == "silu_impl.py"
    dumped = str(fields["toolchain"])
    assert "/secret/host/python" not in dumped and "import_s" not in dumped and "bwrap" not in dumped
    assert fields["toolchain"]["cost"]["total_cycles"] == 7103


def test_replay_takes_the_recorded_answer_offline(op: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(so, "compile_kernel", _no_compile)
    sha = so.sha256_file(op / "silu_impl.py")
    event = {"kind": "verify", "node": "toolchain", "target": "silu_impl.py", "target_sha256": sha,
             "toolchain": ACCEPTED.model_dump(mode="json", exclude=so._EXCLUDE)}
    svc = FakeServices(FakeTrace("replay", [event]))
    res, source = so.toolchain_result(svc, op, "silu_impl.py")  # type: ignore[arg-type]
    assert source == "replay" and res is not None and res.cost is not None and res.cost.total_cycles == 7103
    assert [(k, f["node"], f["verdict"], f["toolchain"]) for k, f in svc.trace.emitted] == \
        [("verify", "toolchain", None, event["toolchain"])]  # re-emitted as recorded


def test_strict_replay_without_a_recorded_answer_does_not_run_it(op: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(so, "compile_kernel", _no_compile)
    svc = FakeServices(FakeTrace("replay"))
    final: dict[str, Any] = {}
    so.attach(svc, {}, op, "silu_impl.py", final)  # type: ignore[arg-type]
    assert final == {} and svc.trace.emitted == []


def test_a_changed_file_is_not_given_an_old_answer(op: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    event = {"kind": "verify", "node": "toolchain", "target": "silu_impl.py", "target_sha256": "0" * 64,
             "toolchain": ACCEPTED.model_dump(mode="json", exclude=so._EXCLUDE)}
    monkeypatch.setattr(so, "compile_kernel", _no_compile)
    res, source = so.toolchain_result(FakeServices(FakeTrace("replay", [event])), op, "silu_impl.py")  # type: ignore[arg-type]
    assert res is None and source == "none"


def test_emulator_pass_and_real_reject_is_a_fidelity_finding(op: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(so, "compile_kernel", lambda *a, **k: REJECTED)
    svc = FakeServices(FakeTrace("record"))
    opinion = so.second_opinion(svc, {"run_id": "r1"}, op, "silu_impl.py")  # type: ignore[arg-type]
    assert opinion is not None and opinion.status == "rejected"
    assert opinion.fidelity_finding and "real compiler rejects" in opinion.fidelity_finding
    assert opinion.probe_candidate == ".forge/run-r1/fidelity/silu_impl.py"
    assert (op / ".forge/run-r1/fidelity/silu_impl.real.json").is_file()
    lines = opinion.gate_lines()
    assert any(ln.startswith("FIDELITY FINDING") for ln in lines)
    assert "rejects" in opinion.markdown() and "line 31 (inferred)" in opinion.markdown()


def test_unavailable_toolchain_leaves_no_trace(op: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(so, "compile_kernel", lambda *a, **k: ToolchainResult(kernel="x", status="unavailable"))
    svc = FakeServices(FakeTrace("record"))
    assert so.second_opinion(svc, {}, op, "silu_impl.py") is None  # type: ignore[arg-type]
    assert svc.trace.emitted == []


def test_final_gate_screen_and_perf_screen_show_the_figures(op: Path) -> None:
    from orchestrator.core.perf import PerfRow, PerfSummary
    from orchestrator.ui.views import gate_view

    opinion = so.SecondOpinion(status="rejected", summary="real pypto 0.2.0 SIM: REJECTED", error=REJECTED.error,
                               fidelity_finding="the emulator PASSes x but the real compiler rejects it",
                               probe_candidate=".forge/run-r1/fidelity/silu_impl.py")
    values = {"op_name": "silu", "final": {"verdict": "PASS", "toolchain": opinion.model_dump(mode="json")}}
    facts = dict(gate_view(op, "r1", values, "final", None, 0).facts)
    assert facts["FIDELITY FINDING"].startswith("the emulator PASSes")
    assert facts["probe candidate"] == ".forge/run-r1/fidelity/silu_impl.py"
    perf = PerfSummary(requested=True, budget=2, scorer="cost_model", best=1,
                       baseline=PerfRow(variant=0, verdict="PASS", cycles=20568),
                       variants=[PerfRow(variant=1, verdict="PASS", cycles=15806),
                                 PerfRow(variant=2, verdict="FAIL_NUMERIC", note="1/10 out of tolerance")])
    view = gate_view(op, "r1", {"perf": perf.model_dump(mode="json")}, "perf_deliver", None, 0)
    facts = dict(view.facts)
    assert facts["v1 (best)"] == "PASS, 15806 cycles" and facts["baseline"] == "PASS, 20568 cycles"
    assert facts["v2"].startswith("FAIL_NUMERIC")


def test_known_answers_serve_identical_files_when_re_authoring(op: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(so, "compile_kernel", _no_compile)
    sha = so.sha256_file(op / "silu_impl.py")
    earlier = [{"kind": "verify", "node": "toolchain", "target_sha256": sha,
                "toolchain": ACCEPTED.model_dump(mode="json", exclude=so._EXCLUDE)}]
    svc = FakeServices(FakeTrace("record"))
    with so.known_answers(earlier) as n:
        assert n == 1
        res, source = so.toolchain_result(svc, op, "silu_impl.py")  # type: ignore[arg-type]
    assert res is not None and res.cost is not None and res.cost.total_cycles == 7103 and source == "replay"
    assert svc.trace.emitted[0][1]["toolchain"] == earlier[0]["toolchain"]
    assert so._KNOWN == {}  # nothing leaks past the block


def test_known_answers_read_a_shipped_trace_through_the_one_parser() -> None:
    """Re-authoring reads the shipped trace with agents.trace.read_events (typed events dumped back to JSON)."""
    from agents.trace import read_events

    path = Path(__file__).resolve().parents[2] / "workspace" / "quick_gelu" / "traces" / "default" / "events.jsonl"
    events = [e.model_dump(mode="json") for e in read_events(path)[0]]
    with so.known_answers(events) as n:
        assert n >= 1  # the toolchain answers (extra fields of a verify event) survive the typed round trip
        assert all(isinstance(v, dict) and v for v in so._KNOWN.values())
    assert so._KNOWN == {}
