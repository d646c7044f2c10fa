"""layer_norm: y = (x - mean) / sqrt(var + eps) * gamma + beta in fp16, 16-row tiles over dynamic B.

The row (D = 256) fits one tile, so the mean and the two-pass variance are intra-tile reductions. The
kernel stays in fp16, the dtype of its inputs and output: the vector unit's reductions accumulate in fp32
internally, and the result needs no final cast. ``gamma``/``beta`` [D] are passed
as [1, D] rows (a host reshape) so they broadcast over the tile rows.
"""

import numpy as np
import pypto

TILE = 16
D = 256
EPS = 1.0e-5


@pypto.frontend.jit
def layer_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
    gamma: pypto.Tensor([1, D], pypto.DT_FP16),
    beta: pypto.Tensor([1, D], pypto.DT_FP16),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        mu = pypto.div(pypto.sum(xt, -1, keepdim=True), float(D))        # [TILE, 1]
        xc = pypto.sub(xt, mu)                                           # [TILE, D]
        var = pypto.div(pypto.sum(pypto.mul(xc, xc), -1, keepdim=True), float(D))  # [TILE, 1]
        rstd = pypto.rsqrt(pypto.add(var, EPS))                          # [TILE, 1]
        yt = pypto.add(pypto.mul(pypto.mul(xc, rstd), gamma), beta)      # [TILE, D]
        pypto.assemble(yt, [i * TILE, 0], y)


def layer_norm_wrapper(x, gamma, beta):
    y = np.zeros_like(x)
    layer_norm_kernel(x, gamma.reshape(1, D), beta.reshape(1, D), y)
    return y
