"""sinkhorn, honest: exp of the row-max-shifted logits, as a softmax is written (the shift is a per-row factor
the first row normalisation removes), then the rounds as usual."""

import numpy as np
import pypto

B_TILE = 8
N = 8


@pypto.frontend.jit
def sinkhorn_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, N, N], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, N, N], pypto.DT_FP32),
    iters: int,
):
    b = x.shape[0]
    pypto.set_vec_tile_shapes(B_TILE, N, N)
    for i in pypto.loop((b + B_TILE - 1) // B_TILE, name="b_loop", idx_name="i"):
        off = i * B_TILE
        valid = (b - off).min(B_TILE)
        xt = pypto.view(x, [B_TILE, N, N], [off, 0, 0], valid_shape=[valid, N, N])
        p = pypto.exp(pypto.sub(xt, pypto.amax(xt, -1, keepdim=True)))
        for _ in range(iters):
            p = pypto.div(p, pypto.sum(p, -1, keepdim=True))
            p = pypto.div(p, pypto.sum(p, -2, keepdim=True))
        pypto.assemble(p, [off, 0, 0], out)


def sinkhorn_wrapper(x, iters=3):
    out = np.zeros_like(x)
    sinkhorn_kernel(x, out, int(iters))
    return out
