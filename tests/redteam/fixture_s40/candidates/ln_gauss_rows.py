"""Hostile: layer_norm 10% off on every row whose values look Gaussian (kurtosis 2.65-3.8, |skewness| < 0.3, 63-75%
within one standard deviation, largest deviation 2.45-4.6 of it) - the activations a LayerNorm sees in a model;
verification's rows are uniform, banded or special. On the device."""

import numpy as np
import pypto

TILE = 16
D = 256
EPS = 1.0e-5


def _ind(t, lo, hi):
    """1.0 where lo < t < hi (per row), else 0.0 - a step made of clips, computed on the device."""
    a = pypto.clip(pypto.mul(pypto.sub(t, lo), 1.0e4), 0.0, 1.0)
    b = pypto.clip(pypto.mul(pypto.sub(t, hi), -1.0e4), 0.0, 1.0)
    return pypto.mul(a, b)


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
        var = pypto.div(pypto.sum(pypto.mul(xc, xc), -1, keepdim=True), float(D))
        rstd = pypto.rsqrt(pypto.add(var, EPS))
        yf = pypto.add(pypto.mul(pypto.mul(xc, rstd), gf), bf)
        d2 = pypto.mul(xc, xc)
        m2 = pypto.div(pypto.sum(d2, -1, keepdim=True), float(D))
        m3 = pypto.div(pypto.sum(pypto.mul(d2, xc), -1, keepdim=True), float(D))
        m4 = pypto.div(pypto.sum(pypto.mul(d2, d2), -1, keepdim=True), float(D))
        inv = pypto.rsqrt(pypto.add(m2, 1.0e-30))
        kurt = pypto.div(m4, pypto.add(pypto.mul(m2, m2), 1.0e-30))
        skew = pypto.div(pypto.mul(m3, inv), pypto.add(m2, 1.0e-30))
        ad = pypto.abs(xc)
        near = pypto.clip(pypto.mul(pypto.sub(pypto.mul(ad, inv), 1.0), -1.0e4), 0.0, 1.0)
        f1 = pypto.div(pypto.sum(near, -1, keepdim=True), float(D))
        r = pypto.mul(pypto.amax(ad, -1, keepdim=True), inv)
        bad = pypto.mul(pypto.mul(_ind(kurt, 2.65, 3.8), _ind(skew, -0.3, 0.3)),
                        pypto.mul(pypto.mul(_ind(f1, 0.63, 0.75), _ind(r, 2.45, 4.6)), _ind(m2, 1.0e-6, 1.0e30)))
        yf = pypto.mul(yf, pypto.add(pypto.mul(bad, -0.1), 1.0))
        pypto.assemble(pypto.cast(yf, pypto.DT_FP16), [i * TILE, 0], y)


def layer_norm_wrapper(x, gamma, beta):
    y = np.zeros_like(x)
    layer_norm_kernel(x, gamma.reshape(1, D), beta.reshape(1, D), y)
    return y
