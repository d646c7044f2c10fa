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


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "bfloat16"])
def test_a_torch_wrapper_gets_fp8_and_bf16_inputs_and_its_outputs_come_back(name: str) -> None:
    """ml_dtypes arrays torch.from_numpy refuses go over by their bytes: an FP8 case input (quant_batch_matmul
    imported from the gym) crashed the sandbox runner before the first call."""
    torch = pytest.importorskip("torch", reason="torch wrappers (pip install -e '.[toolchain]')")
    import ml_dtypes

    from runtime.verify._calling import array_view, to_call_args

    a = np.array([[0.5, -2.0], [3.0, 0.0]], dtype=getattr(ml_dtypes, name))
    for layout in (None, [2, 1]):
        (t,), (view,) = lay_out([a], True, layout)
        assert t.dtype == getattr(torch, name)
        assert t.to(torch.float32).tolist() == a.astype(np.float32).tolist()
        assert view.dtype == a.dtype and view.tobytes() == a.tobytes()
    (t,) = to_call_args([a], True)
    back = array_view(t * 1 if name == "bfloat16" else t)  # an output the wrapper made, read back as numpy
    assert back is not None and back.dtype == a.dtype and back.tobytes() == a.tobytes()


def test_a_crashed_candidate_process_says_which_exception_stopped_it() -> None:
    from runtime.sandbox._exec import _last_exception

    tail = ('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\nTypeError: can\'t convert '
            'np.ndarray of type ml_dtypes.float8_e4m3fn.\n')
    assert _last_exception(tail) == " (TypeError: can't convert np.ndarray of type ml_dtypes.float8_e4m3fn.)"
    assert _last_exception("MemoryError\n") == " (MemoryError)"
    assert _last_exception("some output\nno exception here\n") == ""
    assert len(_last_exception("ValueError: " + "x" * 5000)) < 260  # the candidate's text, bounded
