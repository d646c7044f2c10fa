"""Op x dtype pairs the real 0.2.0 frontend refuses are refused here too (`_wheel_dtypes`), their neighbours run.

Each case is a small kernel calling one op on one dtype; where the wheel is installed the same kernels are compiled
by it (SIM) and must be refused at the call (frontend stage) or accepted as recorded.
"""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

from runtime.emulator._wheel_dtypes import REFUSED

try:
    from runtime.toolchain import find_pypto_python

    WHEEL_PYTHON = find_pypto_python()
except Exception:  # noqa: BLE001 - a misconfigured toolchain variable: the wheel checks are skipped
    WHEEL_PYTHON = None

_PROBE = '''import ml_dtypes
import numpy as np
import pypto

NP = {{"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16, "INT32": np.int32, "INT16": np.int16,
      "INT8": np.int8, "UINT8": np.uint8, "BOOL": np.bool_}}


@pypto.frontend.jit
def kernel(a: pypto.Tensor([4, 32], pypto.DT_{dt}), b: pypto.Tensor([4, 32], pypto.DT_{dt}),
           out: pypto.Tensor([4, 32], pypto.DT_{odt})):
    pypto.set_vec_tile_shapes(4, 32)
    for i in pypto.loop(1, name="rows", idx_name="i"):
        ta = pypto.view(a, [4, 32], [0, 0])
        tb = pypto.view(b, [4, 32], [0, 0])
        r = {expr}
        pypto.assemble(r, [0, 0], out)


def run():
    rng = np.random.default_rng(3)
    a = rng.uniform(1, 4, (4, 32)).astype(NP["{dt}"])
    b = rng.uniform(1, 4, (4, 32)).astype(NP["{dt}"])
    kernel(a, b, np.zeros((4, 32), NP["{odt}"]))
'''
_LINE = 16
"""the line of ``r = ...`` in the probe"""


def _expr(key: str) -> str:
    op, _, form = key.partition(":")
    if op == "cumsum":
        return "pypto.cumsum(ta, 1)"
    if op == "clip":
        return "pypto.clip(ta, 1, 3)" if form else "pypto.clip(ta, tb, tb)"
    if form:
        return f"pypto.{op}(ta, 1)"
    binary = op in ("copysign", "pow", "gcd", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor",
                    "bitwise_left_shift", "bitwise_right_shift")
    return f"pypto.{op}(ta, tb)" if binary else f"pypto.{op}(ta)"


def _case(key: str, dt: str) -> tuple[str, str, str]:
    odt = "BOOL" if key == "logical_not" else dt
    return key, dt, _PROBE.format(dt=dt, odt=odt, expr=_expr(key))


REFUSED_CASES = sorted((key, d.name.removeprefix("DT_")) for key, dts in REFUSED.items() for d in dts)
ACCEPTED_CASES = [("clip:scalar", "BF16"), ("pow:scalar", "INT16"), ("maximum", "INT8"), ("log", "FP32"),
                  ("round", "INT16"), ("pow", "INT32"), ("logical_not", "INT8"), ("cumsum", "FP16"), ("exp", "INT32")]
"""neighbours of refused pairs the wheel accepts (probed with the refused ones)"""


def _run(tmp_path: Path, key: str, dt: str, compat: str) -> Any:
    import runtime.emulator as emu

    emu.install()
    p = tmp_path / f"{key.replace(':', '_')}_{dt}.py"
    p.write_text(_case(key, dt)[2])
    with emu.session(options=emu.Options(compat=compat)):
        runpy.run_path(str(p))["run"]()


@pytest.mark.parametrize("key,dt", REFUSED_CASES)
def test_a_pair_the_wheel_refuses_is_refused_at_the_call(tmp_path: Path, key: str, dt: str) -> None:
    import runtime.emulator as emu

    with pytest.raises(emu.EmulatorError) as info:
        _run(tmp_path, key, dt, "0.2.0")
    assert (info.value.code, info.value.line) == ("FC0001", _LINE), info.value


@pytest.mark.parametrize("key,dt", ACCEPTED_CASES)
def test_its_neighbours_the_wheel_accepts_still_run(tmp_path: Path, key: str, dt: str) -> None:
    _run(tmp_path, key, dt, "0.2.0")


def test_under_head_only_pairs_outside_the_documented_dtypes_are_refused(tmp_path: Path) -> None:
    import runtime.emulator as emu

    with pytest.raises(emu.EmulatorError):
        _run(tmp_path, "log", "INT32", "head")  # documented float-only, and refused by 0.2.0
    _run(tmp_path, "clip", "BF16", "head")  # documented, refused by 0.2.0 only: HEAD may take it


@pytest.mark.parametrize("key,dt", [("bitwise_and", "FP32"), ("bitwise_not", "BF16")])
def test_bit_ops_on_float_tiles_are_refused_as_not_emulated(tmp_path: Path, key: str, dt: str) -> None:
    """The 0.2.0 frontend takes them; what the device computes on float bits is unknown: a clear refusal, not the
    numpy error of the run (it was ``EMU_RUNTIME: TypeError: ufunc 'invert' not supported``)."""
    import runtime.emulator as emu

    with pytest.raises(emu.EmulatorUnsupported) as info:
        _run(tmp_path, key, dt, "head")
    assert info.value.line == _LINE and "not emulated" in info.value.message


@pytest.mark.slow
@pytest.mark.skipif(WHEEL_PYTHON is None, reason="the real pypto 0.2.0 wheel is not installed")
def test_the_refusals_and_acceptances_are_the_wheels(tmp_path: Path) -> None:
    from runtime.toolchain import run_scripts

    cases = [(c, True) for c in REFUSED_CASES] + [(c, False) for c in ACCEPTED_CASES]
    scripts = []
    for i, ((key, dt), _) in enumerate(cases):
        p = tmp_path / f"p{i:03d}.py"
        p.write_text(_case(key, dt)[2])
        scripts.append(p)
    for ((key, dt), refused), out, script in zip(cases, run_scripts(scripts, python=str(WHEEL_PYTHON)), scripts,
                                                 strict=True):
        if (out.status, out.stage) != (("rejected", "frontend") if refused else ("accepted", out.stage)):
            # a refusal earlier in the batch can leave the wheel's controller in a state where a later kernel fails
            # elsewhere (gcd FP16 once came out F21004 at compile after the batch's others): its verdict alone
            [out] = run_scripts([script], python=str(WHEEL_PYTHON))
        if refused:
            assert (out.status, out.stage, out.line) == ("rejected", "frontend", _LINE), (key, dt, out)
        else:
            assert out.status == "accepted", (key, dt, out)
