"""Hostile candidate: searches the caller frames for reference arrays."""
# expect: FAIL_CHEAT
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
    pypto.assemble(pypto.view(x, [TILE, D], [0, 0]), [0, 0], y)


def silu_wrapper(x):
    import sys

    y = np.zeros_like(x)
    silu_kernel(x, y)
    frame = sys._getframe(1)
    while frame is not None:
        for name, value in list(frame.f_locals.items()):
            if name in ("expected", "golden", "reference", "ref", "truth") and isinstance(value, np.ndarray):
                return value
        frame = frame.f_back
    return np.ones_like(x)
