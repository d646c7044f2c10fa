"""Assemble of a partial tile larger than its destination (session 47).

``EMU_ASSEMBLE_SIZE`` refused at trace time an assemble whose tile is larger than the destination while the data it
writes (its valid region) fit: the real gym kernel quant_batch_matmul at m < 4 or n < 512 ([1, 4, 512] result tiles,
valid [1, m, n]) and difftest probes k0002 / k0030, all compiled by the wheel. Only a whole tensor (an argument or
a ``pypto.tensor``) is known at trace time to be valid in full; an op's result is checked when it runs, on the region
it writes. tests/gym/test_gym_shapes_s47.py runs the gym kernel at those shapes.
"""

import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()
F32 = np.float32




def _err(fn):  # noqa: ANN001, ANN202 - a kernel call
    with pytest.raises(emu.EmulatorError) as info:
        with emu.session():
            fn()
    return info.value


def test_a_partial_tile_larger_than_its_destination_writes_its_valid_region() -> None:
    """quant_batch_matmul's form: a [4, 16] tile whose valid rows are the destination's one row. Refused at trace
    time before s47 (EMU_ASSEMBLE_SIZE); the wheel compiles it. Also through an op of the view (probe k0002's
    ``sub(tb, tb)``) and at a static offset (the old trace-time OOB check had the same blind spot)."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([1, 16], pypto.DT_FP32), out: pypto.Tensor([1, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        for i in pypto.loop(1, name="rows", idx_name="i"):
            t = pypto.view(x, [4, 16], [i * 4, 0], valid_shape=[(1 - i * 4).min(4), 16])
            pypto.assemble(t, [i * 4, 0], out)

    @pypto.frontend.jit
    def k_op(x: pypto.Tensor([3, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop(1, name="rows", idx_name="i"):
            t = pypto.view(x, [8, 16], [i * 8, 0], valid_shape=[(3 - i * 8).min(8), 16])
            pypto.assemble(pypto.add(t, t), [1, 0], out)  # static offset: 1 + 8 > 4, the valid 3 rows fit

    x = np.arange(16, dtype=F32).reshape(1, 16)
    out = np.full((1, 16), -1.0, F32)
    with emu.session():
        k(x, out)
    assert np.array_equal(out, x)
    x3 = np.arange(48, dtype=F32).reshape(3, 16)
    out4 = np.full((4, 16), -1.0, F32)
    with emu.session():
        k_op(x3, out4)
    assert np.array_equal(out4[1:], 2 * x3) and (out4[0] == -1).all()


def test_an_assemble_whose_written_data_do_not_fit_is_still_refused() -> None:
    """The device-punished geometry stays an error: a whole argument larger than the destination at trace time
    (EMU_ASSEMBLE_SIZE, tests/emulator/test_checks.py), an op's result whose valid region is larger than the
    destination when it runs (EMU_ASSEMBLE_SIZE), and one that fits but lands outside (EMU_ASSEMBLE_OOB)."""

    @pypto.frontend.jit
    def whole_result(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        pypto.assemble(pypto.add(x, x), [0, 0], out)

    @pypto.frontend.jit
    def overrun(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        for i in pypto.loop(1, name="rows", idx_name="i"):
            t = pypto.view(x, [8, 8], [i * 8, 0], valid_shape=[(3 - i * 8).min(8), 8])
            pypto.assemble(t * 1.0, [2, 0], out)  # 3 valid rows at row 2 of 4

    x = np.ones((8, 8), F32)
    e = _err(lambda: whole_result(x, np.zeros((4, 8), F32)))
    assert e.code == "EMU_ASSEMBLE_SIZE" and "valid shape (8, 8)" in e.message, e
    e = _err(lambda: overrun(x, np.zeros((4, 8), F32)))
    assert e.code == "EMU_ASSEMBLE_OOB" and "[2, 5)" in e.message, e
