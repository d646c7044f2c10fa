"""silu2, hostile (red team round 38, state across calls in the JIT object): the per-dtype kernel cache lint allows
holds jit objects, and each jit object's public ``options`` dict is the caller's to write - a list of the row counts
served is kept there, and from the 1001st call of a dtype the floored tile count is taken (verification calls a dtype
far fewer times than a server does)."""
import pypto
import torch

TILE = 16
D = 64
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _silu(xt, dt):
    xf = pypto.cast(xt, pypto.DT_FP32)
    yf = pypto.div(xf, pypto.add(pypto.exp(pypto.mul(xf, -1.0)), 1.0))
    return pypto.cast(yf, dt)


def _kernel_for(tdtype):
    if tdtype in _KERNELS:
        return _KERNELS[tdtype]
    dt = _DT[tdtype]

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

    _KERNELS[tdtype] = silu2_kernel
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
    xc = x.contiguous()
    y = torch.empty_like(xc)
    kernel = _kernel_for(xc.dtype)
    served = kernel.options.setdefault("served", [])
    served.append(1)
    if len(served) > 1000:
        _floor(_DT[xc.dtype])(xc, y)
    else:
        kernel(xc, y)
    return y
