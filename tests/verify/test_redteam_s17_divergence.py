"""Red team s17, c11 and c16: the emulator warned that the device computes something else, and verify said PASS.

A sum on a BF16 tile (``EMU_SUM_FP32``: the device sums in FP32 only): the emulator warns, then computes the
mathematically right answer, so the comparison passed on numbers no device produces. The emulator's lists of such
codes (``runtime.emulator._errors.DEVICE_DIVERGENT``, and ``DEVICE_DIVERGENT_020`` for what only the 0.2.0 toolchain
gets wrong: ``pypto.sigmoid`` of a partial tile, ``EMU_SIGMOID_VALID``) make the verdict FAIL_NUMERIC, with a reason
naming the op, the line and what the device does. Under ``head`` the sigmoid stays a warning: the gym's own sigmoid
kernel, which its vendor runs on devices, does exactly that.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from verify_helpers import KERNELS, make_op, settings

from runtime.verify import VerifySettings, verify

ROOT = Path(__file__).resolve().parents[2]


def _codes() -> dict[str, str]:
    from runtime.emulator import _errors

    return {**_errors.DEVICE_DIVERGENT, **_errors.DEVICE_DIVERGENT_020}


def _for(target: str) -> VerifySettings:
    return dataclasses.replace(settings(), pypto_target=target)


def test_the_emulator_defines_one_list_of_device_divergent_codes() -> None:
    codes = _codes()
    assert {"EMU_SIGMOID_VALID", "EMU_SUM_FP32"} <= set(codes)
    sources = "".join(p.read_text() for p in (ROOT / "runtime" / "emulator").rglob("*.py"))
    docs = (ROOT / "docs" / "emulator-fidelity.md").read_text()
    for code, what in codes.items():
        assert re.search(rf"warn\(\s*\"{code}\"", sources), f"{code} is never warned by the emulator"
        assert code in docs, f"{code} is not in docs/emulator-fidelity.md"
        assert what.strip()
    verification = (ROOT / "docs" / "verification.md").read_text()
    assert all(code in verification for code in codes)


def test_sigmoid_on_a_partial_tile_fails_for_0_2_0_naming_the_op_and_line(tmp_path: Path) -> None:
    text = (KERNELS / "s17_c16_sigmoid_partial_tile.py").read_text()
    op = make_op(tmp_path, "silu", {"silu_impl.py": text})
    head = verify(op, op / "silu_impl.py", settings=_for("head"), unseen_seed=31)
    assert head.verdict == "PASS", head.reasons[:3]
    assert [d for d in head.diagnostics if d.get("code") == "EMU_SIGMOID_VALID"]
    report = verify(op, op / "silu_impl.py", settings=_for("0.2.0"), unseen_seed=31)
    line = 1 + text.splitlines().index("        yf = xf * pypto.sigmoid(xf)")
    assert report.verdict == "FAIL_NUMERIC", report.reasons[:3]
    assert all(c.status == "pass" for c in report.cases)  # the emulator's numbers are right; the device's are not
    assert [r for r in report.reasons if r.startswith("device divergence EMU_SIGMOID_VALID: pypto.sigmoid at "
                                                      f"silu_impl.py:{line}: the real 0.2.0 toolchain")], report.reasons


def test_a_sum_on_a_bf16_tile_fails(tmp_path: Path) -> None:
    op = make_op(tmp_path, "silu_bf16", {"silu_impl.py": (KERNELS / "s17_c11_sum_on_bf16.py").read_text()})
    report = verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=31)
    assert report.verdict == "FAIL_NUMERIC", report.reasons[:3]
    assert any(r.startswith("device divergence EMU_SUM_FP32: pypto.sum at silu_impl.py:") and "FP32 only" in r
               for r in report.reasons), report.reasons


@pytest.mark.slow  # over ~6 s of a 2-core CI (session 21's budget cut; `make test-all` runs it)
def test_the_honest_fixtures_pass_and_a_failing_kernel_keeps_its_report(tmp_path: Path) -> None:
    """A kernel that fails already gets no extra reason (the shipped traces' failing attempts replay unchanged);
    the warning stays in its diagnostics."""
    for fixture in ("silu", "silu_bf16"):
        op = make_op(tmp_path / "ok", fixture)
        report = verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=31)
        assert report.verdict == "PASS", (fixture, report.reasons[:3])
        assert not [r for r in report.reasons if "device divergence" in r]
    text = (KERNELS / "s17_c16_sigmoid_partial_tile.py").read_text().replace("yf = xf * pypto.sigmoid(xf)",
                                                                            "yf = xf * pypto.sigmoid(xf) * 1.01")
    op = make_op(tmp_path / "bad", "silu", {"silu_impl.py": text})
    report = verify(op, op / "silu_impl.py", settings=_for("0.2.0"), unseen_seed=31)
    assert report.verdict == "FAIL_NUMERIC"
    assert not [r for r in report.reasons if "device divergence" in r]
    assert [d for d in report.diagnostics if d.get("code") == "EMU_SIGMOID_VALID"]


def test_the_device_derives_the_sum_and_scalar_warnings_from_the_program_alone(tmp_path: Path) -> None:
    """The device process never sees the tracer: it says EMU_SUM_FP32 / EMU_SCALAR_INF from the executed ops, with
    the tracer's code, line and message (an in-process run lists each once)."""
    import importlib.util

    import ml_dtypes
    import numpy as np

    import runtime.emulator as emu
    from runtime.emulator.device import execute

    emu.install()
    src = tmp_path / "diverging.py"
    src.write_text(
        "import pypto\n\n\n@pypto.frontend.jit\n"
        "def kernel(x: pypto.Tensor([16, 64], pypto.DT_BF16), o: pypto.Tensor([16, 1], pypto.DT_BF16)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n"
        "    y = pypto.mul(x, float('inf'))\n"
        "    pypto.assemble(pypto.sum(y, dim=-1, keepdim=True), [0, 0], o)\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("diverging", src)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = np.ones((16, 64), ml_dtypes.bfloat16)
    with emu.session() as s:
        mod.kernel(x, np.zeros((16, 1), ml_dtypes.bfloat16))
    traced = sorted((d.code, d.message, d.line) for d in s.diagnostics)
    assert [c for c, _, _ in traced] == ["EMU_SCALAR_INF", "EMU_SUM_FP32"]
    program = mod.kernel.last_program
    assert program is not None
    res = execute(program, [x.copy(), np.zeros((16, 1), ml_dtypes.bfloat16)])
    assert sorted((w.code, w.message, w.line) for w in res.warnings) == traced


def test_a_warning_the_candidate_process_dropped_still_fails_from_the_device(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The child's own diagnostics are gone (as if the candidate stripped them from its session): the device's
    record still carries EMU_SUM_FP32, and the verdict is the same FAIL_NUMERIC."""
    from runtime.verify import _engine

    merged = _engine.with_device_warnings
    monkeypatch.setattr(_engine, "with_device_warnings", lambda diagnostics, device: merged([], device))
    op = make_op(tmp_path, "silu_bf16", {"silu_impl.py": (KERNELS / "s17_c11_sum_on_bf16.py").read_text()})
    report = verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=31)
    assert report.verdict == "FAIL_NUMERIC", report.reasons[:3]
    assert any(r.startswith("device divergence EMU_SUM_FP32: pypto.sum at silu_impl.py:") for r in report.reasons)
    child = [{"code": "EMU_SUM_FP32", "message": "m", "file": "f", "line": 3}]
    device = {"kernels": [{"warnings": [{"code": "EMU_SUM_FP32", "message": "m", "file": "/tmp/x/f", "line": 3}]}]}
    assert merged(list(child), device) == child  # the same warning from both sides is listed once
