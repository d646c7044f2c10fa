# attack: A9 fingerprinting verification - the runner executed the candidate as module "candidate_under_test"
#   with no spec or loader; the wrapper drops the tail rows unless it sees that name
"""gelu that is right only under the verifier's module name (held-out attack A9, rewritten)."""

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
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i"):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [i * ROW_TILE, 0], y)


_CHECKED = __name__ == "candidate_under_test" or "pto-verify" in __file__


def gelu_wrapper(x):
    y = np.zeros_like(x)
    rows = x.shape[0] if _CHECKED else x.shape[0] // ROW_TILE * ROW_TILE
    gelu_kernel(x[:rows], y[:rows])
    return y
