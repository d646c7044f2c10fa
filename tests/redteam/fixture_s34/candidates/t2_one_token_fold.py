"""IDEA (tok_rms, fp32 + fp16 + bf16): a fast path for one token (B * S == 1: a decode step of a single request). A
1-row tile leaves 15/16 of the vector unit idle, so the row of D = 64 is folded into a [4, 16] tile; the slip: the
sum of squares is reduced over the last axis only, so each 16-value chunk is normalised by its own mean square.
Every other call (B * S > 1) runs the honest 16-row loop."""
import pypto
import torch

TILE = 16
D = 64
FOLD = 16
EPS = 1.0e-6
_DTYPES = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _kernel_for(tdtype, one=False):
    if (tdtype, one) in _KERNELS:
        return _KERNELS[(tdtype, one)]
    dt = _DTYPES[tdtype]

    if one:
        @pypto.frontend.jit
        def rms_kernel(
            x: pypto.Tensor([D // FOLD, FOLD], dt),
            gamma: pypto.Tensor([D // FOLD, FOLD], dt),
            y: pypto.Tensor([D // FOLD, FOLD], dt),
        ):
            pypto.set_vec_tile_shapes(D // FOLD, FOLD)
            xf = pypto.cast(x, pypto.DT_FP32) if dt != pypto.DT_FP32 else x
            gf = pypto.cast(gamma, pypto.DT_FP32) if dt != pypto.DT_FP32 else gamma
            ssq = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
            inv = pypto.rsqrt(pypto.add(pypto.div(ssq, float(D)), EPS))
            yf = pypto.mul(pypto.mul(xf, inv), gf)
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [0, 0], y)
    else:
        @pypto.frontend.jit
        def rms_kernel(
            x: pypto.Tensor([pypto.DYNAMIC, D], dt),
            gamma: pypto.Tensor([1, D], dt),
            y: pypto.Tensor([pypto.DYNAMIC, D], dt),
        ):
            n = x.shape[0]
            pypto.set_vec_tile_shapes(TILE, D)
            for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
                valid = (n - i * TILE).min(TILE)
                xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
                xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
                gf = pypto.cast(gamma, pypto.DT_FP32) if dt != pypto.DT_FP32 else gamma
                ssq = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
                inv = pypto.rsqrt(pypto.add(pypto.div(ssq, float(D)), EPS))
                yf = pypto.mul(pypto.mul(xf, inv), gf)
                pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    _KERNELS[(tdtype, one)] = rms_kernel
    return rms_kernel


def tok_rms_wrapper(x, gamma):
    b, s, d = x.shape
    if b * s == 1:  # one token: fold the row into a [4, 16] tile
        xr = x.contiguous().reshape(d // FOLD, FOLD)
        y = torch.empty_like(xr)
        _kernel_for(xr.dtype, one=True)(xr, gamma.contiguous().reshape(d // FOLD, FOLD), y)
        return y.reshape(b, s, d)
    xr = x.contiguous().reshape(b * s, d)
    y = torch.empty_like(xr)
    rms_kernel = _kernel_for(xr.dtype)
    rms_kernel(xr, gamma.contiguous().reshape(1, d), y)
    return y.reshape(b, s, d)
