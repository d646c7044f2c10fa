"""softmax over the last axis: bf16 in/out, fp32 inside, 16-row tiles over dynamic rows."""

import pypto
import torch

TILE_ROWS = 16
D = 256


@pypto.frontend.jit
def softmax_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
):
    pypto.set_vec_tile_shapes(TILE_ROWS, D)
    rows = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(rows, TILE_ROWS), name="rows", idx_name="i"):
        valid = (rows - i * TILE_ROWS).min(TILE_ROWS)
        xt = pypto.view(x, [TILE_ROWS, D], [i * TILE_ROWS, 0], valid_shape=[valid, D])
        xf = pypto.cast(xt, pypto.DT_FP32)
        m = pypto.amax(xf, -1, keepdim=True)
        e = pypto.exp(pypto.sub(xf, m))
        s = pypto.sum(e, -1, keepdim=True)
        yt = pypto.cast(pypto.div(e, s), pypto.DT_BF16)
        pypto.assemble(yt, [i * TILE_ROWS, 0], y)


def softmax(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    softmax_kernel(x, y)
    return y
