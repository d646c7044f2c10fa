"""Scale each column of ``x`` by the column sum of ``w``, accumulated over ``w``'s row tiles in an inner loop."""

import numpy as np
import pypto

T = 8
D = 16


@pypto.frontend.jit
def colscale_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    w: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = x.shape[0]
    loops = (n + T - 1) // T
    pypto.set_vec_tile_shapes(T, D)
    for i in pypto.loop(loops, name="i_loop", idx_name="i"):
        rows_i = (n - i * T).min(T)
        x_t = pypto.view(x, [T, D], [i * T, 0], valid_shape=[rows_i, D])
        acc = pypto.tensor([1, D], pypto.DT_FP32, "acc")
        for j in pypto.loop(loops, name="j_loop", idx_name="j"):
            w_off = j * T
            rows_j = (n - j * T).min(T)
            w_t = pypto.view(w, [T, D], [w_off, 0], valid_shape=[rows_j, D])
            s = pypto.sum(w_t, 0, keepdim=True)
            if pypto.is_loop_begin(j):
                acc[:] = s
            else:
                acc[:] = acc + s
            if pypto.is_loop_end(j):
                y_t = pypto.mul(x_t, acc)
                pypto.assemble(y_t, [i * T, 0], y)


def colscale_wrapper(x, w):
    y = np.zeros_like(x)
    colscale_kernel(x, w, y)
    return y
