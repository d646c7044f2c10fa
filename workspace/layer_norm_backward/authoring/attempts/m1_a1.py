"""layer_norm_backward stage M1: xhat = (x - mean) * rstd, recomputed from the saved row statistics.

Rows (N, dynamic) are processed in 16-row tiles; the tail tile is carried by ``valid_shape`` on the row
views. ``mean`` and ``rstd`` [N] are passed as [N, 1] columns (a host reshape) so they broadcast over the
row's H elements. The stage wrapper takes every primary input (OL50); M1 reads only x, mean and rstd.
"""

import numpy as np
import pypto

TILE = 16
H = 128


@pypto.frontend.jit
def layer_norm_backward_module1_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    mean: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
    rstd: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
    xhat_out: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
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


def layer_norm_backward_module1_wrapper(dy, x, mean, rstd, gamma):
    n = x.shape[0]
    xhat = np.zeros((n, H), dtype=np.float32)
    layer_norm_backward_module1_kernel(x, mean.reshape(n, 1), rstd.reshape(n, 1), xhat)
    return xhat
