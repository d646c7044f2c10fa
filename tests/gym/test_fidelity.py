"""Fidelity probes: each records what the real pypto toolchain does with a gym construct, under both targets.

Every probe in ``fidelity_probes/`` is an unmodified PyPTO script printing one ``RESULT`` line (and, for the
emulator, a ``VALUE`` line with the largest error against a numpy reference). ``REAL`` holds the outcome the
real pypto 0.2.0 wheel gave, recorded on this machine with
``cd /tmp/x && HOME=/tmp/x .venv/bin/python tests/gym/fidelity_probes/<probe>.py`` (the toolchain extra:
pypto 0.2.0, ``RunMode.SIM``, torch 2.13.0 CPU); the emulator must give the same under ``--compat 0.2.0``.
``HEAD`` holds where the HEAD target differs (``t*`` probes: one per row of the target table in
docs/emulator-fidelity.md; the HEAD outcome comes from the HEAD sources/docs, spec/pypto-api.md §0.2); every
other probe must give its 0.2.0 outcome under HEAD too. SIM compiles the kernel and runs a cost model but writes
no numbers (spec/pypto-api.md §0.3): it tells accept/reject and the error kind, never the values. Where a value
matters, the emulator's numbers are checked against numpy here instead. ``bench/crosscheck_pypto.py --probes
tests/gym/fidelity_probes`` re-runs the comparison against the real wheel.

The probes of one target run in one emulator process (``-c`` running each with ``runpy``): a process per probe
cost a torch import each.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

PROBES = Path(__file__).parent / "fidelity_probes"
HAS_TORCH = importlib.util.find_spec("torch") is not None
FP8_PROBES = {"f10_fp8_matmul_needs_dav_3510", "f11_fp8_kernel_argument", "t03_matmul_int8_output"}  # torch float8

# probe -> outcome of the real pypto 0.2.0 SIM (NpuArch 2201, the wheel's platform), normalised as
# bench/crosscheck_pypto.py does: "ok", the toolchain error code (FC0000, F21004 ...) when it gives one, else the
# Python exception type ("ParserError" for the parser's own RenderedParserError)
REAL: dict[str, str] = {
    "f01_move_rank_differs": "ok",
    "f01b_move_flatten_4x16_into_64": "ok",
    "f02_reshape_symbolic": "TypeError",  # 0.2.0: Reshape() dstShape must be ints (HEAD accepts symbols)
    "f03_poison_final_ok": "ok",  # values: SIM cannot tell; the emulator's are checked against numpy
    "f04_broadcast_lower_rank": "ok",
    "f04b_broadcast_two_axes_expanded": "FC0000",  # "Only allow to expand one axis! ... count: 2"
    "f04c_broadcast_issue_2x2_with_2": "ok",
    "f05_batched_matmul_no_vec_tiles": "ok",
    "f05b_batched_matmul_4d_no_vec_tiles": "ok",
    "f05c_matmul_then_vec_op_needs_vec_tiles": "F21004",  # "op [A_MUL_B]tile shape not set"
    "f06_raise_in_pruned_branch": "ok",
    "f06b_raise_in_taken_branch": "ParserError",  # "Raise is not supported by the PTO parser yet"
    "f06c_raise_in_runtime_branch": "ParserError",
    "f07_dynamic_loop_add_scalar": "ok",
    "f07b_dynamic_loop_builtin_min": "ValueError",  # "Not concrete value" (HEAD evaluates builtin min on symbols)
    "f08_whole_param_read_bytes": "ok",
    "f09_reshape_without_tile": "ok",  # a non-inplace reshape is not checked against the vec tile (issue #25)
    "f09b_reshape_under_lower_rank_tile": "ok",  # ... nor against a tile of another rank (the gym's llada2)
    "f10_fp8_matmul_needs_dav_3510": "FC3000",  # "... only DAV_3510 architecture is supported."
    "f11_fp8_kernel_argument": "ok",  # torch.float8_e4m3fn tensors are kernel arguments
    "f12_matmul_without_out_dtype": "TypeError",  # "matmul() missing 1 required positional argument: 'out_dtype'"
    "f13_pad_two_values_on_2d": "FC0000",  # "Pad: only support last 2 axis pad." (s29: four values on rank >= 2)
    "f13b_pad_right_and_bottom": "ok",
    "f13c_pad_1d_four_values": "FC0000",  # "Pad: 1D tensor only support 2 padding values."
    "f14_clip_tensor_min_scalar_max": "TypeError",  # "Clip(): incompatible function arguments"
    "f15_view_into_output_unaligned_tile": "ParserError",  # bare "CHECK FAILED: lastDimBytes % BLOCK_SIZE == 0"
    "f15b_view_into_output_aligned_tile": "ok",
    "f15c_reshape_then_compute_unaligned_tile": "ok",
    "f15d_reshape_tile_at_the_reshape_decides": "ParserError",  # the tile at the reshape, not at the move
    "f15e_view_into_output_no_tile": "F21004",  # "op [REGISTER_COPY]tile shape not set" (difftest k0068)
    "f15f_view_without_tile_written_after_one": "ok",  # the copy takes the tile in effect at the write
    "f16_row_sum_tile_over_the_vector_buffer": "FFFFFF",  # "ROWSUM_SINGLE ... [247040] exceeds MEM_UB size"
    "f16b_row_sum_tile_clipped_to_the_tensor": "ok",
    "f17_argsort_along_axis_0": "ok",  # and sorted along axis 0 (the emulator sorted the last axis before s29)
    "f17b_argsort_tile_not_a_multiple_of_32": "FC1001",  # "... along axis 1 must be a multiple of 32. Got 16."
    "f18_lambda_assigned_then_called": "ParserError",  # "'Assign' object has no attribute 'decorator_list'"
    "f18b_lambda_called_in_place": "ok",
    "t01_head_runtime_option": "IndexError",  # map::at: max_workspace_kb is HEAD-only
    "t02_head_only_api_name": "AttributeError",  # module 'pypto' has no attribute 'tanh'
    "t03_matmul_int8_output": "FC3002",  # "Unsupported output data type. Only DT_FP32, DT_FP16, DT_BF16, DT_INT32"
}
# probe -> (outcome under the HEAD target, extra runner flags) where it differs from 0.2.0
HEAD: dict[str, tuple[str, tuple[str, ...]]] = {
    "f02_reshape_symbolic": ("ok", ()),  # symbolic dims in reshape
    "f04b_broadcast_two_axes_expanded": ("ok", ()),  # multi-axis broadcast (warns EMU_BROADCAST)
    "f07b_dynamic_loop_builtin_min": ("ok", ()),  # builtin 2-arg min/max on symbols -> pypto.min/max
    "t01_head_runtime_option": ("ok", ()),  # max_workspace_kb, device_sched_parallelism, launch_*
    "t02_head_only_api_name": ("ok", ()),  # trig/hyperbolic, erf, argmax ... (runtime.emulator._module.HEAD_ONLY)
    "t03_matmul_int8_output": ("ok", ("--npuarch", "DAV_3510")),  # FP8 -> INT8 fixpipe quantisation (Ascend 950)
    "f10_fp8_matmul_needs_dav_3510": ("ok", ("--npuarch", "DAV_3510")),  # not a target difference: the arch
}
_CODE = re.compile(r"\b(F[0-9A-F]{5}|FC[0-9A-F]{4}|FFFFFF)\b")
_PYERR = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")
_WRAPPERS = {"RenderedParserError", "EmulatorError"}

# runs each probe given on the command line with runpy, printing its name, then its output
_BATCH = """
import contextlib, io, runpy, sys
for path in sys.argv[1:]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            runpy.run_path(path, run_name="__main__")
        except BaseException as e:
            print("RESULT", type(e).__name__, str(e)[:300].replace("\\n", " | "))
    print("PROBE " + path.rsplit("/", 1)[-1][:-3] + " " + __import__("json").dumps(buf.getvalue()))
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}


