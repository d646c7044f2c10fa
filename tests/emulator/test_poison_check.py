"""The poison check on 16- and 8-bit floats reads bit patterns; it must count exactly what the float32 check counts.

Why: ``is_poison`` runs on every write-back into a kernel argument and on every written argument after the
run; on bf16 numpy's ``max`` goes through ml_dtypes' scalar loops, so the narrow path works on the bits. The
reference below is the float32 formulation it replaced, applied to every bit pattern of every narrow dtype.
"""

import ml_dtypes
import numpy as np
import pytest

from runtime.emulator._buffers import POISON_BITS, is_poison, poison_array

NARROW = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn),
          np.dtype(ml_dtypes.float8_e5m2)]


def reference(arr: np.ndarray) -> int:
    with np.errstate(invalid="ignore"):
        f = arr.astype(np.float32)
    nan = np.isnan(f)
    bits = f[nan].view(np.uint32)
    return int(np.count_nonzero((bits & 0x7FFF0000) == (POISON_BITS & 0x7FFF0000)))


def every_pattern(dt: np.dtype) -> np.ndarray:
    return np.arange(1 << (8 * dt.itemsize), dtype=np.uint64).astype(
        np.uint8 if dt.itemsize == 1 else np.uint16).view(dt)


@pytest.mark.parametrize("dt", NARROW, ids=str)
def test_every_bit_pattern_counts_as_the_float32_check_does(dt: np.dtype) -> None:
    every = every_pattern(dt)
    flags = np.array([reference(every[i:i + 1]) for i in range(every.size)])
    assert is_poison(every) == int(flags.sum())
    # each poison pattern alone, each NaN that is not poison alone, and a non-contiguous view
    for i in np.flatnonzero(flags):
        assert is_poison(every[i:i + 1]) == 1
    with np.errstate(invalid="ignore"):
        other_nans = np.flatnonzero(np.isnan(every.astype(np.float32)) & (flags == 0))
    for i in other_nans[:: max(1, other_nans.size // 64)]:
        assert is_poison(every[i:i + 1]) == 0
    view = every.reshape(-1, 16)[:, ::3]
    assert is_poison(view) == reference(view)


@pytest.mark.parametrize("dt", NARROW + [np.dtype(np.float32)], ids=str)
def test_poisoned_memory_and_clean_data(dt: np.dtype) -> None:
    rng = np.random.default_rng(0)
    clean = rng.standard_normal((64, 33)).astype(dt)
    assert is_poison(clean) == reference(clean) == 0
    mixed = clean.copy()
    mixed[::7] = poison_array(mixed[::7].shape, dt)
    assert is_poison(mixed) == reference(mixed)


@pytest.mark.parametrize("dt", [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)], ids=str)
def test_poison_is_detected_in_bf16_and_fp16_memory_and_after_a_cast(dt: np.dtype) -> None:
    """bf16 poison used to round to 0x7FE6 and was never detected (speed engineer's finding, session 2)."""
    assert is_poison(poison_array((5, 7), dt)) == 35
    if dt.name != "bfloat16":  # ml_dtypes makes every cast NaN canonical (see POISON_BITS)
        assert is_poison(poison_array((5, 7), np.dtype(np.float32)).astype(dt)) == 35
    assert is_poison(np.full((5, 7), np.nan, dtype=dt)) == 0  # an ordinary NaN is not poison


def test_a_bf16_kernel_reading_uninitialised_memory_is_reported() -> None:
    import runtime.emulator as emu

    pypto = emu.install()

    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], pypto.DT_BF16), out: pypto.Tensor([8, 8], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(8, 8)
        t = pypto.tensor([8, 8], pypto.DT_BF16, "t")
        pypto.assemble(x, [0, 0], t)  # rows 4..7 never written
        pypto.assemble(t, [0, 0], out)  # a move: the poison reaches the argument as it is

    out = np.zeros((8, 8), ml_dtypes.bfloat16)
    with pytest.raises(emu.EmulatorError) as info:
        k(np.ones((4, 8), ml_dtypes.bfloat16), out)
    assert info.value.code == "EMU_POISON"
