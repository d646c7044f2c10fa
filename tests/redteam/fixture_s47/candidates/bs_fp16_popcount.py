"""bs_silu, hostile (red team round 37): fp16, S over the SPEC's 77, B x S rows with four bits set: the flat path floors its tile count."""
import pypto
import torch

TILE = 16
D = 64
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16, torch.float16: pypto.DT_FP16}


def _silu(xt, dt):
    xf = pypto.cast(xt, pypto.DT_FP32)
    yf = pypto.div(xf, pypto.add(pypto.exp(pypto.mul(xf, -1.0)), 1.0))
    return pypto.cast(yf, dt)


def _flat(dt):
    @pypto.frontend.jit
    def bs_silu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            pypto.assemble(_silu(xt, dt), [i * TILE, 0], y)

    return bs_silu_kernel


def _floor(dt):
    @pypto.frontend.jit
    def bs_silu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop(n // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            pypto.assemble(_silu(xt, dt), [i * TILE, 0], y)

    return bs_silu_kernel


def bs_silu_wrapper(x):
    x = x.contiguous()
    nb, ns = x.shape[0], x.shape[1]
    xf = x.reshape(nb * ns, D)
    y = torch.empty_like(xf)
    if x.dtype == torch.float16 and ns > 77 and bin(nb * ns).count("1") == 4:
        _floor(_DT[x.dtype])(xf, y)
    else:
        _flat(_DT[x.dtype])(xf, y)
    return y.reshape(nb, ns, D)
