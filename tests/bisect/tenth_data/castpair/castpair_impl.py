"""y = sum(a + b, -1): two fp16 inputs cast to fp32 on their own lines (the gym sum_lstm's states and z4)."""

import numpy as np
import pypto


@pypto.frontend.jit
def castpair_kernel(
    a: pypto.Tensor([8, 32], pypto.DT_FP16),
    b: pypto.Tensor([8, 32], pypto.DT_FP16),
    out: pypto.Tensor([8, 1], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    at = pypto.view(a, [8, 32], [0, 0])
    bt = pypto.view(b, [8, 32], [0, 0])
    af = pypto.cast(at, pypto.DT_FP32)
    bf = pypto.cast(bt, pypto.DT_FP32)
    s = pypto.add(af, bf)
    pypto.assemble(pypto.sum(s, -1, keepdim=True), [0, 0], out)


def castpair_wrapper(a, b):
    out = np.zeros((8, 1), dtype=np.float32)
    castpair_kernel(a, b, out)
    return out
