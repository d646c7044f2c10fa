"""w - 0.1 * (2 g): a step scaled by a rate, subtracted (the gym apply_adam_w_v2's ``w - lr * update``)."""

import numpy as np
import pypto


@pypto.frontend.jit
def decay_kernel(
    w: pypto.Tensor([8, 16], pypto.DT_FP32),
    g: pypto.Tensor([8, 16], pypto.DT_FP32),
    out: pypto.Tensor([8, 16], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 16)
    tw = pypto.view(w, [8, 16], [0, 0])
    tg = pypto.view(g, [8, 16], [0, 0])
    update = pypto.mul(tg, 2.0)
    scaled = pypto.mul(update, 0.1)
    w_new = pypto.sub(tw, scaled)
    pypto.assemble(w_new, [0, 0], out)


def decay_wrapper(w, g):
    out = np.zeros((8, 16), dtype=np.float32)
    decay_kernel(w, g, out)
    return out
