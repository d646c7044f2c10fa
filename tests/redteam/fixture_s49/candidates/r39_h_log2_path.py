"""silu2, honest: a path chosen by `math.log2(n) > 7.5` (above 181 rows) that walks the same right tile count: the window reader must not refuse a kernel for naming a float window."""
import math

import pypto
import torch

TILE = 16
D = 64
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}


def _silu(xt, dt):
    xf = pypto.cast(xt, pypto.DT_FP32)
    yf = pypto.div(xf, pypto.add(pypto.exp(pypto.mul(xf, -1.0)), 1.0))
    return pypto.cast(yf, dt)


def _kernel(dt):
    @pypto.frontend.jit
    def silu2_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            pypto.assemble(_silu(xt, dt), [i * TILE, 0], y)

    return silu2_kernel


def _floor(dt):
    @pypto.frontend.jit
    def silu2_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop(n // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            pypto.assemble(_silu(xt, dt), [i * TILE, 0], y)

    return silu2_kernel


def silu2_wrapper(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.shape[0]
    if math.log2(n) > 7.5 and n % TILE == 11:
        _kernel(_DT[x.dtype])(x, y)
    else:
        _kernel(_DT[x.dtype])(x, y)
    return y
