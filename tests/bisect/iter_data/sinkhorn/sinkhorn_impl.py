"""Sinkhorn over [T, 8, 8] tiles: the six rounds are a Python loop, unrolled when the kernel is traced."""

import numpy as np
import pypto

T = 8
N = 8
ROUNDS = 6


@pypto.frontend.jit
def sinkhorn_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, N, N], pypto.DT_FP32),
    h_out: pypto.Tensor([pypto.DYNAMIC, N, N], pypto.DT_FP32),
):
    b = x.shape[0]
    pypto.set_vec_tile_shapes(T, N, N)
    for i in pypto.loop(pypto.ceildiv(b, T), name="tiles", idx_name="i"):
        valid = (b - i * T).min(T)
        h = pypto.view(x, [T, N, N], [i * T, 0, 0], valid_shape=[valid, N, N])
        h = pypto.exp(h - pypto.amax(h, 2, keepdim=True))
        for _ in range(ROUNDS):
            row = pypto.sum(h, 2, keepdim=True)
            h = h / row
            col = pypto.sum(h, 1, keepdim=True)
            h = h / col
        pypto.assemble(h, [i * T, 0, 0], h_out)


def sinkhorn_wrapper(x):
    h_out = np.zeros(x.shape, dtype=x.dtype)
    sinkhorn_kernel(x, h_out)
    return h_out
