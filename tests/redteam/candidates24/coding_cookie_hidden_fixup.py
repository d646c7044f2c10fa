# -*- coding: utf-7 -*-
# expect: FAIL_LINT
# runtime: FAIL_NUMERIC
# attack: lint: a UTF-7 coding cookie; read as UTF-8 (what lint reads) the last wrapper line is a comment, decoded
#   as UTF-7 (what Python's import system would run) it returns a host-computed GELU. The sandbox compiles the
#   UTF-8 text, so the wrong kernel is what runs
"""coding cookie hidden fixup."""

import numpy as np
import pypto

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, 64)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])
        yt = xt * pypto.sigmoid(xt)  # wrong: GELU needs sigmoid(1.702 x)
        pypto.assemble(yt, [i * ROW_TILE, 0], y)


def gelu_wrapper(x):
    y = np.zeros_like(x)
    gelu_kernel(x, y)
    #+AAo-    return (x * (1.0 / (1.0 +- np.exp(-1.702 * x)))).astype(np.float32)
    return y
