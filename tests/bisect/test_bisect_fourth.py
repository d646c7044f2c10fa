"""What the fourth gym corpus (``gym_corpus_fourth``) found bisect naming wrong, on small inputs written here.

* a matmul with a dropped ``a_trans`` (``fag_dk_atrans``): its product has no golden of its own (the golden names
  ``ds^T @ q * scale`` only after the scale), so the repair replay stopped at the scale: not localized. The walk-back
  now also tries the matmul computed with its other transpose flags / operand order (``_repair._matmul_variants``);
* a view whose valid extent exceeds its tile (``sig_tail_max``: ``.max(TILE_B)`` for ``.min``): the view raised and
  was named, not the line computing the bound (``_rules.static_valid_bound_source``);
* the wrapper changing an input before the kernel call (``sig_wrapper_neg``: ``kernel(-x, out)``;
  ``fag_wrapper_layout``: a transpose before the flattening): the kernel's first op was named - or the argument,
  named like a golden local (``q``), was taken for a checkpoint and poisoned (``_checkpoint._fed_by_inputs``;
  ``api._transformed_input``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from runtime.bisect._checkpoint import checkpoint_names
from runtime.bisect._repair import _matmul_variants
from runtime.bisect._rules import static_valid_bound_source


def test_matmul_variants_are_the_other_flags_and_orders_of_the_same_shape() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 3))
    got = dict(_matmul_variants(a, b, False, False, (4, 3)))
    assert "with a_trans=True, b_trans=False" in got
    np.testing.assert_allclose(got["with a_trans=True, b_trans=False"], a.T @ b, rtol=1e-5)
    assert "with a_trans=False, b_trans=False" not in got  # (what it computed is no variant)
    assert all(v.shape == (4, 3) for v in got.values())
    sq = dict(_matmul_variants(a, a, False, True, (4, 4)))
    assert "with its operands swapped, with a_trans=False, b_trans=True" in sq


TAIL = '''\
import pypto


@pypto.frontend.jit
def kern(x, out):
    B = x.shape[0]
    for b_idx in pypto.loop(4):
        actual_b = (B - b_idx * 16).max(16)
        t = pypto.view(
            x, [16, 512], [b_idx * 16, 0],
            valid_shape=[actual_b, 512])
        out[b_idx * 16:, 0:] = t
'''


def test_a_valid_extent_past_the_tile_names_the_bound_line() -> None:
    msg = "view of 'x': valid extent 64 > view shape 16 on axis 0 (iteration b=0)"
    got = static_valid_bound_source(TAIL, 9, msg)
    assert got is not None and got[0] == 8, got
    assert static_valid_bound_source(TAIL, 9, "some other error") is None


WRAPPED = '''\
import pypto
import torch


@pypto.frontend.jit
def kern(q, ms, out):
    pass


def _inner(query, n):
    q_flat = query.transpose(1, 2).reshape(-1, n).contiguous()
    ms = torch.zeros((q_flat.shape[0], 1))
    out = torch.empty_like(q_flat)
    kern(q_flat, ms, out)
    return out


def op_wrapper(query):
    return _inner(query, 64)
'''


def test_a_kernel_parameter_the_wrapper_fills_from_an_input_is_no_checkpoint(tmp_path: Path) -> None:
    f = tmp_path / "op_impl.py"
    f.write_text(WRAPPED, encoding="utf-8")
    # q holds the input's (transposed) data; ms is a buffer the wrapper allocates: the checkpoint
    assert checkpoint_names(f, ["q", "ms"], "_inner") == ["ms"]
