"""Acceptance fixes found by the s31 fidelity audit (13 gym-style kernels and ~35 probes against the real pypto 0.2.0
wheel in RunMode.SIM, 5 Dec 2026): calls the wheel refuses at the call and the emulator ran - two of them silently
wrong (an axis out of range wrapped modulo the rank). The wheel's outcome is in each test's docstring; the emulator
must now give the same under both targets, and keep running what the wheel compiles. The index ops' tail blocks are
in test_index_tail_valid.py."""

import numpy as np
import pytest
from test_crosscheck_s19 import _err, _run  # one session per kernel, under a compat target (this directory)

import runtime.emulator as emu

pypto = emu.install()
F32, I16, I32 = pypto.DT_FP32, pypto.DT_INT16, pypto.DT_INT32
X = np.random.default_rng(31).random((8, 32)).astype(np.float32)


def _axis_kernel(body: str):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), i: pypto.Tensor([8, 32], pypto.DT_INT32), out: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        if body == "transpose":
            out[:] = pypto.transpose(x, 0, 2)
        elif body == "concat":
            out[:] = pypto.concat([pypto.view(x, [4, 32], [0, 0]), pypto.view(x, [4, 32], [4, 0])], 2)
        elif body == "gather":
            out[:] = pypto.gather(x, 3, i)
        elif body == "scatter":
            out[:] = pypto.scatter(x, 3, i, 1.0)
        else:
            out[:] = pypto.concat([pypto.view(x, [4, 32], [0, 0]), pypto.view(x, [4, 32], [4, 0])], -2)

    return k


@pytest.mark.parametrize(("body", "code"), [("transpose", "FC0000"), ("concat", "FFFFFF"), ("gather", "FC0000"),
                                            ("scatter", "FC0000")])
def test_an_axis_out_of_range_is_the_wheels_error_not_wrapped(body: str, code: str) -> None:
    """Wheel: ``FC0000 Transpose dim 1 is invalid.``, ``FFFFFF Axis is not in the reasonable range!``, ``FC0000 The
    axis out of range of params shape size``, ``FC0000 The axis should be less than size of self shape``. Here the
    axis was taken modulo the rank: ``transpose(x, 0, 2)`` of a matrix was a no-op, ``concat(..., 2)`` a row concat."""
    idx = np.zeros((8, 32), np.int32)
    for compat in ("0.2.0", "head"):
        e = _err(_axis_kernel(body), X, idx, np.zeros((8, 32), np.float32), compat=compat)
        assert e.code == code and "out of range" in str(e), (compat, str(e))


def test_a_negative_axis_in_range_still_counts_from_the_end() -> None:
    out = np.zeros((8, 32), np.float32)
    _run(_axis_kernel("negative"), X, np.zeros((8, 32), np.int32), out)
    np.testing.assert_array_equal(out, X)


def _shift_kernel(dt, left: bool):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], dt), o: pypto.Tensor([8, 32], dt)):
        pypto.set_vec_tile_shapes(8, 32)
        o[:] = pypto.bitwise_left_shift(x, 2) if left else pypto.bitwise_right_shift(x, 2)

    return k


@pytest.mark.parametrize("left", [True, False])
def test_bit_shifts_take_int16_only_as_the_wheels_frontend(left: bool) -> None:
    """Wheel: ``FC0001 Inputs datatype not supported, CheckBitwiseShiftDtype`` on INT32, INT8 and UINT8 (tensor or
    number shift amount alike); INT16 compiles."""
    x16 = np.arange(256, dtype=np.int16).reshape(8, 32)
    out = np.zeros((8, 32), np.int16)
    _run(_shift_kernel(I16, left), x16, out)
    np.testing.assert_array_equal(out, (x16 << 2) if left else (x16 >> 2))
    for compat in ("0.2.0", "head"):
        e = _err(_shift_kernel(I32, left), x16.astype(np.int32), np.zeros((8, 32), np.int32), compat=compat)
        assert e.code == "FC0001" and "shift" in str(e), (compat, str(e))


