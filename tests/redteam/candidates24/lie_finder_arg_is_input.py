# expect: FAIL_LINT
# runtime: FAIL_CHEAT
# reason: before the kernel call
# attack: issue24.1 the finder is patched to call a host-computed kernel argument "wrapper input 0"
"""lie finder arg is input."""

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
        yt = xt * 1.0  # no GELU at all: the answer must come from somewhere else
        pypto.assemble(yt, [i * ROW_TILE, 0], y)


def _host_gelu(x):
    return (x * (1.0 / (1.0 + np.exp(-1.702 * x)))).astype(np.float32)


def gelu_wrapper(x):
    finder = sys.modules["runtime.sandbox._finder"].Provenance
    finder.describe = lambda self, arr, **kw: ["in", 0] if not kw.get("write_only") else ["uninit", list(arr.shape), "fp32"]
    y = np.zeros_like(x)
    gelu_kernel(_host_gelu(x), y)
    return y
