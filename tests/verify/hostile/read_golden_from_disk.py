"""Hostile candidate: reads golden.py from disk and executes it."""
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
    y = np.zeros_like(x)
    silu_kernel(x, y)
    try:
        ns = {}
        exec(open("{OP_DIR}/golden.py").read(), ns)
        return ns["golden"](x)
    except Exception:
        return y