def _emulate(probe: str, *flags: str) -> tuple[str, str, str]:
    proc = subprocess.run([sys.executable, "-m", "runtime.emulator", *flags, str(PROBES / f"{probe}.py")],
                          capture_output=True, text=True, timeout=120, check=False, env=_env())
    result = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")), "RESULT (none)")
    value = next((ln for ln in proc.stdout.splitlines() if ln.startswith("VALUE")), "")
    return result, value, proc.stderr


@cache
def _batch(flags: tuple[str, ...], probes: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """probe -> (RESULT line, VALUE line) for the probes run in one emulator process with these flags."""
    paths = [str(PROBES / f"{p}.py") for p in probes]
    proc = subprocess.run([sys.executable, "-m", "runtime.emulator", *flags, "-c", _BATCH, *paths],
                          capture_output=True, text=True, timeout=600, check=False, env=_env())
    out: dict[str, tuple[str, str]] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("PROBE "):
            name, text = line[len("PROBE "):].split(" ", 1)
            lines = json.loads(text).splitlines()
            out[name] = (next((ln for ln in lines if ln.startswith("RESULT")), "RESULT (none)"),
                         next((ln for ln in lines if ln.startswith("VALUE")), ""))
    assert set(out) == set(probes), proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


def _kind(result: str) -> str:
    """The outcome of a RESULT line in REAL's terms (F0xxxx codes are HEAD's Python-kind codes, not native)."""
    if result.strip() == "RESULT ok":
        return "ok"
    codes = [c for c in _CODE.findall(result) if not c.startswith("F0")]
    if codes:
        return codes[0]
    types = [t for t in _PYERR.findall(result) if t not in _WRAPPERS]
    return types[0] if types else "ParserError"


def _runnable(probe: str) -> bool:
    return HAS_TORCH or probe not in FP8_PROBES


def _skip_without_torch(probe: str) -> None:
    if not _runnable(probe):
        pytest.skip("the probe passes torch.float8_e4m3fn tensors; torch is not installed")


def test_every_probe_has_a_recorded_real_outcome() -> None:
    assert sorted(p.stem for p in PROBES.glob("[ft]*.py")) == sorted(REAL)
    assert set(HEAD) <= set(REAL)
    assert all(p.startswith("t") for p in REAL if p.startswith("t") and p in HEAD) and all(
        p in HEAD for p in REAL if p.startswith("t")), "every t* probe is a row of the target table"


@pytest.mark.slow  # every recorded probe
@pytest.mark.parametrize("probe", sorted(REAL))
def test_emulator_agrees_with_the_real_0_2_0(probe: str) -> None:
    _skip_without_torch(probe)
    result, value = _batch(("--compat", "0.2.0"), tuple(p for p in sorted(REAL) if _runnable(p)))[probe]
    assert _kind(result) == REAL[probe], result
    if value:  # the real SIM writes no numbers; the emulator's must be right
        assert float(value.split()[1]) < 1e-5, value


@pytest.mark.parametrize("probe", [pytest.param(p, marks=pytest.mark.slow) if p == "f04_broadcast_lower_rank" else p
                                   for p in sorted(REAL)])
def test_emulator_follows_head_where_head_differs(probe: str) -> None:
    _skip_without_torch(probe)
    expected, flags = HEAD.get(probe, (REAL[probe], ()))
    same_flags = tuple(p for p in sorted(REAL) if _runnable(p) and HEAD.get(p, ("", ()))[1] == flags)
    result, value = _batch(flags, same_flags)[probe]  # the default target is head: no --compat
    assert _kind(result) == expected, result
    if value:
        assert float(value.split()[1]) < 1e-5, value


def test_whole_parameter_reads_count_as_bytes_in() -> None:
    """f08: ``pypto.add(x, y)`` on whole [8, 16] fp32 parameters reads 2 x 512 bytes from GM. The counter is the
    emulator's own cost estimate: the real SIM has no such counter to compare with (its cost model reports
    cycles), so the expected figure is the arithmetic one."""
    result, _, err = _emulate("f08_whole_param_read_bytes")
    assert result == "RESULT ok", err
    line = next(ln for ln in err.splitlines() if ln.startswith("[emulator]"))
    assert "bytes in 1024," in line and "bytes out 512," in line, line


def _kernel_module(tmp_path: Path, name: str, source: str) -> Any:
    """``source`` written to ``tmp_path/<name>.py`` and imported under the emulated ``pypto``."""
    import runtime.emulator as emu

    emu.install()
    (tmp_path / f"{name}.py").write_text(source)
    spec = importlib.util.spec_from_file_location(name, tmp_path / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BIAS_KERNEL = """import pypto


@pypto.frontend.jit
def k(x: pypto.Tensor([16, 8], pypto.DT_FP32), b: pypto.Tensor([1, 8], pypto.DT_FP32),
      out: pypto.Tensor([16, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 8)
    for i in pypto.loop(16, name="r", idx_name="i"):
        row = pypto.view(x, [1, 8], [i, 0])
        pypto.assemble(pypto.add(row, b), [i, 0], out)
"""


def test_bytes_in_are_the_same_batched_and_per_iteration(tmp_path: Path) -> None:
    """Whole-parameter reads inside a loop count once per iteration, on the batched fast path as well."""
    import numpy as np

    import runtime.emulator as emu

    mod = _kernel_module(tmp_path, "bias_kernel", BIAS_KERNEL)
    x = np.random.default_rng(0).random((16, 8), dtype=np.float32)
    bias = np.ones((1, 8), np.float32)
    got = []
    for record in (False, True):  # record=True disables the batched path
        out = np.zeros((16, 8), np.float32)
        with emu.session(emu.Options(record=record)) as s:
            mod.k(x, bias, out)
        np.testing.assert_allclose(out, x + 1)
        got.append((s.counters.bytes_in, s.counters.batched_iterations))
    assert got[0][0] == got[1][0] == 16 * 32 + 16 * 32  # 16 row views + 16 whole reads of b
    assert got[0][1] > 0 and got[1][1] == 0


@pytest.mark.slow  # over ~6 s of a 2-core CI (session 21's budget cut; `make test-all` runs it)
def test_per_iteration_poison_check_is_the_strict_switch() -> None:
    """The default checks the final output (correct here); --poison-check iteration rejects the transient."""
    result, _, _ = _emulate("f03_poison_final_ok", "--poison-check", "iteration")
    assert "EMU_POISON" in result
    result, _, _ = _emulate("f03_poison_final_ok", "--poison-check", "off")
    assert result == "RESULT ok"



POISON_SPEC = """---
op_name: rows2
inputs:
  - {name: x, shape: [8, 16], dtype: fp32, range: [-2.0, 2.0]}
outputs:
  - {name: y, shape: [8, 16], dtype: fp32}
p0_shapes: [{}]
supported_dtypes: [fp32]
tolerance: {fp32: {atol: 1.0e-6, rtol: 1.0e-6}}
---
double every row
"""
POISON_GOLDEN = '''# Golden function inventory
# | # | Golden operation | Shape transformation |
# |---|---|---|
# | 1 | x * 2 | [8,16] -> [8,16] |
import numpy as np


def golden(x):
    return (x * np.float32(2.0)).astype(x.dtype)
'''
# the output is rewritten in every iteration from a buffer filled row by row: poisoned rows reach it in iterations
# 0..6, the last write is complete. LAST_ROWS < 8 leaves poison in the final output.
POISON_KERNEL = '''import numpy as np
import pypto


@pypto.frontend.jit
def rows2_kernel(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    buf = pypto.tensor([8, 16], pypto.DT_FP32)
    for i in pypto.loop(LAST_ROWS, name="rows", idx_name="i"):
        row = pypto.view(x, [1, 16], [i, 0])
        pypto.assemble(pypto.mul(row, 2.0), [i, 0], buf)
        y[:] = pypto.mul(buf, 1.0)


def rows2_wrapper(x):
    y = np.zeros_like(x)
    rows2_kernel(x, y)
    return y
'''


def _poison_op(tmp_path: Path, rows: int) -> Path:
    d = tmp_path / "rows2"
    d.mkdir()
    (d / "SPEC.md").write_text(POISON_SPEC)
    (d / "golden.py").write_text(POISON_GOLDEN)
    (d / "rows2_impl.py").write_text(POISON_KERNEL.replace("LAST_ROWS", str(rows)))
    return d


def test_verifier_checks_poison_on_the_final_outputs_not_per_iteration(tmp_path: Path) -> None:
    """Transient poison in an output whose final contents are correct is not a failure (the device's output is
    what counts); the emulator's library default, which the verifier uses, is the final check."""
    from runtime.emulator import Options
    from runtime.verify import verify

    assert Options().poison_check == "final"
    d = _poison_op(tmp_path, 8)
    report = verify(d, d / "rows2_impl.py")
    assert report.verdict == "PASS", report.reasons


def test_verifier_still_rejects_poison_left_in_the_final_output(tmp_path: Path) -> None:
    from runtime.verify import verify

    d = _poison_op(tmp_path, 7)  # row 7 is never written: the output keeps uninitialized data
    report = verify(d, d / "rows2_impl.py")
    assert report.verdict != "PASS"
    assert "EMU_POISON" in report.model_dump_json(), report.reasons


def test_crosscheck_takes_a_relative_probes_folder(tmp_path: Path) -> None:
    """Surprise: `bench/crosscheck_pypto.py --probes tests/gym/fidelity_probes` (the documented command) ran every
    probe as a path relative to its temporary working directory, so nothing ran ("can't open file")."""
    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "p.py").write_text('print("RESULT ok")\n')
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}
    # this interpreter stands in for the real wheel's: the probe imports nothing
    proc = subprocess.run([sys.executable, str(root / "bench" / "crosscheck_pypto.py"), "--pypto-python",
                           sys.executable, "--probes", "probes"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False, env=env)
    assert "1/1 probes agree" in proc.stdout, proc.stdout + proc.stderr


RESHAPED_KERNEL = """import pypto


@pypto.frontend.jit
def k(x: pypto.Tensor([4, 32], pypto.DT_FP32), b: pypto.Tensor([8], pypto.DT_FP32),
      out: pypto.Tensor([16, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 8)
    x2 = pypto.reshape(x, [16, 8], inplace=True)
    b2 = pypto.unsqueeze(b, 0)
    for i in pypto.loop(16, name="r", idx_name="i"):
        row = pypto.view(x2, [1, 8], [i, 0])
        pypto.assemble(pypto.add(row, b2), [i, 0], out)
"""


def test_reads_through_a_reshape_of_an_argument_count_as_bytes_in(tmp_path: Path) -> None:
    """Session 47: bn_training_reduce reads its input through ``reshape(x, ..., inplace=True)`` and views of the
    result, and its cost line said ``bytes in 0`` (the counter, and the perf stage's estimate built on it, only
    knew the argument's own storage): an agent could lower its estimate by reading through a reshape. Views of a
    reshape, and whole reads of an ``unsqueeze``, of an argument now count as reads of it, batched or not."""
    import numpy as np

    import runtime.emulator as emu

    mod = _kernel_module(tmp_path, "reshaped_kernel", RESHAPED_KERNEL)
    x = np.random.default_rng(0).random((4, 32), dtype=np.float32)
    bias = np.arange(8, dtype=np.float32)
    got = []
    for record in (False, True):  # record=True disables the batched path
        out = np.zeros((16, 8), np.float32)
        with emu.session(emu.Options(record=record)) as s:
            mod.k(x, bias, out)
        np.testing.assert_array_equal(out, x.reshape(16, 8) + bias)
        got.append(s.counters.bytes_in)
    assert got == [16 * 32 + 16 * 32] * 2  # 16 row views of x + 16 whole reads of b
