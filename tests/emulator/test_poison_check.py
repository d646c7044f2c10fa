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
