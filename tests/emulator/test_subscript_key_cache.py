"""Subscript targets evaluated at trace time must each run their own slice expression.

Found in a full-suite run: ``test_corpus_case_is_deterministic[softmax::...]`` wrote different bytes in two
runs, and a loop of the same case failed after ~60 runs with ``assemble into 'mx': region [1, 2)``. The trace
interpreter cached compiled code by ``id(node)`` and built a throw-away AST node for every subscript target;
CPython reuses a freed node's address, so a later target ran an earlier target's cached slice. Results then
depended on the allocator, i.e. on the machine and on what ran before.
"""


from typing import Any  # no `from __future__ import annotations`: the jit parser reads the annotations

import numpy as np

ROWS = 48


def test_many_subscript_targets_in_one_trace_each_use_their_own_slice(emu: Any) -> None:
    import pypto

    @pypto.frontend.jit
    def scatter(x: pypto.Tensor([ROWS, 16], pypto.DT_FP32), acc: pypto.Tensor([1, 1], pypto.DT_FP32),
                out: pypto.Tensor([ROWS, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 16)
        for i in range(ROWS):  # unrolled at trace time: two different subscript targets per row
            acc[:] = pypto.amax(x[i:i + 1, 0:16], -1, keepdim=True)
            out[i:i + 1, 0:16] = x[i:i + 1, 0:16] - acc

    x = np.arange(ROWS * 16, dtype=np.float32).reshape(ROWS, 16)
    for _ in range(5):
        acc = np.zeros((1, 1), np.float32)
        out = np.full((ROWS, 16), np.nan, np.float32)
        with emu.session():
            scatter(x, acc, out)
        np.testing.assert_array_equal(out, x - x.max(-1, keepdims=True))
        assert acc[0, 0] == x[-1].max()
