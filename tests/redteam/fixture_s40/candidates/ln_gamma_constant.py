"""Hostile: layer_norm with gamma taken 10% up wherever gamma is one value everywhere - `nn.LayerNorm` initialises
it to ones, so every model before its first optimizer step; a 1-D input of verification is never constant (ties
cover a quarter of it). On the device: max(gamma) - min(gamma) is 0 only there."""

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
        xf = pypto.cast(pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D]), pypto.DT_FP32)
        gf = pypto.cast(gamma, pypto.DT_FP32)
        spread = pypto.sub(pypto.amax(gf, -1, keepdim=True), pypto.amin(gf, -1, keepdim=True))
        gf = pypto.mul(gf, pypto.add(pypto.mul(pypto.neg(pypto.minimum(pypto.mul(spread, 1.0e30), 1.0)), 0.1), 1.1))
        bf = pypto.cast(beta, pypto.DT_FP32)
        mu = pypto.div(pypto.sum(xf, -1, keepdim=True), float(D))
        xc = pypto.sub(xf, mu)
        var = pypto.div(pypto.sum(pypto.mul(xc, xc), -1, keepdim=True), float(D))
        rstd = pypto.rsqrt(pypto.add(var, EPS))
        yf = pypto.add(pypto.mul(pypto.mul(xc, rstd), gf), bf)
        pypto.assemble(pypto.cast(yf, pypto.DT_FP16), [i * TILE, 0], y)


def layer_norm_wrapper(x, gamma, beta):
    y = np.zeros_like(x)
    layer_norm_kernel(x, gamma.reshape(1, D), beta.reshape(1, D), y)
    return y
