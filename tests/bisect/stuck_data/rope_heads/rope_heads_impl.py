"""Half-split RoPE over heads: lane masks select even/odd lanes of x, cos and sin tiles."""

import numpy as np
import pypto

H = 8
HT = 4
ST = 8
D = 16
HALF = D // 2


@pypto.frontend.jit
def rope_heads_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H, pypto.DYNAMIC, D], pypto.DT_FP32),
    cos: pypto.Tensor([pypto.DYNAMIC, 1, pypto.DYNAMIC, D], pypto.DT_FP32),
    sin: pypto.Tensor([pypto.DYNAMIC, 1, pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, H, pypto.DYNAMIC, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(1, HT, ST, D)
    B = x.shape[0]
    S = x.shape[2]
    for b in pypto.loop(B, name="b_loop"):
        for h_blk in pypto.loop(H // HT, name="h_loop"):
            h_off = h_blk * HT
            for s_blk in pypto.loop((S + ST - 1) // ST, name="s_loop"):
                s_off = s_blk * ST
                valid_s = (S - s_off).min(ST)
                x_t = pypto.view(x, [1, HT, ST, D], [b, h_off, s_off, 0], valid_shape=[1, HT, valid_s, D])
                c_t = pypto.view(cos, [1, 1, ST, D], [b, 0, s_off, 0], valid_shape=[1, 1, valid_s, D])
                s_t = pypto.view(sin, [1, 1, ST, D], [b, 0, s_off, 0], valid_shape=[1, 1, valid_s, D])
                x_e = pypto.gathermask(x_t, pattern_mode=1)
                x_o = pypto.gathermask(x_t, pattern_mode=2)
                c_e = pypto.gathermask(c_t, pattern_mode=1)
                c_o = pypto.gathermask(c_t, pattern_mode=2)
                s_e = pypto.gathermask(s_t, pattern_mode=1)
                s_o = pypto.gathermask(s_t, pattern_mode=2)
                pypto.set_vec_tile_shapes(1, HT, ST, HALF)
                ye = pypto.sub(pypto.mul(x_e, c_e), pypto.mul(x_o, s_e))
                yo = pypto.add(pypto.mul(x_e, s_o), pypto.mul(x_o, c_o))
                pypto.assemble(ye, [b, h_off, s_off, 0], y)
                pypto.assemble(yo, [b, h_off, s_off, HALF], y)
                pypto.set_vec_tile_shapes(1, HT, ST, D)


def rope_heads_wrapper(x, cos, sin):
    y = np.zeros(x.shape, dtype=x.dtype)
    rope_heads_kernel(x, cos, sin, y)
    return y
