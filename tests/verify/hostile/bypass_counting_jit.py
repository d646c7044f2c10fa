"""Hostile candidate: reaches the emulator's own jit to run the kernel a second, uncounted time."""
# expect: FAIL_CHEAT
# ruff: noqa
import sys

import numpy as np
import pypto

TILE = 16
D = 64
DT = pypto.DT_FP32


def _body(
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


silu_kernel = pypto.frontend.jit(_body)
_real = sys.modules.get("runtime.emulator._frontend")  # the production emulator's undecorated jit
if _real is not None:
    _raw = _real.jit(_body)
else:  # the interface stand-in used by some tests
    _raw = sys.modules["_pto_forge_emulator"].build_module().frontend.jit(_body)


def silu_wrapper(x):
    y = np.zeros_like(x)
    _raw(x, y)            # uncounted warm-up / probing call
    silu_kernel(x, y)     # the one call the wrapper shows
    return y
