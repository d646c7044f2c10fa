"""How the trusted replay rebuilds a captured kernel argument (``_run.ArgSource.build``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from runtime.bisect._run import ArgSource


def test_an_unwritten_input_is_a_read_only_view_a_written_one_a_copy() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    src = ArgSource(shape=(3, 4), dtype="float32", input=0)
    ro = src.build([x], writable=False)
    assert np.shares_memory(ro, x) and not ro.flags.writeable and np.array_equal(ro, x)
    with pytest.raises(ValueError):
        ro[0, 0] = 1.0  # a write the program did not declare fails; the input stays as given
    rw = src.build([x])
    assert not np.shares_memory(rw, x) and rw.flags.writeable and np.array_equal(rw, x)
    assert x.flags.writeable  # the input itself is left as it was


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "float64"])
def test_a_fill_keeps_its_bytes(dtype: str) -> None:
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    one = np.zeros(1, dt)
    one.view(np.uint8)[:] = np.arange(1, dt.itemsize + 1, dtype=np.uint8)  # an odd pattern (a NaN payload in fp)
    got = ArgSource(shape=(5, 3), dtype=dtype, fill=one.tobytes()).build([])
    assert got.dtype == dt and got.shape == (5, 3)
    assert got.tobytes() == one.tobytes() * 15
