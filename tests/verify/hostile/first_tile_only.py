"""Hostile candidate: only writes the first tile."""
# expect: FAIL_RUNTIME
# ruff: noqa
import numpy as np
import pypto

TILE = 16
D = 64
DT = pypto.DT_FP32


@pypto.frontend.jit
def silu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], DT),
    y: pypto.Tensor([pypto.DYNAMIC, D], DT),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    xt = pypto.view(x, [TILE, D], [0, 0])
    xf = pypto.cast(xt, pypto.DT_FP32)
    pypto.assemble(pypto.cast(xf * pypto.sigmoid(xf), DT), [0, 0], y)


def silu_wrapper(x):
    y = np.zeros_like(x)
    silu_kernel(x, y)
    return y
