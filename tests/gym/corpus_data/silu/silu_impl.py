"""SiLU with one jit kernel per dtype (fp32 computes directly, bf16 casts around the fp32 body)."""

import pypto
import torch

TILE_ROWS = 16
D = 128


@pypto.frontend.jit
def silu_fp32_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(TILE_ROWS, D)
    rows = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(rows, TILE_ROWS), name="rows", idx_name="i"):
        valid = (rows - i * TILE_ROWS).min(TILE_ROWS)
        xt = pypto.view(x, [TILE_ROWS, D], [i * TILE_ROWS, 0], valid_shape=[valid, D])
        yt = pypto.div(xt, pypto.add(pypto.exp(pypto.mul(xt, -1.0)), 1.0))
        pypto.assemble(yt, [i * TILE_ROWS, 0], y)


@pypto.frontend.jit
def silu_bf16_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
):
    pypto.set_vec_tile_shapes(TILE_ROWS, D)
    rows = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(rows, TILE_ROWS), name="rows", idx_name="i"):
        valid = (rows - i * TILE_ROWS).min(TILE_ROWS)
        xt = pypto.view(x, [TILE_ROWS, D], [i * TILE_ROWS, 0], valid_shape=[valid, D])
        xf = pypto.cast(xt, pypto.DT_FP32)
        yf = pypto.div(xf, pypto.add(pypto.exp(pypto.mul(xf, -1.0)), 1.0))
        pypto.assemble(pypto.cast(yf, pypto.DT_BF16), [i * TILE_ROWS, 0], y)


_KERNELS = {torch.float32: silu_fp32_kernel, torch.bfloat16: silu_bf16_kernel}


def silu(x: torch.Tensor) -> torch.Tensor:
    if x.dtype not in _KERNELS:
        raise TypeError(f"silu: unsupported dtype {x.dtype}")
    y = torch.empty_like(x)
    _KERNELS[x.dtype](x, y)
    return y
