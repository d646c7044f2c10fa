"""exp(x @ w^T / 4) over tiles of 32 rows of w copied into a local tensor (the gym gqa_decode_attn's K tile)."""

import numpy as np
import pypto

KT = 32


@pypto.frontend.jit
def tilemm_kernel(
    x: pypto.Tensor([8, 16], pypto.DT_FP32),
    w: pypto.Tensor([64, 16], pypto.DT_FP32),
    out: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    n = w.shape[0]
    pypto.set_vec_tile_shapes(8, KT)
    pypto.set_cube_tile_shapes([8, 8], [16, 16], [32, 32])
    for t in pypto.loop((n + KT - 1) // KT, name="n_loop"):
        n_start = t * KT
        n_end = pypto.min(n_start + KT, n)
        n_valid = n_end - n_start
        w_t = pypto.tensor([KT, 16], pypto.DT_FP32, "w_t")
        w_t[:] = pypto.view(w, [KT, 16], [n_start, 0], valid_shape=[n_valid, 16])
        s = pypto.matmul(x, w_t, pypto.DT_FP32, b_trans=True)
        y = pypto.exp(pypto.mul(s, 0.25))
        pypto.assemble(y, [0, n_start], out)


def tilemm_wrapper(x, w):
    out = np.zeros((8, 64), dtype=np.float32)
    tilemm_kernel(x, w, out)
    return out
