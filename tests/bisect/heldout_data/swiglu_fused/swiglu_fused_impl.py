"""SwiGLU MLP: one fused [T, 2F] gate/up matmul per 16-token tile, split by two views."""

import numpy as np
import pypto

T = 16
HID = 64
F = 128


@pypto.frontend.jit
def swiglu_fused_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_FP32),
    w_gu: pypto.Tensor([HID, 2 * F], pypto.DT_FP32),
    w_down: pypto.Tensor([F, HID], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_FP32),
):
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, T), name="tokens", idx_name="i"):
        valid = (n - i * T).min(T)
        xt = pypto.view(x, [T, HID], [i * T, 0], valid_shape=[valid, HID])
        pypto.set_cube_tile_shapes([16, 16], [64, 64], [256, 256])
        gu = pypto.matmul(xt, w_gu, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(T, F)
        gate = pypto.view(gu, [T, F], [0, 0])
        up = pypto.view(gu, [T, F], [0, F])
        silu = gate / (pypto.exp(-gate) + 1.0)
        act = silu * up
        pypto.set_cube_tile_shapes([16, 16], [128, 128], [64, 64])
        ot = pypto.matmul(act, w_down, pypto.DT_FP32)
        pypto.assemble(ot, [i * T, 0], out)


def swiglu_fused_wrapper(x, w_gu, w_down):
    out = np.zeros(x.shape, dtype=x.dtype)
    swiglu_fused_kernel(x, w_gu, w_down, out)
    return out
