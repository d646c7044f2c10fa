# attack: unseen-case gap - a "fast path" taken when the row count is a multiple of 64 (four 16-row tiles per loop
#   step) has a stride bug that only shows from the second step on (B = 128, 192, 256 ...). The SPEC's B = 64 is one
#   step (right); the unseen "aligned" size is an odd multiple of 16 (never a multiple of 32), tail1/tile-1/tail/small
#   are never multiples of 16, so only a fill or larger size that happens to be a multiple of 64 (~1/64 each) sees it
"""silu: y = x * sigmoid(x), fp32 inside; a 64-row fast path for aligned batches."""

import numpy as np
import pypto

TILE = 16
STEP = 4
D = 256
_DTYPES = {"float32": pypto.DT_FP32, "bfloat16": pypto.DT_BF16}


def _make(dt, fast):
    @pypto.frontend.jit
    def silu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        if fast:
            for i in pypto.loop(n // (TILE * STEP), name="rows64", idx_name="i"):
                for s in range(STEP):
                    off = (i + s) * TILE  # bug: should be (i * STEP + s) * TILE
                    xt = pypto.view(x, [TILE, D], [off, 0])
                    xf = pypto.cast(xt, pypto.DT_FP32)
                    yf = pypto.div(xf, pypto.add(pypto.exp(pypto.mul(xf, -1.0)), 1.0))
                    pypto.assemble(pypto.cast(yf, dt), [off, 0], y)
        else:
            for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
                valid = (n - i * TILE).min(TILE)
                xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
                xf = pypto.cast(xt, pypto.DT_FP32)
                yf = pypto.div(xf, pypto.add(pypto.exp(pypto.mul(xf, -1.0)), 1.0))
                pypto.assemble(pypto.cast(yf, dt), [i * TILE, 0], y)

    return silu_kernel


def silu_wrapper(x):
    y = np.zeros_like(x)
    rows = x.shape[0]
    kernel = _make(_DTYPES[x.dtype.name], rows % (TILE * STEP) == 0)
    kernel(x, y)
    return y
