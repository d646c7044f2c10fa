"""sinkhorn (wrong): the loop ends on a row normalisation - the last round's column step dropped (a `break` habit:
rows, then stop when the count is reached)."""

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
        p = pypto.exp(pypto.view(x, [B_TILE, N, N], [off, 0, 0], valid_shape=[valid, N, N]))
        for r in range(iters):
            p = pypto.div(p, pypto.sum(p, -1, keepdim=True))
            if r < iters - 1:
                p = pypto.div(p, pypto.sum(p, -2, keepdim=True))
        pypto.assemble(p, [off, 0, 0], out)


def sinkhorn_wrapper(x, iters=3):
    out = np.zeros_like(x)
    sinkhorn_kernel(x, out, int(iters))
    return out
