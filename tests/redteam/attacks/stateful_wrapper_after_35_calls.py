# attack: A4 state across calls - the wrapper counts its calls in a module-level list (no arithmetic, one kernel
#   call, a kernel table: every pre-PF11 rule passed it) and switches to a cheaper wrong kernel after the 35th;
#   verify calls a wrapper at most ~35 times, so every seed gave PASS
"""gelu that is right for 35 calls and wrong after (held-out attack A4, rewritten)."""

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
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [i * ROW_TILE, 0], y)


@pypto.frontend.jit
def gelu_fast(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt), [i * ROW_TILE, 0], y)  # wrong: GELU needs sigmoid(1.702 x)


_SEEN = []
_KERNELS = {False: gelu_kernel, True: gelu_fast}


def gelu_wrapper(x):
    _SEEN.append(None)
    y = np.zeros_like(x)
    _KERNELS[len(_SEEN) > 35](x, y)
    return y
