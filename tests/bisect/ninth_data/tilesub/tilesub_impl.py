"""exp(x @ w^T / 2) over tiles of 16 rows of w copied into a local tensor; the tile's valid extent is the clamped
end minus the start (the gym gqa_decode_attn's ``s2_valid = s2_end - s2_start``)."""

import numpy as np
import pypto

KT = 16


@pypto.frontend.jit
def tilesub_kernel(
    x: pypto.Tensor([8, 16], pypto.DT_FP32),
    w: pypto.Tensor([48, 16], pypto.DT_FP32),
    out: pypto.Tensor([8, 48], pypto.DT_FP32),
):
    n = w.shape[0]
    pypto.set_vec_tile_shapes(8, KT)
    pypto.set_cube_tile_shapes([8, 8], [16, 16], [16, 16])
    for t in pypto.loop((n + KT - 1) // KT, name="n_loop"):
        n_start = t * KT
        n_end = pypto.min(n_start + KT, n)
        n_valid = n_end - n_start
        w_t = pypto.tensor([KT, 16], pypto.DT_FP32, "w_t")
        w_t[:] = pypto.view(w, [KT, 16], [n_start, 0], valid_shape=[n_valid, 16])
        s = pypto.matmul(x, w_t, pypto.DT_FP32, b_trans=True)
        y = pypto.exp(pypto.mul(s, 0.5))
        pypto.assemble(y, [0, n_start], out)


def tilesub_wrapper(x, w):
    out = np.zeros((8, 48), dtype=np.float32)
    tilesub_kernel(x, w, out)
    return out
