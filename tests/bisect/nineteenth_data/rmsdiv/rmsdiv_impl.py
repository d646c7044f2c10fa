"""Two RMSNorms through one helper, the second of the first's weighted result: the helper divides by the root mean
square (bisect test op, s47; the shape of sum_lstm's ``rms_norm_pure``)."""

import numpy as np
import pypto

T, H = 8, 64


def rms_pure(x, eps):
    y = pypto.mul(x, x)
    y = pypto.mul(y, 1.0 / x.shape[-1])
    y = pypto.sum(y, -1, keepdim=True)
    y = pypto.add(y, eps)
    y = pypto.sqrt(y)
    return pypto.div(x, y)


@pypto.frontend.jit
def rmsdiv_kernel(
    x: pypto.Tensor([T, H], pypto.DT_FP32),
    w: pypto.Tensor([1, H], pypto.DT_FP32),
    y: pypto.Tensor([T, H], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    h = rms_pure(x, 1e-6)
    h = pypto.mul(h, w)
    y.move(rms_pure(h, 1e-6))


def rmsdiv_wrapper(x, w):
    y = np.zeros((x.shape[0], x.shape[1]), np.float32)
    rmsdiv_kernel(x, w, y)
    return y
