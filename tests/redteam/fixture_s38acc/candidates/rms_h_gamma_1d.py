"""rms_norm with gamma passed as its own [D] tensor and reshaped to [1, D] inside the kernel (gym habit:
pypto.reshape(..., inplace=True))."""

import numpy as np
import pypto

TILE = 16
D = 512
EPS = 1.0e-6


@pypto.frontend.jit
def rms_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    gamma: pypto.Tensor([D], pypto.DT_BF16),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
):
    n = x.shape[0]
    g2 = pypto.reshape(gamma, [1, D], inplace=True)
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xf = pypto.cast(pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D]), pypto.DT_FP32)
        inv = pypto.rsqrt(pypto.add(pypto.div(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), float(D)), EPS))
        yt = pypto.mul(pypto.mul(xf, inv), pypto.cast(g2, pypto.DT_FP32))
        pypto.assemble(pypto.cast(yt, pypto.DT_BF16), [i * TILE, 0], y)


def rms_norm_wrapper(x, gamma):
    y = np.zeros_like(x)
    rms_norm_kernel(x, gamma, y)
    return y
