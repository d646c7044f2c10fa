"""The orchestrator and lint agree on frozen module regions, and only the verifier sets a verdict.

Issue #15: on a file whose M2 marker has no colon and whose M1 region has an edited ``# STUB`` line, the
orchestrator's own region parser reported an M1 violation and set FAIL_CHEAT itself, while lint PF05
(the definition the verifier uses) reported none. Now the verify node only relays the verifier's verdict;
a real frozen edit reaches the agents as the verifier's FAIL_LINT (PF05) plus a pointer to the region.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from types import SimpleNamespace

from orchestrator.core.nodes.verify import verify as verify_node
from orchestrator.core.services import LintItem, Services, VerifyOutcome
from orchestrator.store.paths import sha256_file
from runtime.lint import blocking, lint_source

PREV = """\
import pypto


@pypto.frontend.jit
def op_module1_kernel(x: pypto.Tensor([8, 8], pypto.DT_FP32), y: pypto.Tensor([8, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 8)
    # --- Module M1: square ---
    a = x * x
    b = a  # STUB golden-fed until M2 exists
    # --- end of modules ---
    y[:] = b
"""

# M2's marker has no colon; the STUB line inside M1 was edited (STUB lines are not part of a region)
CUR = """\
import pypto


@pypto.frontend.jit
def op_module12_kernel(x: pypto.Tensor([8, 8], pypto.DT_FP32), y: pypto.Tensor([8, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 8)
    # --- Module M1: square ---
    a = x * x
    b = a + 0  # STUB edited stand-in
    # --- Module M2 double ---
    c = b * 2
    # --- end of modules ---
    y[:] = c
"""


def _pf05(prev: Path, source: str) -> list[LintItem]:
    findings = lint_source(source, "op_module12_impl.py", stage="module", previous_stage=prev)
    return [LintItem(rule_id=f.rule_id, file=str(f.file), line=f.line, message=f.message)
            for f in blocking(findings) if f.rule_id == "PF05"]


class _LintVerifier:
    """A verifier whose verdict is lint PF05's (the rest of verification is not under test here)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, op_dir: Path, target: str, *, previous_stage: str | None, reports_dir: Path) -> VerifyOutcome:
        self.calls += 1
        assert previous_stage is not None
        items = _pf05(op_dir / previous_stage, (op_dir / target).read_text(encoding="utf-8"))
        verdict = "FAIL_LINT" if items else "PASS"
        return VerifyOutcome(verdict=verdict, target=target, hashes={target: sha256_file(op_dir / target)},
                             report_hash="r" * 64,
                             summary="; ".join(i.message for i in items), lint_blocking=items)


class _Sink:
    """A live (non-replay) TraceSink that keeps events in memory."""

    mode = "record"

    def __init__(self) -> None:
        self.events: list[tuple[str, dict]] = []

    def emit(self, kind: str, **fields: object) -> int:
        self.events.append((kind, fields))
        return len(self.events)

    def recorded_decision(self, gate: str, module: int | None, occurrence: int) -> dict | None:
        return None

    def recorded(self, kind: str, **match: object) -> list[dict]:
        return []

    def update_manifest(self, **fields: object) -> None:
        return None

    def counters(self) -> dict[str, dict[str, int]]:
        return {"llm": {}, "tool": {}}

    def rewind(self, counters: dict[str, dict[str, int]]) -> None:
        return None

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None


def _run_node(tmp_path: Path, cur: str) -> tuple[dict, _LintVerifier]:
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "op_module1_impl.py").write_text(PREV, encoding="utf-8")
    (tmp_path / "modules" / "op_module12_impl.py").write_text(cur, encoding="utf-8")
    verifier = _LintVerifier()
    svc = Services(agents=None, verifier=verifier, trace=_Sink(),
                   clock=lambda: _dt.datetime(2026, 1, 1, tzinfo=_dt.UTC))
    state = {"op_dir": str(tmp_path), "run_id": "t", "active": 2, "modules": [
        {"id": 1, "status": "verified", "stage_file": "modules/op_module1_impl.py", "attempts": 1},
        {"id": 2, "status": "in_progress", "stage_file": "modules/op_module12_impl.py", "attempts": 1,
         "feedback": []},
    ]}
    update = verify_node(state, SimpleNamespace(context=svc))
    return update, verifier


def test_lint_sees_no_frozen_violation_here(tmp_path: Path) -> None:
    (tmp_path / "prev.py").write_text(PREV, encoding="utf-8")
    assert _pf05(tmp_path / "prev.py", CUR) == []


def test_orchestrator_agrees_with_lint_and_asks_the_verifier(tmp_path: Path) -> None:
    update, verifier = _run_node(tmp_path, CUR)
    assert verifier.calls == 1, "the verify node must not decide a frozen violation without the verifier"
    assert update["last_verdict"] == "PASS"


def test_a_real_frozen_edit_arrives_as_the_verifiers_fail_lint_with_a_pointer(tmp_path: Path) -> None:
    update, verifier = _run_node(tmp_path, CUR.replace("a = x * x", "a = x * x * 1"))
    assert verifier.calls == 1
    assert update["last_verdict"] == "FAIL_LINT"
    feedback = update["modules"][1]["feedback"]
    assert any("PF05" in f and "frozen module M1" in f for f in feedback), feedback
    # the orchestrator's pointer: where the verified M1 region is, to copy it back unchanged
    assert any("modules/op_module1_impl.py" in f and "lines 7-8" in f for f in feedback), feedback


def test_no_orchestrator_module_writes_a_verdict_of_its_own() -> None:
    """Only the verifier's report carries FAIL_CHEAT; the orchestrator may relay it, never produce it."""
    root = Path(__file__).resolve().parents[2] / "orchestrator"
    writers = [p.relative_to(root) for p in root.rglob("*.py") if 'verdict="FAIL_CHEAT"' in p.read_text()]
    assert writers == []
