"""y1 = 2x over row tiles of 4, then y2 = x + 1 in a second pass that reads x again (the gym
flash_attention_score_grad's dQ pass, then the dK/dV pass reading Q)."""

import numpy as np
import pypto

T = 4


@pypto.frontend.jit
def twopass_kernel(
    x: pypto.Tensor([16, 16], pypto.DT_FP32),
    out1: pypto.Tensor([16, 16], pypto.DT_FP32),
    out2: pypto.Tensor([16, 16], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(T, 16)
    for i in pypto.loop(4, name="p1", idx_name="i"):
        t = pypto.view(x, [T, 16], [i * T, 0])
        pypto.assemble(pypto.mul(t, 2.0), [i * T, 0], out1)
    for j in pypto.loop(4, name="p2", idx_name="j"):
        u = pypto.view(x, [T, 16], [j * T, 0])
        pypto.assemble(pypto.add(u, 1.0), [j * T, 0], out2)


def twopass_wrapper(x):
    x = np.ascontiguousarray(x)
    out1 = np.zeros_like(x)
    out2 = np.zeros_like(x)
    twopass_kernel(x, out1, out2)
    return out1, out2
