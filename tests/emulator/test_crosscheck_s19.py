"""Acceptance fixes found by the s19 crosscheck probes (bench/crosscheck_probes/s19_*.py, 4 Dec 2026): each kernel
here is one the real pypto 0.2.0 wheel (RunMode.SIM) accepted or refused differently from the emulator under
``compat="0.2.0"``. The wheel's outcome is in each test's docstring; the emulator must now give the same."""

import ml_dtypes
import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()
F32, BF16 = pypto.DT_FP32, pypto.DT_BF16


def _run(kernel, *args, compat="0.2.0"):
    with emu.session(emu.Options(compat=compat)) as s:
        kernel(*args)
    return s


def _err(kernel, *args, compat="0.2.0") -> emu.EmulatorError:
    with pytest.raises(emu.EmulatorError) as info:
        _run(kernel, *args, compat=compat)
    return info.value


def _ones(*shape, dtype=np.float32):
    return np.ones(shape, dtype)


def test_binary_op_dtype_mismatch_is_fc0000():
    """Wheel: `Errcode: FC0000! The dtype of input tensors are not same.` (CheckBinaryInputTensors); was FC0001."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 32], F32), y: pypto.Tensor([16, 32], BF16), out: pypto.Tensor([16, 32], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = x * y

    e = _err(k, _ones(16, 32), _ones(16, 32, dtype=ml_dtypes.bfloat16), np.zeros((16, 32), np.float32))
    assert e.code == "FC0000" and "The dtype of input tensors are not same" in str(e)


def test_concat_dtype_mismatch_is_fc0000():
    """Wheel: `Errcode: FC0000! The dataType of all tensors should be equal` (CheckCat); was FC0001."""
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 32], F32), b: pypto.Tensor([16, 32], BF16), out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.concat([a, b], 1)

    e = _err(k, _ones(16, 32), _ones(16, 32, dtype=ml_dtypes.bfloat16), np.zeros((16, 64), np.float32))
    assert e.code == "FC0000"


def test_reshape_element_count_mismatch_is_a_runtime_error():
    """Wheel: `RuntimeError: CHECK FAILED: capacity == 1 ... Shape size not match`; inplace: `FFFFFF` (a pass);
    was ValueError for both."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], F32), out: pypto.Tensor([16, 16], F32)):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = pypto.reshape(x, [16, 16])

    @pypto.frontend.jit
    def k_inplace(x: pypto.Tensor([8, 64], F32), out: pypto.Tensor([16, 16], F32)):
        pypto.set_vec_tile_shapes(16, 16)
        r = pypto.reshape(x, [16, 16], inplace=True)
        out[:] = r * 1.0

    e = _err(k, _ones(8, 64), np.zeros((16, 16), np.float32))
    assert e.kind == "RuntimeError" and "Shape size not match" in str(e)
    assert _err(k_inplace, _ones(8, 64), np.zeros((16, 16), np.float32)).code == "FFFFFF"


def test_topk_k_larger_than_the_last_tile_axis_is_fc0000():
    """Wheel: `Errcode: FC0000! The k should less than or equal to32` (TiledTopK), for k=64 on a [8, 32] input
    with tile (8, 32) and for k=48 on [8, 64] with tile (8, 32) (k within the shape); was ValueError / ok."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], F32), v: pypto.Tensor([8, 48], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        val, _ = pypto.topk(x, 48, -1, True)
        v[:] = val

    e = _err(k, _ones(8, 64), np.zeros((8, 48), np.float32))
    assert e.code == "FC0000" and "The k should less than or equal to32" in str(e)


@pytest.mark.parametrize("form", ["float", "fp32_element"])
def test_where_float_scalar_with_a_bf16_tensor_runs_under_0_2_0(form):
    """Wheel: ok (its `where` wraps a float in an FP32 Element; the result keeps the tensor's dtype, BF16); was
    FC0001. HEAD (the docs reject it) still refuses it."""
    @pypto.frontend.jit
    def k_float(x: pypto.Tensor([16, 32], BF16), out: pypto.Tensor([16, 32], BF16)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = pypto.where(pypto.lt(x, 0.5), 0.25, x)

    @pypto.frontend.jit
    def k_elem(x: pypto.Tensor([16, 32], BF16), out: pypto.Tensor([16, 32], BF16)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = pypto.where(pypto.lt(x, 0.5), pypto.Element(pypto.DT_FP32, 0.25), x)

    k = k_float if form == "float" else k_elem
    x = np.linspace(0, 1, 16 * 32, dtype=np.float32).reshape(16, 32).astype(ml_dtypes.bfloat16)
    out = np.zeros((16, 32), ml_dtypes.bfloat16)
    s = _run(k, x, out)
    assert any(d.code == "EMU_SCALAR_DTYPE" for d in s.diagnostics)
    want = np.where(x.astype(np.float32) < 0.5, np.float32(0.25), x.astype(np.float32)).astype(ml_dtypes.bfloat16)
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16))
    assert _err(k, x, np.zeros((16, 32), ml_dtypes.bfloat16), compat="head").code == "FC0001"


def test_where_integral_float_scalar_with_an_int32_tensor_runs_under_0_2_0():
    """Wheel: ok for `where(c, int32_tensor, 0.0)`; was FC0001."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 32], pypto.DT_INT32), c: pypto.Tensor([16, 32], F32),
          out: pypto.Tensor([16, 32], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = pypto.where(pypto.gt(c, 0.5), x, 0.0)

    x = np.arange(16 * 32, dtype=np.int32).reshape(16, 32)
    c = np.linspace(0, 1, 16 * 32, dtype=np.float32).reshape(16, 32)
    out = np.full((16, 32), -1, np.int32)
    _run(k, x, c, out)
    assert np.array_equal(out, np.where(c > 0.5, x, 0))


def test_tensor_methods_the_0_2_0_tensor_lacks_are_attribute_errors():
    """Wheel: `AttributeError: 'Tensor' object has no attribute 'abs'` (its Tensor has exp/sqrt/log but no abs, neg,
    pow, cast ...); was accepted. HEAD keeps the methods."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 32], F32), out: pypto.Tensor([16, 32], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = x.abs().exp()

    @pypto.frontend.jit
    def k_ok(x: pypto.Tensor([16, 32], F32), out: pypto.Tensor([16, 32], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = x.exp().sqrt()

    x = np.full((16, 32), -1.0, np.float32)
    e = _err(k, x, np.zeros((16, 32), np.float32))
    assert e.kind == "AttributeError" and "'Tensor' object has no attribute 'abs'" in str(e)
    out = np.zeros((16, 32), np.float32)
    _run(k, x, out, compat="head")
    assert np.array_equal(out, np.exp(np.abs(x)))
    _run(k_ok, x, out)


def test_the_methods_refused_under_0_2_0_are_exactly_those_the_wheels_tensor_lacks() -> None:
    """``NOT_ON_0_2_0_TENSOR`` is written out in runtime code (the wheel inventory is test data): it must stay the
    op methods the emulator installs on Tensor minus the recorded 0.2.0 Tensor names."""
    import json
    from pathlib import Path

    from runtime.emulator import _methods
    from runtime.emulator._registry import OPS
    from runtime.emulator._tensor import Tensor

    wheel = set(json.loads((Path(__file__).parent / "data" / "wheel_0_2_0_names.json").read_text())["Tensor"])
    installed = {n for n, spec in OPS.items() if spec.method and n not in _methods._SPECIAL
                 and getattr(getattr(Tensor, n, None), "__name__", "") == n}
    assert _methods.NOT_ON_0_2_0_TENSOR == installed - wheel
