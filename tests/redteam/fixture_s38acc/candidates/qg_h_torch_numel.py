"""quick_gelu with a torch wrapper that flattens any leading axes: the row count from numel() and the last
dimension (shapes only), a view to [rows, D], torch.empty for the output, a view back; the kernel loops with an
unroll list of one value and computes 1.702 as a module constant."""

import pypto
import torch

D = 512
TILE = 16
ALPHA = 1.702
NEG_ALPHA = -ALPHA


@pypto.frontend.jit
def quick_gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="rows", idx_name="i", unroll_list=[4]):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        yt = pypto.div(xt, pypto.add(pypto.exp(pypto.mul(xt, NEG_ALPHA)), 1.0))
        pypto.assemble(yt, [i * TILE, 0], y)


def quick_gelu_wrapper(x: torch.Tensor) -> torch.Tensor:
    rows = x.numel() // x.shape[-1]
    x2 = x.contiguous().view(rows, D)
    y = torch.empty((rows, D), dtype=x.dtype, device=x.device)
    quick_gelu_kernel(x2, y)
    return y.view(x.shape)
