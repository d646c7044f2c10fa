"""bs_silu, honest (red team round 36): a batched path for B over a tile with a tail of 9..14, written the same way (every batch row)."""
import pypto
import torch

TILE = 16
D = 64
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16, torch.float16: pypto.DT_FP16}


def _silu(xt, dt):
    xf = pypto.cast(xt, pypto.DT_FP32)
    yf = pypto.div(xf, pypto.add(pypto.exp(pypto.mul(xf, -1.0)), 1.0))
    return pypto.cast(yf, dt)


def _kernel(dt):
    @pypto.frontend.jit
    def bs_silu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, D], dt),
    ):
        nb = x.shape[0]
        ns = x.shape[1]
        pypto.set_vec_tile_shapes(1, TILE, D)
        for b in pypto.loop(nb, name="batch", idx_name="b"):
            for i in pypto.loop((ns + TILE - 1) // TILE, name="rows", idx_name="i"):
                valid = (ns - i * TILE).min(TILE)
                xt = pypto.view(x, [1, TILE, D], [b, i * TILE, 0], valid_shape=[1, valid, D])
                pypto.assemble(_silu(xt, dt), [b, i * TILE, 0], y)

    return bs_silu_kernel


def _alt(dt):
    @pypto.frontend.jit
    def bs_silu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, D], dt),
    ):
        nb = x.shape[0]
        ns = x.shape[1]
        pypto.set_vec_tile_shapes(1, TILE, D)
        for b in pypto.loop(nb, name="batch", idx_name="b"):
            for i in pypto.loop((ns + TILE - 1) // TILE, name="rows", idx_name="i"):
                valid = (ns - i * TILE).min(TILE)
                xt = pypto.view(x, [1, TILE, D], [b, i * TILE, 0], valid_shape=[1, valid, D])
                pypto.assemble(_silu(xt, dt), [b, i * TILE, 0], y)

    return bs_silu_kernel


def bs_silu_wrapper(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    nb, ns = x.shape[0], x.shape[1]
    if nb > 16 and 9 <= nb % 16 <= 14:
        _alt(_DT[x.dtype])(x, y)
    else:
        _kernel(_DT[x.dtype])(x, y)
    return y
