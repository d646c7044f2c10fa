"""Hostile (accidental): "no allocation per call" - the output buffer of each shape and dtype is kept and handed
back on every call, so a caller's earlier result is overwritten by the next call of the same shape
(``a = softcap(x1); b = softcap(x2)``: ``a is b``)."""
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
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    return softcap_kernel


_OUT = {}


def softcap_wrapper(x, cap):
    x = x.contiguous()
    key = (tuple(x.shape), x.dtype)
    if key not in _OUT:
        _OUT[key] = torch.empty_like(x)
    y = _OUT[key]
    _kernel(_DT[x.dtype], float(cap))(x, y)
    return y
