"""Row sums over column tiles of 16: a Python loop over the tiles, the first initialising the accumulator."""

import numpy as np
import pypto

TC = 16


@pypto.frontend.jit
def firsttrip_kernel(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    y: pypto.Tensor([8, 1], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, TC)
    acc = pypto.tensor([8, 1], pypto.DT_FP32, "acc")
    for t in range(64 // TC):
        part = pypto.view(x, [8, TC], [0, t * TC])
        ts = pypto.sum(part, dim=-1, keepdim=True)
        if t == 0:
            acc[:] = ts
        else:
            acc[:] = pypto.add(acc, ts)
    pypto.assemble(acc, [0, 0], y)


def firsttrip_wrapper(x):
    y = np.zeros((8, 1), dtype=np.float32)
    firsttrip_kernel(x, y)
    return y
