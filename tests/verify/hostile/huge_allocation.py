"""Hostile candidate: allocates 50 GB."""
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
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        xf = pypto.cast(xt, pypto.DT_FP32)
        yf = xf * pypto.sigmoid(xf)
        pypto.assemble(pypto.cast(yf, DT), [i * TILE, 0], y)


def silu_wrapper(x):
    big = np.ones(50 * 1024**3 // 8, dtype=np.float64)
    y = np.zeros_like(x)
    silu_kernel(x, y)
    return y + big[: y.size].reshape(y.shape).astype(y.dtype) * 0
