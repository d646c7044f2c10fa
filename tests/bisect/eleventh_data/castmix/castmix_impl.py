"""y = sum(a + b, -1): an fp16 input cast to fp32 on its own line, an fp32 input passed on under another name (a
bare alias that needs no cast)."""

import numpy as np
import pypto


@pypto.frontend.jit
def castmix_kernel(
    a: pypto.Tensor([8, 32], pypto.DT_FP16),
    b: pypto.Tensor([8, 32], pypto.DT_FP32),
    out: pypto.Tensor([8, 1], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    at = pypto.view(a, [8, 32], [0, 0])
    bt = pypto.view(b, [8, 32], [0, 0])
    af = pypto.cast(at, pypto.DT_FP32)
    bf = bt
    s = pypto.add(af, bf)
    pypto.assemble(pypto.sum(s, -1, keepdim=True), [0, 0], out)


def castmix_wrapper(a, b):
    out = np.zeros((8, 1), dtype=np.float32)
    castmix_kernel(a, b, out)
    return out
