"""The poison table of 1- and 2-byte floats (`_buffers._narrow_table`) is the wide check applied to every bit pattern.

The table converts only the largest magnitudes of a 2-byte float (where its NaNs are); this compares it with the
definition - every pattern converted to float32, NaN tested with ``np.isnan`` - on every narrow float dtype the
emulator knows, and checks the fallback that converts every pattern."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from runtime.emulator import _buffers
from runtime.emulator._buffers import POISON_BITS, is_poison

NARROW = [np.dtype(d) for d in (np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
                                 ml_dtypes.float8_e8m0fnu)]


def _reference(dt: np.dtype) -> tuple[np.dtype, int, np.ndarray]:
    bits_dt = np.dtype(np.uint8 if dt.itemsize == 1 else np.uint16)
    every = np.arange(1 << (8 * dt.itemsize), dtype=np.uint64).astype(bits_dt)
    values = every.view(dt)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(values.astype(np.float32))
    f32 = values.astype(np.float32).view(np.uint32)
    table = nan & ((f32 & 0x7FFF0000) == (POISON_BITS & 0x7FFF0000))
    sign = 1 << (8 * dt.itemsize - 1)
    mags = every[nan] & (sign - 1)
    return bits_dt, int(mags.min()) if mags.size else sign, table


@pytest.mark.parametrize("dt", NARROW, ids=str)
def test_table_is_the_wide_check_on_every_pattern(dt: np.dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_buffers, "_NARROW", {})
    bits_dt, first_nan, table = _buffers._narrow_table(dt)
    rbits, rfirst, rtable = _reference(dt)
    assert bits_dt == rbits
    assert first_nan == rfirst
    assert np.array_equal(table, rtable)


@pytest.mark.parametrize("dt", [d for d in NARROW if d.itemsize == 2], ids=str)
def test_fallback_converts_every_pattern(dt: np.dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    # with the whole upper half of magnitudes "on top", the lowest converted pattern is a NaN: every pattern is
    # converted instead - the same table
    monkeypatch.setattr(_buffers, "_NARROW", {})
    monkeypatch.setattr(_buffers, "_TOP", 1 << 15)
    got = _buffers._narrow_table(dt)
    ref = _reference(dt)
    assert got[:2] == ref[:2] and np.array_equal(got[2], ref[2])


@pytest.mark.parametrize("dt", [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)], ids=str)
def test_poison_counted_in_narrow_arrays(dt: np.dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_buffers, "_NARROW", {})
    a = np.arange(64, dtype=np.float32).astype(dt)
    assert is_poison(a) == 0
    a[[3, 17]] = _buffers.poison_array((2,), dt)
    a[20] = np.nan  # a NaN that is not poison
    assert is_poison(a) == 2
