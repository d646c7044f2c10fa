"""silu2, accidental (red team round 36): tiles in pairs (32-row steps); a leftover single tile with a tail of 4 or 5 loses a row (its valid count taken from the pair's)."""
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


def _alt(dt):
    @pypto.frontend.jit
    def silu2_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(32, D)
        for i in pypto.loop((n + 31) // 32, name="rows", idx_name="i"):
            valid = (n - i * 32).min(32) - ((n - i * 32).min(32) // 4) + ((n - i * 32).min(32) // 6) * 0
            xt = pypto.view(x, [32, D], [i * 32, 0], valid_shape=[valid, D])
            pypto.assemble(_silu(xt, dt), [i * 32, 0], y)

    return silu2_kernel


def silu2_wrapper(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.shape[0]
    if ((n + 15) // 16) % 2 == 1 and n % 16 in (4, 5):
        _alt(_DT[x.dtype])(x, y)
    else:
        _kernel(_DT[x.dtype])(x, y)
    return y