def test_index_add_with_a_float_index_is_refused_at_the_call() -> None:
    """Wheel: ``FC0000 Datatype of indices is incorrect`` at the call; here it failed later with numpy's "array is
    not broadcastable to correct shape"."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), o: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        o[:] = pypto.index_add(x, 0, x, x)

    e = _err(k, X, np.zeros((8, 32), np.float32))
    assert e.code == "FC0000" and "Datatype of indices is incorrect" in str(e), str(e)


def test_argument_types_the_wheels_bindings_refuse_are_type_errors() -> None:
    """Wheel: ``TypeError: Cast(): incompatible function arguments`` for an int cast mode and ``Prod(): incompatible
    function arguments`` for a string keepdim; both ran here. A CastMode and a bool still run."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), o: pypto.Tensor([8, 32], F32), form: int):
        pypto.set_vec_tile_shapes(8, 32)
        if form == 0:
            o[:] = pypto.cast(x, F32, 3)
        elif form == 1:
            o[:, 0:1] = pypto.prod(x, -1, "yes")
        else:
            o[:] = pypto.cast(x, F32, pypto.CastMode.CAST_RINT)
            o[:, 0:1] = pypto.prod(x, -1, True)

    for form, name in ((0, "Cast()"), (1, "Prod()")):
        e = _err(k, X, np.zeros((8, 32), np.float32), form)
        assert e.kind == "TypeError" and name in str(e), str(e)
    out = np.zeros((8, 32), np.float32)
    _run(k, X, out, 2)
    np.testing.assert_allclose(out[:, 0], np.prod(X, axis=-1), rtol=1e-5)
    np.testing.assert_array_equal(out[:, 1:], np.rint(X[:, 1:]))  # an FP32 -> FP32 cast with a mode rounds


def test_remainder_takes_a_number_first_as_the_wheel_does() -> None:
    """Wheel: ``remainder(input: Tensor | Number, other)``, ``remainder(2.5, x)`` compiles (opcode REMRS); it was a
    TypeError here. On a tail tile too (the number fills the valid part)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], F32), o: pypto.Tensor([pypto.DYNAMIC, 32], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(8, 32)
        for i in pypto.loop((n + 7) // 8, name="rows", idx_name="i"):
            t = pypto.view(x, [8, 32], [i * 8, 0], valid_shape=[(n - i * 8).min(8), 32])
            o[i * 8:, 0:] = pypto.remainder(2.5, t)

    x = (np.random.default_rng(3).random((13, 32)) + 0.5).astype(np.float32)
    out = np.zeros((13, 32), np.float32)
    for compat in ("0.2.0", "head"):
        _run(k, x, out, compat=compat)
        np.testing.assert_allclose(out, np.remainder(np.float32(2.5), x), rtol=1e-6, err_msg=compat)


def test_an_integer_tensor_with_a_whole_float_scalar_runs() -> None:
    """Wheel: ``add``/``mul``/``ge`` of an INT32 tile and ``2.0`` compile; here the scalar reached the lowering as a
    plain int and failed inside the emulator (``add.scalar: expected a numpy constant, got int``) - after the
    emulator's own advice to write ``0.0`` in comparisons (a second audit, s31b)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], I32), o: pypto.Tensor([8, 32], I32)):
        pypto.set_vec_tile_shapes(8, 32)
        o[:] = pypto.mul(pypto.add(x, 2.0), 3.0)

    x = np.arange(256, dtype=np.int32).reshape(8, 32) - 100
    out = np.zeros((8, 32), np.int32)
    _run(k, x, out)
    np.testing.assert_array_equal(out, (x + 2) * 3)


def test_expand_clone_over_two_axes_is_the_binary_ops_rule() -> None:
    """Wheel: ``FC0000 Only allow to expand one axis`` for ``expand_clone`` of [1, 1] to [16, 64]; it ran silently
    under both targets here. Now as the binary ops: refused under 0.2.0, a warning under HEAD; one axis runs."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([1, 1], F32), y: pypto.Tensor([16, 64], F32), z: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = pypto.expand_clone(x, [16, 64])

    e = _err(k, np.ones((1, 1), np.float32), np.zeros((16, 64), np.float32), np.zeros((16, 64), np.float32))
    assert e.code == "FC0000" and "Only allow to expand one axis" in str(e), str(e)
    s = _run(k, np.ones((1, 1), np.float32), np.zeros((16, 64), np.float32), np.zeros((16, 64), np.float32),
             compat="head")
    assert any(w.code == "EMU_BROADCAST" for w in s.warnings), s.warnings
