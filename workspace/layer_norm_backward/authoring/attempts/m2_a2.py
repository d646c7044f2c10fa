"""layer_norm_backward stage M1+M2: xhat (M1, frozen), then dgamma and dbeta (M2).

Rows (N, dynamic) are processed in 16-row tiles; the tail tile is carried by ``valid_shape`` on the row
views. M2's column sums run across row tiles, so their running totals live in the output tensors
themselves (written with ``[:] =`` on the first tile, read-add-write after it): a Python name re-bound in
the loop would not be carried from one tile to the next. dgamma/dbeta are [1, H] in the kernel and
reshaped to [H] on the host.
"""

import numpy as np
import pypto

TILE = 16
H = 128


@pypto.frontend.jit
def layer_norm_backward_module12_kernel(
    dy: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    mean: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
    rstd: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
    xhat_out: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    dgamma: pypto.Tensor([1, H], pypto.DT_FP32),
    dbeta: pypto.Tensor([1, H], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, H)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        # --- Module M1: normalised input ---
        xt = pypto.view(x, [TILE, H], [i * TILE, 0], valid_shape=[valid, H])
        mt = pypto.view(mean, [TILE, 1], [i * TILE, 0], valid_shape=[valid, 1])
        rt = pypto.view(rstd, [TILE, 1], [i * TILE, 0], valid_shape=[valid, 1])
        xhat = pypto.mul(pypto.sub(xt, mt), rt)                          # [TILE, H]
        pypto.assemble(xhat, [i * TILE, 0], xhat_out)
        # --- Module M2: parameter gradients ---
        dyt = pypto.view(dy, [TILE, H], [i * TILE, 0], valid_shape=[valid, H])
        dg_part = pypto.sum(pypto.mul(dyt, xhat), 0, keepdim=True)       # [1, H]
        db_part = pypto.sum(dyt, 0, keepdim=True)                        # [1, H]
        if pypto.is_loop_begin(i):
            dgamma[:] = dg_part
            dbeta[:] = db_part
        else:
            dgamma[:] = pypto.add(dgamma, dg_part)
            dbeta[:] = pypto.add(dbeta, db_part)


def layer_norm_backward_module12_wrapper(dy, x, mean, rstd, gamma):
    n = x.shape[0]
    xhat = np.zeros((n, H), dtype=np.float32)
    dgamma_row = np.zeros((1, H), dtype=np.float32)
    dbeta_row = np.zeros((1, H), dtype=np.float32)
    layer_norm_backward_module12_kernel(dy, x, mean.reshape(n, 1), rstd.reshape(n, 1), xhat, dgamma_row, dbeta_row)
    dgamma, dbeta = dgamma_row.reshape(H), dbeta_row.reshape(H)
    return xhat, dgamma, dbeta
