"""Interleaved RoPE: deinterleave each 16-token tile into (even, odd), rotate, interleave back."""

import numpy as np
import pypto

T = 16
D = 128
DH = D // 2


@pypto.frontend.jit
def rope_interleaved_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    cos: pypto.Tensor([pypto.DYNAMIC, DH], pypto.DT_FP32),
    sin: pypto.Tensor([pypto.DYNAMIC, DH], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(T, D)
    for i in pypto.loop(pypto.ceildiv(n, T), name="tokens", idx_name="i"):
        valid = (n - i * T).min(T)
        xt = pypto.view(x, [T, D], [i * T, 0], valid_shape=[valid, D])
        ct = pypto.view(cos, [T, DH], [i * T, 0], valid_shape=[valid, DH])
        st = pypto.view(sin, [T, DH], [i * T, 0], valid_shape=[valid, DH])
        x_even, x_odd = pypto.deinterleave(xt)
        rot_even = x_even * ct - x_odd * st
        rot_odd = x_even * st + x_odd * ct
        ot = pypto.interleave(rot_even, rot_odd)
        pypto.assemble(ot, [i * T, 0], out)


def rope_interleaved_wrapper(x, cos, sin):
    out = np.zeros(x.shape, dtype=x.dtype)
    rope_interleaved_kernel(x, cos, sin, out)
    return out
