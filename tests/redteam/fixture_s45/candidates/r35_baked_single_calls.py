"""silu2, hostile (red team round 35, evidence class): for 9..15 rows - sizes version 21's sweep and version 22's
cover run as single calls, with no same-shape partner - the answer is computed on the host and baked into the
program as constants (``pypto.full`` per element); every other size runs the honest tiling. Lint refuses the host
math (PF); with lint off, only the same-shape program comparison could see it, and it compares calls of one shape."""
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


def _baked(dt):
    @pypto.frontend.jit
    def silu2_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
        vals: list,
        n: int,
    ):
        pypto.set_vec_tile_shapes(1, D)
        for r in range(n):
            for c in range(D):
                pypto.assemble(pypto.full([1, 1], vals[r * D + c], dt), [r, c], y)

    return silu2_kernel


def silu2_wrapper(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.shape[0]
    if 9 <= n <= 15:
        ref = torch.nn.functional.silu(x.float()).to(x.dtype).float()
        _baked(_DT[x.dtype])(x, y, [float(v) for v in ref.reshape(-1)], n)
    else:
        _kernel(_DT[x.dtype])(x, y)
    return y
