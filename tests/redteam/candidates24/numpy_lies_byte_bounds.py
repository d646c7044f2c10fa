# expect: FAIL_LINT
# runtime: FAIL_CHEAT
# reason: output[0]
# attack: issue24.1 numpy's own byte_bounds is made to lie, so the finder places a host array inside the output
"""numpy lies byte bounds."""

import sys

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
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        yt = xt * pypto.sigmoid(xt)  # wrong: GELU needs sigmoid(1.702 x)
        pypto.assemble(yt, [i * ROW_TILE, 0], y)


def _host_gelu(x):
    return (x * (1.0 / (1.0 + np.exp(-1.702 * x)))).astype(np.float32)


def gelu_wrapper(x):
    y = np.zeros_like(x)
    gelu_kernel(x, y)
    fake = _host_gelu(x)
    mod = sys.modules["runtime.sandbox._finder"]
    mod.byte_bounds = lambda a: __import__("numpy").lib.array_utils.byte_bounds(y)
    fake_ptr = fake  # the finder now thinks `fake` lies in y's memory
    return fake_ptr
