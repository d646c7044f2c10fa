"""Inputs laid out as callers lay them out (red team s20, ``runtime.verify._calling.lay_out``): half of a
verification's wrapper calls get arrays that own their memory, half views into a larger allocation, and a torch
wrapper always gets tensors torch allocated - so ``x.flags.owndata`` or ``x.untyped_storage().resizable()`` tells
a wrapper nothing about being verified."""

from __future__ import annotations

import numpy as np
import pytest

from runtime.verify._calling import draw_layouts, lay_out


def test_half_of_the_calls_get_views_in_a_seeded_order() -> None:
    for seed in (0, 1, 2**40 + 3):
        layouts = draw_layouts(seed, 35)
        assert sum(lay is None for lay in layouts) == 18
        assert all(lay is None or (1 <= lay[0] and 0 <= lay[1]) for lay in layouts)
        assert layouts == draw_layouts(seed, 35)
    assert draw_layouts(0, 35) != draw_layouts(1, 35)


def test_numpy_views_hold_the_bytes_and_do_not_own_their_memory() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    args, views = lay_out([a], False, None)
    assert args[0] is a and views[0] is a
    args, views = lay_out([a], False, [5, 2])
    assert args[0] is views[0] and not args[0].flags.owndata and args[0].flags.c_contiguous
    assert np.array_equal(args[0], a) and args[0].base is not None


def test_torch_inputs_are_tensors_torch_allocated() -> None:
    torch = pytest.importorskip("torch", reason="torch wrappers (pip install -e '.[toolchain]')")
    import ml_dtypes

    for dtype in (np.float32, ml_dtypes.bfloat16, np.int32):
        a = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
        for layout in (None, [3, 1]):
            (t,), (view,) = lay_out([a], True, layout)
            assert isinstance(t, torch.Tensor) and t.untyped_storage().resizable()
            assert view.__array_interface__["data"][0] == t.data_ptr()
            assert np.array_equal(view.astype(np.float32), a.astype(np.float32))
            assert (t.data_ptr() % 64 == 0) == (layout is None)
