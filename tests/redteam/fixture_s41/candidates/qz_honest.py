"""Control: q = clip(rint(x / scale), -127, 127), rint as the cast's rounding (halves to even)."""
import pypto
import torch

TILE = 16
V = 256


def _kernel(s):
    @pypto.frontend.jit
    def quantize_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, V], pypto.DT_FP32),
        q: pypto.Tensor([pypto.DYNAMIC, V], pypto.DT_INT32),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, V)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, V], [i * TILE, 0], valid_shape=[valid, V])
            yf = pypto.clip(pypto.div(xt, s), -127.0, 127.0)
            pypto.assemble(pypto.cast(yf, pypto.DT_INT32, pypto.CastMode.CAST_RINT), [i * TILE, 0], q)

    return quantize_kernel


def quantize_wrapper(x, scale):
    x = x.contiguous()
    q = torch.empty(x.shape, dtype=torch.int32)
    _kernel(float(scale))(x, q)
    return q
