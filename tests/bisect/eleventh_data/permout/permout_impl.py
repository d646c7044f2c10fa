"""y = (2x + 1) * w per head on [8, 16] tiles of a heads-first, sequence-padded [H*8, D] layout; the wrapper permutes
the inputs in and the output back out (the gym gated_delta_rule's host layout)."""

import numpy as np
import pypto

SP = 8
H = 4
D = 16


@pypto.frontend.jit
def permout_kernel(
    x: pypto.Tensor([32, 16], pypto.DT_FP32),
    w: pypto.Tensor([32, 16], pypto.DT_FP32),
    out: pypto.Tensor([32, 16], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(SP, D)
    for h in pypto.loop(H, name="h_loop", idx_name="h"):
        t = pypto.view(x, [SP, D], [h * SP, 0])
        u = pypto.view(w, [SP, D], [h * SP, 0])
        a = pypto.mul(t, 2.0)
        b = pypto.add(a, 1.0)
        c = pypto.mul(b, u)
        pypto.assemble(c, [h * SP, 0], out)


def permout_wrapper(x, w):
    B, S = x.shape[0], x.shape[1]
    pad = ((0, 0), (0, SP - S), (0, 0), (0, 0))
    x2 = np.ascontiguousarray(np.pad(x, pad).transpose(0, 2, 1, 3)).reshape(B * H * SP, D)
    w2 = np.ascontiguousarray(np.pad(w, pad).transpose(0, 2, 1, 3)).reshape(B * H * SP, D)
    out = np.zeros((B * H * SP, D), dtype=np.float32)
    permout_kernel(x2, w2, out)
    y = out.reshape(B, H, SP, D).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(y[:, :S])
