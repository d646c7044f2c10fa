# expect: FAIL_LINT
# runtime: FAIL_CHEAT
# reason: constant
# attack: issue24.3 a host-computed result passed as an extra, never-written kernel argument and returned (the
#   kernel never reads it, so the device treats it as uninitialised memory: its bytes never reach the verdict)
"""host result as extra arg."""

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
    ans = _host_gelu(x)
    gelu_kernel2(x, y, ans)
    return ans


@pypto.frontend.jit
def gelu_kernel2(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    extra: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, 64)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])
        pypto.assemble(xt * 1.0, [i * ROW_TILE, 0], y)
