"""c = 2x + b1; h = act(c + b2) + exp(c / 2) * (1 + c), the activation in a helper (two paths, two biases)."""

import numpy as np
import pypto


def act(v):
    s = pypto.sigmoid(v)
    return pypto.mul(v, s)


@pypto.frontend.jit
def twopath_kernel(
    x: pypto.Tensor([8, 16], pypto.DT_FP32),
    b1: pypto.Tensor([1, 16], pypto.DT_FP32),
    b2: pypto.Tensor([1, 16], pypto.DT_FP32),
    c_out: pypto.Tensor([8, 16], pypto.DT_FP32),
    h_out: pypto.Tensor([8, 16], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 16)
    xt = pypto.view(x, [8, 16], [0, 0])
    b1t = pypto.view(b1, [1, 16], [0, 0])
    b2t = pypto.view(b2, [1, 16], [0, 0])
    c = pypto.add(pypto.mul(xt, 2.0), b1t)
    pypto.assemble(c, [0, 0], c_out)
    h_t = pypto.add(c, b2t)
    h = act(h_t)
    p = pypto.exp(pypto.mul(c, 0.5))
    d = pypto.mul(p, c)
    pm = pypto.add(p, 0.0)
    s = pypto.add(pm, d)
    pypto.assemble(pypto.add(h, s), [0, 0], h_out)


def twopath_wrapper(x, b1, b2):
    c = np.zeros_like(x)
    h = np.zeros_like(x)
    twopath_kernel(x, b1, b2, c, h)
    return c, h
