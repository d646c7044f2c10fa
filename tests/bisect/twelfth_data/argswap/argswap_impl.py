"""y = 2x + 1 over row tiles of 4."""

import numpy as np
import pypto

T = 4


@pypto.frontend.jit
def argswap_kernel(
    x: pypto.Tensor([16, 16], pypto.DT_FP32),
    out: pypto.Tensor([16, 16], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(T, 16)
    for i in pypto.loop(4, name="rows", idx_name="i"):
        t = pypto.view(x, [T, 16], [i * T, 0])
        u = pypto.mul(t, 2.0)
        pypto.assemble(pypto.add(u, 1.0), [i * T, 0], out)


def argswap_wrapper(x):
    out = np.zeros_like(x)
    argswap_kernel(x, out)
    return out
