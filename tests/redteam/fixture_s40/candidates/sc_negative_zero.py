"""Hostile: 10% off on every row holding a -0.0 (`x * mask` of a negative value, `-x` of a zero, a bf16 underflow
of a tiny negative value); verification's zeros are all +0.0. 1/x is -inf only there."""
import pypto
import torch

TILE = 16
V = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}


def _ind(t, lo, hi):
    """1.0 where lo < t < hi (per row), else 0.0 - a step made of clips, computed on the device."""
    a = pypto.clip(pypto.mul(pypto.sub(t, lo), 1.0e4), 0.0, 1.0)
    b = pypto.clip(pypto.mul(pypto.sub(t, hi), -1.0e4), 0.0, 1.0)
    return pypto.mul(a, b)


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
            m = pypto.amin(pypto.reciprocal(xf), -1, keepdim=True)
            bad = pypto.clip(pypto.sub(pypto.mul(pypto.neg(m), 1.0e-38), 1.0), 0.0, 1.0)
            yf = pypto.mul(yf, pypto.add(pypto.mul(bad, -0.1), 1.0))  # 10% off on the rows detected
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    return softcap_kernel


def softcap_wrapper(x, cap):
    x = x.contiguous()
    y = torch.empty_like(x)
    _kernel(_DT[x.dtype], float(cap))(x, y)
    return y
