"""Hostile (accidental, one dtype): the bf16 result is cast with CAST_TRUNC (the mode copied from an int path) -
every bf16 output rounded towards zero, up to one bf16 step (0.4%) low in magnitude, all in the same direction:
inside the bf16 tolerance element by element, a bias a sum over many tokens accumulates. The fp32 path is exact."""
import pypto
import torch

TILE = 16
V = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}


def _kernel(dt, c):
    @pypto.frontend.jit
    def softcap_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, V], dt),
        y: pypto.Tensor([pypto.DYNAMIC, V], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, V)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, V], [i * TILE, 0], valid_shape=[valid, V])
            xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
            yf = pypto.mul(pypto.tanh(pypto.div(xf, c)), c)
            yo = pypto.cast(yf, dt, pypto.CastMode.CAST_TRUNC) if dt != pypto.DT_FP32 else yf
            pypto.assemble(yo, [i * TILE, 0], y)

    return softcap_kernel


def softcap_wrapper(x, cap):
    x = x.contiguous()
    y = torch.empty_like(x)
    _kernel(_DT[x.dtype], float(cap))(x, y)
    return y
