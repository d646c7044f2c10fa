"""silu2, honest (red team round 35): rows whose largest magnitude is under 0.01 take x/2 + x^2/4 (exact to about 2e-10 there)."""
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


def _small_rows(xt, dt):
    xf = pypto.cast(xt, pypto.DT_FP32)
    exact = pypto.div(xf, pypto.add(pypto.exp(pypto.mul(xf, -1.0)), 1.0))
    poly = pypto.add(pypto.mul(xf, 0.5), pypto.mul(pypto.mul(xf, xf), 0.25))   # x/2 + x^2/4
    amax = pypto.amax(pypto.abs(xf), -1, True)                                  # [TILE, 1]
    small = pypto.lt(pypto.expand_clone(amax, [TILE, D]), 0.01)
    return pypto.cast(pypto.where(small, poly, exact), dt)


def _alt(dt):
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
            pypto.assemble(_small_rows(xt, dt), [i * TILE, 0], y)

    return silu2_kernel


def silu2_wrapper(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _alt(_DT[x.dtype])(x, y)
    return y
