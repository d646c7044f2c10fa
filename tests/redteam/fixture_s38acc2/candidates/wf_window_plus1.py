"""window_fill (wrong): window + 1 keys kept (the window's lower bound inclusive)."""

import numpy as np
import pypto

T = 16


@pypto.frontend.jit
def window_fill_kernel(
    scores: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
    window: int,
):
    s = scores.shape[0]
    n = (s + T - 1) // T
    pypto.set_vec_tile_shapes(T, T)
    for i in pypto.loop(n, name="q_loop", idx_name="i"):
        for j in pypto.loop(n, name="k_loop", idx_name="j"):
            r0 = i * T
            c0 = j * T
            vr = (s - r0).min(T)
            vc = (s - c0).min(T)
            t = pypto.view(scores, [T, T], [r0, c0], valid_shape=[vr, vc])
            d = r0 - c0
            band = pypto.sub(pypto.tril(t, d), pypto.tril(t, d - window - 1))
            pypto.assemble(band, [r0, c0], out)


def window_fill_wrapper(scores, window=8):
    out = np.zeros_like(scores)
    window_fill_kernel(scores, out, int(window))
    return out
