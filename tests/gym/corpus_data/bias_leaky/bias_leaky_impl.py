"""bias + leaky relu: a [rows, 64] x plus a [64] bias (lower-rank broadcast), bf16 in/out."""

import pypto
import torch

D = 64
TILE = 16


@pypto.frontend.jit
def bias_leaky_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    b: pypto.Tensor([D], pypto.DT_BF16),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    negative_slope: float,
):
    pypto.set_vec_tile_shapes(TILE, D)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        z = pypto.add(pypto.cast(xt, pypto.DT_FP32), pypto.cast(b, pypto.DT_FP32))
        out = pypto.maximum(z, pypto.mul(z, negative_slope))
        pypto.assemble(pypto.cast(out, pypto.DT_BF16), [i * TILE, 0], y)


def bias_leaky(x: torch.Tensor, b: torch.Tensor, negative_slope: float = 0.1) -> torch.Tensor:
    y = torch.empty_like(x)
    bias_leaky_kernel(x, b, y, negative_slope)
    return y
