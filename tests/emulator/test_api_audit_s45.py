"""Session-45 API audit (bench/api_audit.py; table in docs/emulator-fidelity.md, "API audit, session 45").

Every API / statement form of shared/spec/pypto-api.md §1-§6 and §8 has a probe kernel there; each must give the
spec's outcome (the numpy reference, or a clear error where the spec says the toolchain raises) and never a raw
Python exception from inside the emulator. Two forms failed the audit and are fixed here: ``pypto.atomic_add``
(``EMU_UNSUPPORTED`` before) and ``pypto.axpy_`` (an ``AttributeError`` of the module before), the HEAD in-place
writes of spec §4.3 (runtime/emulator/_ops_head.py).
"""

import importlib.util
import inspect
import logging
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()
F32 = pypto.DT_FP32
AUDIT = Path(__file__).resolve().parents[2] / "bench" / "api_audit.py"
RNG = np.random.default_rng(4545)
HAVE_TORCH = importlib.util.find_spec("torch") is not None
"""the README's `make test` venv has no torch: the probes of torch tensors as kernel arguments then cannot run"""


@pytest.fixture(scope="module")
def audit() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_audit", AUDIT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _uses_torch(p) -> bool:
    """A probe that builds torch tensors (torch dtypes as kernel arguments, 0-d and in-place scatter on torch)."""
    return "import torch" in inspect.getsource(p.run) and p.expect == "ok"


def _wrong(audit, probes) -> dict:
    wrong = {}
    for p in probes:
        verdict, detail = audit.classify(p)
        ok = {"ok": verdict.startswith("ok"), "error": verdict in ("error", "unsupported")}.get(p.expect, True)
        if not ok or verdict == "CRASH":
            wrong[p.name] = (p.expect, verdict, detail)
    return wrong


def test_every_audited_form_gives_the_spec_outcome_and_none_crashes(audit, caplog):
    """The whole audit but the probes that need torch: 286 probes, each as the spec says (before s45: atomic_add
    and axpy_ did not run, and `loop_unroll(..., unroll_list=[0])` was a ZeroDivisionError from inside the
    emulator)."""
    caplog.set_level(logging.ERROR)
    assert len(audit.PROBES) >= 286
    assert not _wrong(audit, [p for p in audit.PROBES if not _uses_torch(p)])


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (the README's make test venv): the audit's probes "
                    "of torch tensors as kernel arguments need it")
def test_the_audited_forms_on_torch_tensors(audit, caplog):
    caplog.set_level(logging.ERROR)
    torch_probes = [p for p in audit.PROBES if _uses_torch(p)]
    assert len(torch_probes) >= 3
    assert not _wrong(audit, torch_probes)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _run(kernel, *args, compat: str = "head") -> None:
    with emu.session(emu.Options(compat=compat)):
        kernel(*args)


def test_atomic_add_accumulates_every_iteration_into_the_window():
    """Split-K style: two iterations add their partial into the same window of the output (was EMU_UNSUPPORTED)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8, 16], F32), out: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop(4):
            part = pypto.reshape(pypto.view(x, [1, 8, 16], [i, 0, 0]), [8, 16])
            pypto.atomic_add(part * 2.0, [0, 0], out)

    x, out = _rand(4, 8, 16), _rand(8, 16)
    want = out.copy()
    for i in range(4):
        want = want + x[i] * np.float32(2.0)
    _run(k, x, out)
    np.testing.assert_array_equal(out, want)


def test_atomic_add_writes_only_the_valid_region_at_the_offsets():
    """A tail tile with valid_shape adds only its valid rows; the rest of the output keeps its value."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], F32), out: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 4)):
            v = (n - i * 4).min(4)
            t = pypto.view(x, [4, 16], [i * 4, 0], valid_shape=[v, 16])
            pypto.atomic_add(t + 1.0, [2, 0], out)

    x, out = _rand(6, 16), _rand(8, 16)
    want = out.copy()
    want[2:6] = want[2:6] + (x[0:4] + np.float32(1.0))
    want[2:4] = want[2:4] + (x[4:6] + np.float32(1.0))
    _run(k, x, out)
    np.testing.assert_array_equal(out, want)


def test_axpy_updates_y_in_place_and_returns_it():
    """`axpy_(y, x, alpha)`: y + alpha*x written into y (was AttributeError: module 'pypto' has no attribute)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], F32), y: pypto.Tensor([8, 16], F32), out: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        r = pypto.axpy_(y, x, 0.5)
        out[:] = r + 1.0

    x, y, out = _rand(8, 16), _rand(8, 16), np.zeros((8, 16), np.float32)
    want = y + x * np.float32(0.5)
    _run(k, x, y, out)
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(out, want + np.float32(1.0))


def _file_kernel(tmp_path, tile: str, form: str):
    src = tmp_path / f"k{abs(hash((tile, form)))}.py"
    src.write_text("import pypto\n\n@pypto.frontend.jit\n"
                   "def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):\n"
                   f"    {tile}\n    {form}\n")
    ns: dict = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)  # noqa: S102 - the test's own kernel
    return ns["k"]


@pytest.mark.parametrize(("tile", "form", "compat", "code", "text"), [
    ("pypto.set_vec_tile_shapes(8, 16)", "pypto.atomic_add(x * 1.0, [0, 0], out)", "0.2.0", "F0FFFF",
     "has no attribute 'atomic_add'"),
    ("pypto.set_vec_tile_shapes(8, 16)", "pypto.axpy_(out, x, 2.0)", "0.2.0", "F0FFFF", "has no attribute 'axpy_'"),
    ("pass", "pypto.atomic_add(x, [0, 0], out)", "head", "F21004", "[ATOMIC_ADD]"),
])
def test_head_writes_are_absent_from_0_2_0_and_atomic_add_needs_a_tile(tmp_path, tile, form, compat, code, text):
    """The 0.2.0 wheel has neither name (AttributeError naming it, at the kernel line); without a vec tile the
    atomic write is F21004 naming ATOMIC_ADD, never a traceback from inside the emulator."""
    with pytest.raises(emu.EmulatorError) as info:
        _run(_file_kernel(tmp_path, tile, form), _rand(8, 16), _rand(8, 16), compat=compat)
    assert info.value.code == code and text in info.value.message and info.value.line == 6, info.value


@pytest.mark.parametrize("factors", ["[0]", "[4, 0]", "[-2, 1]"])
def test_loop_unroll_refuses_a_factor_that_is_not_positive(tmp_path, factors):
    """A 0 factor divided by zero inside the emulator's unroll algorithm (a raw ZeroDivisionError); now a ValueError
    naming loop_unroll at the kernel's line."""
    body = (f"for i, u in pypto.loop_unroll(0, 8, 1, unroll_list={factors}):\n"
            "        out[i:i + u, :] = x[i:i + u, :]")
    with pytest.raises(emu.EmulatorError) as info:
        _run(_file_kernel(tmp_path, "pypto.set_vec_tile_shapes(8, 16)", body), _rand(8, 16), _rand(8, 16))
    assert info.value.kind == "ValueError" and "unroll_list factors must be positive" in info.value.message
    assert info.value.line == 6 and not isinstance(info.value.__cause__, ZeroDivisionError)
