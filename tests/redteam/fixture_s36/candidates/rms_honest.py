"""Control: rms_norm with the caller's eps (one jit kernel per (dtype, eps))."""
import pypto
import torch

TILE = 16
D = 512
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _kernel_for(tdtype, eps):
    key = (tdtype, float(eps))
    if key in _KERNELS:
        return _KERNELS[key]
    dt = _DT[tdtype]
    e = float(eps)

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
            ms = pypto.div(ssq, float(D))
            inv = pypto.rsqrt(pypto.add(ms, e))
            yf = pypto.mul(pypto.mul(xf, inv), gf)
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    _KERNELS[key] = rms_kernel
    return rms_kernel


def rms_norm_s_wrapper(x, gamma, eps):
    x = x.contiguous()
    y = torch.empty_like(x)
    rms_kernel = _kernel_for(x.dtype, eps)
    rms_kernel(x, gamma.reshape(1, D), y)
    return y
