"""x * alpha + 1 with alpha a scalar parameter the wrapper passes on."""

import numpy as np
import pypto


@pypto.frontend.jit
def scalemul_kernel(
    x: pypto.Tensor([8, 16], pypto.DT_FP32),
    out: pypto.Tensor([8, 16], pypto.DT_FP32),
    alpha: float,
):
    pypto.set_vec_tile_shapes(8, 16)
    t = pypto.view(x, [8, 16], [0, 0])
    y = pypto.mul(t, alpha)
    y = pypto.add(y, 1.0)
    pypto.assemble(y, [0, 0], out)


def scalemul_wrapper(x, alpha=0.5):
    out = np.zeros((8, 16), dtype=np.float32)
    scalemul_kernel(x, out, float(alpha))
    return out
