"""IDEA (control, qk_norm op: fp16 + bf16): honest per-head RMSNorm over [B*H*S, D] rows, 16-row tiles, last one with
a valid shape; one jit kernel per dtype, fp32 inside."""
import pypto
import torch

TILE = 16
D = 64
EPS = 1.0e-6
_DTYPES = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _kernel_for(tdtype):
    if tdtype in _KERNELS:
        return _KERNELS[tdtype]
    dt = _DTYPES[tdtype]

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

    _KERNELS[tdtype] = rms_kernel
    return rms_kernel


def qk_norm_wrapper(q, gamma):
    b, h, s, d = q.shape
    xr = q.contiguous().reshape(b * h * s, d)
    y = torch.empty_like(xr)
    rms_kernel = _kernel_for(xr.dtype)
    rms_kernel(xr, gamma.contiguous().reshape(1, d), y)
    return y.reshape(b, h, s, d)
