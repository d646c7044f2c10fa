"""irope (wrong for the contract): the products and the difference in bf16 (the gym's kernel computes in the input
dtype) - three bf16 roundings instead of one."""

import numpy as np
import pypto

S_TILE = 16
D = 64
HALF = 32


@pypto.frontend.jit
def irope_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    cos: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    sin: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
):
    s = x.shape[0]
    pypto.set_vec_tile_shapes(S_TILE, D)
    for i in pypto.loop((s + S_TILE - 1) // S_TILE, name="s_loop", idx_name="i"):
        off = i * S_TILE
        valid = (s - off).min(S_TILE)
        xt = pypto.view(x, [S_TILE, D], [off, 0], valid_shape=[valid, D])
        ct = pypto.view(cos, [S_TILE, D], [off, 0], valid_shape=[valid, D])
        st = pypto.view(sin, [S_TILE, D], [off, 0], valid_shape=[valid, D])
        x_e = pypto.gathermask(xt, pattern_mode=1)
        x_o = pypto.gathermask(xt, pattern_mode=2)
        c_e = pypto.gathermask(ct, pattern_mode=1)
        c_o = pypto.gathermask(ct, pattern_mode=2)
        s_e = pypto.gathermask(st, pattern_mode=1)
        s_o = pypto.gathermask(st, pattern_mode=2)
        pypto.set_vec_tile_shapes(S_TILE, HALF)
        ye = pypto.sub(pypto.mul(x_e, c_e), pypto.mul(x_o, s_e))
        yo = pypto.add(pypto.mul(x_e, s_o), pypto.mul(x_o, c_o))
        pypto.assemble(ye, [off, 0], out)
        pypto.assemble(yo, [off, HALF], out)
        pypto.set_vec_tile_shapes(S_TILE, D)


def irope_wrapper(x, cos, sin):
    out = np.zeros_like(x)
    irope_kernel(x, cos, sin, out)
    return out
