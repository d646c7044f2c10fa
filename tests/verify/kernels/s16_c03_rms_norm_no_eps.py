# attack: subtly wrong - eps is dropped from rms_norm; invisible on random inputs (ms >> 1e-6 even on the "small"
#   band) but an all-zero row (padding tokens) gives NaN instead of 0
"""rms_norm: y = bf16(x / sqrt(mean(x^2, -1) + eps) * gamma), fp32 inside, 16-row tiles over dynamic B.

The mean of squares is a reduction over the whole row (D = 512 fits one tile), accumulated in fp32; the
result is rounded to bf16 once. ``gamma`` [D] is passed as a [1, D] row so it broadcasts over the tile
rows (a layout reshape on the host, no arithmetic).
"""

import numpy as np
import pypto

TILE = 16
D = 512
EPS = 1.0e-6


@pypto.frontend.jit
def rms_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    gamma: pypto.Tensor([1, D], pypto.DT_BF16),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        xf = pypto.cast(xt, pypto.DT_FP32)                               # [TILE, D]
        gf = pypto.cast(gamma, pypto.DT_FP32)                            # [1, D]
        ssq = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)             # [TILE, 1]
        ms = pypto.div(ssq, float(D))                                    # [TILE, 1]
        inv = pypto.rsqrt(ms)  # eps forgotten: NaN on an all-zero row                            # [TILE, 1]
        yf = pypto.mul(pypto.mul(xf, inv), gf)                           # [TILE, D]
        yt = pypto.cast(yf, pypto.DT_BF16)                               # [TILE, D]
        pypto.assemble(yt, [i * TILE, 0], y)


def rms_norm_wrapper(x, gamma):
    y = np.zeros_like(x)
    gamma_row = gamma.reshape(1, D)
    rms_norm_kernel(x, gamma_row, y)
    return y
