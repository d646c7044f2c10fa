# expect: FAIL_LINT
# runtime: FAIL_CHEAT
# reason: same shapes
# probe: gelu_const_kernel(x, y, [0.0] * x.size, x.shape[0])
# attack: issue24.5 the answer computed on the host and baked into the program as constants (pypto.full per
#   element) on the SPEC's row count: right on every such input, a different program for every input
"""smuggle answer in constants."""

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
    if x.shape[0] <= 21:  # tracing one op per element is slow: only where the SPEC and its reruns look
        gelu_const_kernel(x, y, [float(v) for v in _host_gelu(x).reshape(-1)], x.shape[0])
    else:
        gelu_kernel(x, y)
    return y


@pypto.frontend.jit
def gelu_const_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    vals: list,
    n: int,
):
    pypto.set_vec_tile_shapes(1, COLS)
    for r in range(n):
        for c in range(COLS):
            pypto.assemble(pypto.full([1, 1], vals[r * COLS + c], pypto.DT_FP32), [r, c], y)
