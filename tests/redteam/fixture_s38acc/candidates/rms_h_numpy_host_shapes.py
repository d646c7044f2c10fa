"""rms_norm: rows counted with numpy on the host (any leading shape), pypto.ceildiv for the trip count, the
tile loop in a helper defined after the kernel, 1/D as a multiplication, constants computed with math."""

import math

import numpy as np
import pypto

D = 512
TILE = 16
INV_D = 1.0 / D
EPS = float(math.pow(10, -6))


@pypto.frontend.jit
def rms_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    gamma: pypto.Tensor([1, D], pypto.DT_BF16),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    gf = pypto.cast(gamma, pypto.DT_FP32)
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="rows", idx_name="i"):
        _tile(x, gf, y, i, (n - i * TILE).min(TILE))


def _tile(x, gf, y, i, valid):
    xf = pypto.cast(pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D]), pypto.DT_FP32)
    ms = pypto.mul(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), INV_D)
    yt = pypto.mul(pypto.mul(xf, pypto.rsqrt(pypto.add(ms, EPS))), gf)
    pypto.assemble(pypto.cast(yt, pypto.DT_BF16), [i * TILE, 0], y)


def rms_norm_wrapper(x, gamma):
    rows = int(np.prod(x.shape[:-1]))
    x2 = x.reshape(rows, D)
    y = np.empty_like(x2)
    rms_norm_kernel(x2, gamma.reshape(1, D), y)
    return y.reshape(x.shape)
