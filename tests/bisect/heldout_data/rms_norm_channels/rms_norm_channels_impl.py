"""RMSNorm over channels: pass 1 accumulates the sum of squares chunk by chunk, pass 2 normalises each chunk.

The wrapper allocates the output padded to whole 8-row tiles and returns its first N rows.
"""

import numpy as np
import pypto

T = 8
C = 256
CC = 64
EPS = 1.0e-6


@pypto.frontend.jit
def rms_norm_channels_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    weight: pypto.Tensor([1, C], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
):
    n = x.shape[0]
    tiles = y.shape[0] // T
    pypto.set_vec_tile_shapes(T, CC)
    acc = pypto.tensor([T, 1], pypto.DT_FP32, "acc")
    for i in pypto.loop(tiles, name="rows", idx_name="i"):
        valid = (n - i * T).min(T)
        for j in pypto.loop(C // CC, name="pass1", idx_name="j"):
            xt = pypto.view(x, [T, CC], [i * T, j * CC], valid_shape=[valid, CC])
            part = pypto.sum(xt * xt, -1, keepdim=True)
            if pypto.is_loop_begin(j):
                acc[:] = part
            else:
                acc[:] = acc + part
        rms = pypto.sqrt(acc * (1.0 / C) + EPS)
        for k in pypto.loop(C // CC, name="pass2", idx_name="k"):
            xt = pypto.view(x, [T, CC], [i * T, k * CC], valid_shape=[valid, CC])
            wt = pypto.view(weight, [1, CC], [0, k * CC])
            yt = xt / rms * wt
            pypto.assemble(yt, [i * T, k * CC], y)


def rms_norm_channels_wrapper(x, weight):
    n = x.shape[0]
    pad = (-n) % T
    yp = np.zeros((n + pad, C), dtype=x.dtype)
    rms_norm_channels_kernel(x, weight, yp)
    return yp[:n]
