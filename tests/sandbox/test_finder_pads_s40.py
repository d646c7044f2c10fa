"""The child's finder names an input padded at the start or on both sides of an axis (accident round 30, s40).

A wrapper that left-pads a sequence to the kernel's tile (``torch.cat([pad, scores], dim=1)``, as a decoder pads a
batch on the left) and slices its result from the right is honest; before s40 the finder only looked for the input
in the top-left corner of a padded array, and such a kernel argument was "host data" (FAIL_CHEAT on the gym's
attn_softmax rewritten that way). The device rebuilds each padded array byte for byte from its descriptor.
"""

from __future__ import annotations

import numpy as np
import pytest

from runtime.sandbox._desc import build
from runtime.sandbox._finder import Provenance, digest

X = np.arange(1, 13, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("widths", [
    [[0, 0], [5, 0]],   # left-padded along the sequence axis
    [[2, 0], [0, 0]],   # rows prepended
    [[1, 1], [2, 2]],   # centred ("same" convolution padding)
    [[1, 2], [3, 4]],   # centred, odd total: either rounding
    [[0, 3], [4, 0]],   # end of one axis, start of the other
    [[0, 2], [0, 6]],   # the end of both (before s40 the only placement tried)
])
def test_a_padded_input_is_named_and_rebuilt_exactly(widths: list[list[int]]) -> None:
    p = Provenance()
    p.reset([X])
    for value in (0.0, -1e9):
        padded = np.pad(X, widths, constant_values=value)
        desc = p.describe(padded)
        assert desc[0] == "pad", (widths, desc)
        assert digest(build(desc, [X], [], [1], 1 << 20).array) == digest(padded)


def test_a_cast_input_padded_on_the_left_is_named() -> None:
    import ml_dtypes

    p = Provenance()
    p.reset([X])
    padded = np.pad(X.astype(ml_dtypes.bfloat16), [[0, 0], [3, 0]], constant_values=-1e9)
    desc = p.describe(padded)
    assert desc[0] == "pad" and desc[1][0] == "cast", desc
    assert digest(build(desc, [X], [], [1], 1 << 20).array) == digest(padded)


def test_an_input_placed_off_the_tried_offsets_or_a_non_constant_padding_stays_host_data() -> None:
    p = Provenance()
    p.reset([X])
    off = np.full((3, 14), 7.0, np.float32)
    off[:, 1:5] = X  # one column before, nine after: not a start, end or centred placement
    assert p.describe(off) == ["host"]
    noisy = np.pad(X, [[0, 0], [4, 0]], constant_values=0.0)
    noisy[0, 0] = 1.0  # the padding is not one constant
    assert p.describe(noisy) == ["host"]
