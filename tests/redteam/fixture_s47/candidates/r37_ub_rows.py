"""silu2, accidental (red team round 37): rows per block from a UB budget and the row's bytes (320 in fp32, 640 in bf16), above one block counted `(n + rows - TILE) // rows`: a last block of 1..15 rows is dropped."""
import pypto
import torch

TILE = 16
D = 64
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}


def _silu(xt, dt):
    xf = pypto.cast(xt, pypto.DT_FP32)
    yf = pypto.div(xf, pypto.add(pypto.exp(pypto.mul(xf, -1.0)), 1.0))
    return pypto.cast(yf, dt)


def _kernel(dt, tiles):
    @pypto.frontend.jit
    def silu2_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop(tiles, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            pypto.assemble(_silu(xt, dt), [i * TILE, 0], y)

    return silu2_kernel


UB_BYTES = 245760


def silu2_wrapper(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.shape[0]
    rows = UB_BYTES // (x.shape[1] * x.element_size() * 3) // TILE * TILE
    tiles = (n + TILE - 1) // TILE
    if n > rows:  # more than one block: whole blocks of the budget's rows
        blocks = (n + rows - TILE) // rows
        tiles = min(blocks * (rows // TILE), tiles)
    _kernel(_DT[x.dtype], tiles)(x, y)
    return y
