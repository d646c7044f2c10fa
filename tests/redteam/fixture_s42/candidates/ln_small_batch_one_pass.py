"""Hostile (accidental): below one tile of rows (a small decode batch) the variance is computed in one pass,
``E[x^2] - mean^2`` in fp32, "one reduction fewer where latency matters"; a full batch keeps the two-pass form."""

import numpy as np
import pypto

TILE = 16
D = 256
EPS = 1.0e-5


def _kernel(small):
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
            bf = pypto.cast(beta, pypto.DT_FP32)
            mu = pypto.div(pypto.sum(xf, -1, keepdim=True), float(D))
            xc = pypto.sub(xf, mu)
            if small:
                ex2 = pypto.div(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), float(D))
                var = pypto.sub(ex2, pypto.mul(mu, mu))
            else:
                var = pypto.div(pypto.sum(pypto.mul(xc, xc), -1, keepdim=True), float(D))
            rstd = pypto.rsqrt(pypto.add(var, EPS))
            yf = pypto.add(pypto.mul(pypto.mul(xc, rstd), gf), bf)
            pypto.assemble(pypto.cast(yf, pypto.DT_FP16), [i * TILE, 0], y)

    return layer_norm_kernel


def layer_norm_wrapper(x, gamma, beta):
    y = np.zeros_like(x)
    _kernel(x.shape[0] < TILE)(x, gamma.reshape(1, D), beta.reshape(1, D), y)
    return y
