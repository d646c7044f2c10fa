"""The hostile corpus: every candidate in hostile/ gets its declared verdict; the honest counterpart passes.

Lint is replaced by a no-op here so that each case exercises the runtime defences (sandbox, provenance,
anti-gaming, comparison) on their own; the lint package adds a second, static line of defence.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from verify_helpers import EMULATOR, HOSTILE, header, make_op
from verify_helpers import settings as _settings

from runtime.verify import verify


def settings(**kw):
    return _settings(emulator=EMULATOR, **kw)

FILES = sorted(HOSTILE.glob("*.py"))
SLOW = {"infinite_loop"}


def _prepare(tmp_path: Path, path: Path) -> tuple[Path, str]:
    text = path.read_text()
    fixture = header(text, "fixture", "silu")
    if fixture == "silu_bf16":
        text = text.replace("DT = pypto.DT_FP32", "DT = pypto.DT_BF16")
    return make_op(tmp_path, fixture, {"silu_impl.py": text}), header(text, "expect")


def test_corpus_is_big_enough() -> None:
    hostile = [f for f in FILES if header(f.read_text(), "expect") != "PASS"]
    assert len(hostile) >= 15
    assert {header(f.read_text(), "expect") for f in hostile} >= {"FAIL_CHEAT", "FAIL_NUMERIC", "FAIL_RUNTIME"}


@pytest.mark.parametrize("path", [f for f in FILES if f.stem not in SLOW], ids=lambda p: p.stem)
def test_hostile_candidate_gets_its_verdict(tmp_path: Path, path: Path) -> None:
    op, expect = _prepare(tmp_path, path)
    spec_before = (op / "SPEC.md").read_bytes()
    report = verify(op, op / "silu_impl.py", settings=settings())
    assert report.verdict == expect, (report.verdict, report.reasons[:5], report.sandbox.stderr_tail)
    if expect != "PASS":
        assert report.reasons, "a rejection must say why"
    assert (op / "SPEC.md").read_bytes() == spec_before
    assert not (op / "tolerance.yaml").exists()
    assert not (op / "leaked.txt").exists()
    if path.stem == "tail_bug":  # right on full tiles, wrong only where the dynamic axis has a tail
        failing = {c.name for c in report.cases if c.status != "pass"}
        assert failing and failing == {c.name for c in report.cases if c.dims["B"] % 16}
        assert any(not c.unseen for c in report.cases if c.name in failing)  # the SPEC has a tail case
    if path.stem == "huge_allocation":
        assert "MemoryError" in report.reasons[0] and report.durations["candidate_s"] < 10.0


def test_honest_counterpart_passes_in_bf16_too(tmp_path: Path) -> None:
    text = (HOSTILE / "honest_silu.py").read_text().replace("DT = pypto.DT_FP32", "DT = pypto.DT_BF16")
    op = make_op(tmp_path, "silu_bf16", {"silu_impl.py": text})
    report = verify(op, op / "silu_impl.py", settings=settings())
    assert report.verdict == "PASS", report.reasons
    assert len([c for c in report.cases if not c.unseen]) == 6 and all(c.status == "pass" for c in report.cases)
    assert any(c.unseen for c in report.cases)
    assert report.sandbox.status == "ok"
    if report.sandbox.isolation.startswith("bwrap"):  # every OS layer where Bubblewrap works
        assert all(report.sandbox.layers.values()), report.sandbox.layers
    else:  # without it the report says so (docs/verification.md: process-only isolation)
        assert report.sandbox.layers.get("bwrap") is False and report.sandbox.isolation_note


def test_bf16_loss_is_right_in_fp32(tmp_path: Path) -> None:
    op = make_op(tmp_path, "silu", {"silu_impl.py": (HOSTILE / "bf16_precision_loss.py").read_text()})
    assert verify(op, op / "silu_impl.py", settings=settings()).verdict == "PASS"


def test_infinite_loop_is_killed_within_the_timeout_leaving_nothing(tmp_path: Path) -> None:
    op, _ = _prepare(tmp_path, HOSTILE / "infinite_loop.py")
    report = verify(op, op / "silu_impl.py", settings=settings(wall=2.0, cpu=10))
    assert report.verdict == "FAIL_RUNTIME"
    assert "timeout" in report.sandbox.reason
    assert report.durations["candidate_s"] < 5.0
    assert report.sandbox.pid
    with pytest.raises(ProcessLookupError):
        os.killpg(report.sandbox.pid, 0)


def test_cpu_limit_ends_a_busy_loop(tmp_path: Path) -> None:
    op, _ = _prepare(tmp_path, HOSTILE / "infinite_loop.py")
    report = verify(op, op / "silu_impl.py", settings=settings(wall=30.0, cpu=1))
    assert report.verdict == "FAIL_RUNTIME"
    assert "CPU" in report.sandbox.reason or "SIGKILL" in report.sandbox.reason
    assert report.durations["candidate_s"] < 10.0


def test_an_honest_tail_bug_on_a_spec_case_without_full_tiles_is_numeric_not_a_cheat(tmp_path: Path) -> None:
    """Mutation sweep s30: a tail bug that writes nothing for a SPEC case smaller than a tile leaves that case's output
    zero - constant - and the whole verdict was FAIL_CHEAT. It is constant on that case only (the larger SPEC cases
    have written tiles), so it is a numeric failure; `return_zeros` (constant on every SPEC case) stays a cheat."""
    op = make_op(tmp_path, "silu")
    spec = (op / "SPEC.md").read_text()
    (op / "SPEC.md").write_text(spec.replace("  - {B: 37, D: 64}     # 5-row tail for a 16-row tile",
                                             "  - {B: 37, D: 64}\n  - {B: 5, D: 64}"))
    (op / "silu_impl.py").write_text((HOSTILE / "tail_bug.py").read_text())
    report = verify(op, op / "silu_impl.py", settings=_settings(), unseen_seed=3)
    assert report.verdict == "FAIL_NUMERIC", (report.verdict, report.reasons[:3])
    assert not [r for r in report.reasons if "is constant but" in r]
    (op / "silu_impl.py").write_text((HOSTILE / "return_zeros.py").read_text())
    assert verify(op, op / "silu_impl.py", settings=_settings(), unseen_seed=3).verdict == "FAIL_CHEAT"
