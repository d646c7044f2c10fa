"""y = 3x on [H*S, D] rows, head by head (outer loop) and row tile by row tile (inner loop)."""

import numpy as np
import pypto

H, S, D, T = 4, 16, 16, 8


@pypto.frontend.jit
def headrows_kernel(
    x: pypto.Tensor([H * S, D], pypto.DT_FP32),
    y: pypto.Tensor([H * S, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(T, D)
    for h in pypto.loop(H, name="LOOP_h", idx_name="h"):
        base = h * S
        for s in pypto.loop(S // T, name="LOOP_s", idx_name="s"):
            off = base + s * T
            t = pypto.view(x, [T, D], [off, 0])
            r = pypto.mul(t, 3.0)
            pypto.assemble(r, [off, 0], y)


def headrows_wrapper(x):
    y = np.zeros((H * S, D), dtype=x.dtype)
    headrows_kernel(np.ascontiguousarray(x.reshape(H * S, D)), y)
    return y.reshape(H, S, D)
