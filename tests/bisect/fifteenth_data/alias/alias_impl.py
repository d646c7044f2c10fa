"""y = (x * x) * 0.5 + 1 over row tiles (bisect test op: one named step per statement)."""

import numpy as np
import pypto

N, D, T = 16, 8, 4


@pypto.frontend.jit
def alias_kernel(
    x: pypto.Tensor([N, D], pypto.DT_BF16),
    y: pypto.Tensor([N, D], pypto.DT_BF16),
):
    pypto.set_vec_tile_shapes(T, D)
    for i in pypto.loop(N // T, name="LOOP", idx_name="i"):
        t = pypto.cast(pypto.view(x, [T, D], [i * T, 0]), pypto.DT_FP32)
        sq = pypto.mul(t, t)
        ms = pypto.mul(sq, 0.5)
        y_t = pypto.add(ms, 1.0)
        pypto.assemble(pypto.cast(y_t, pypto.DT_BF16), [i * T, 0], y)


def alias_wrapper(x):
    y = np.zeros_like(x)
    alias_kernel(x, y)
    return y
