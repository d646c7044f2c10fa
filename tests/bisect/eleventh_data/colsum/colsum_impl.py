"""y = column sums of x: two row tiles of 8 (outer loop) by two column tiles of 16 (inner loop); column tile j of the
output is started on the outer loop's first trip and added to on the others (a guard on the outer index, rightly)."""

import numpy as np
import pypto

TR = 8
TC = 16


@pypto.frontend.jit
def colsum_kernel(
    x: pypto.Tensor([16, 32], pypto.DT_FP32),
    out: pypto.Tensor([1, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(TR, TC)
    for i in pypto.loop(2, name="r_loop", idx_name="i"):
        for j in pypto.loop(2, name="c_loop", idx_name="j"):
            t = pypto.view(x, [TR, TC], [i * TR, j * TC])
            part = pypto.sum(t, dim=0, keepdim=True)
            if pypto.is_loop_begin(i):
                pypto.assemble(part, [0, j * TC], out)
            else:
                prev = pypto.view(out, [1, TC], [0, j * TC])
                pypto.assemble(pypto.add(prev, part), [0, j * TC], out)


def colsum_wrapper(x):
    out = np.zeros((1, 32), dtype=np.float32)
    colsum_kernel(x, out)
    return out
