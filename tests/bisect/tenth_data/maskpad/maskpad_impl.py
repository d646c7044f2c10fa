"""sum(exp(x + mask) * x, -1) / sum(exp(x + mask), -1) on one [4, 32] tile; the wrapper pads x with zeros and the mask with -1e30 and broadcasts
the mask over the rows (the gym gqa_decode_attn's ``mask_3d``)."""

import numpy as np
import pypto

P = 32


@pypto.frontend.jit
def maskpad_kernel(
    x: pypto.Tensor([4, 32], pypto.DT_FP32),
    m: pypto.Tensor([4, 32], pypto.DT_FP32),
    out: pypto.Tensor([4, 1], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(4, P)
    xt = pypto.view(x, [4, P], [0, 0])
    mt = pypto.view(m, [4, P], [0, 0])
    e = pypto.exp(pypto.add(xt, mt))
    s = pypto.div(pypto.sum(pypto.mul(e, xt), -1, keepdim=True), pypto.sum(e, -1, keepdim=True))
    pypto.assemble(s, [0, 0], out)


def maskpad_wrapper(x, mask):
    S = x.shape[1]
    xp = np.zeros((4, P), dtype=np.float32)
    xp[:, :S] = x
    pad = np.full((P - S,), -1e30, dtype=np.float32)
    full = np.concatenate([mask.astype(np.float32), pad])
    m = np.ascontiguousarray(np.broadcast_to(full[None, :], (4, P)))
    out = np.zeros((4, 1), dtype=np.float32)
    maskpad_kernel(xp, m, out)
    return out
