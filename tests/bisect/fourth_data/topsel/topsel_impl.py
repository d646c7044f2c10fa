"""Pick the weights at each row's 4 largest scores and double them, in row tiles of 8."""

import numpy as np
import pypto

R = 8
E = 32
K = 4


@pypto.frontend.jit
def topsel_kernel(
    s: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_FP32),
    w: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_FP32),
):
    n = s.shape[0]
    pypto.set_vec_tile_shapes(R, E)
    for i in pypto.loop((n + R - 1) // R, name="r_loop"):
        rows = (n - i * R).min(R)
        s_t = pypto.view(s, [R, E], [i * R, 0], valid_shape=[rows, E])
        w_t = pypto.view(w, [R, E], [i * R, 0], valid_shape=[rows, E])
        _, picks = pypto.topk(s_t, K, -1, True)
        tw = pypto.gather(w_t, 1, picks)
        y_t = pypto.mul(tw, 2.0)
        pypto.assemble(y_t, [i * R, 0], y)


def topsel_wrapper(s, w):
    y = np.zeros((s.shape[0], K), dtype=s.dtype)
    topsel_kernel(s, w, y)
    return y
