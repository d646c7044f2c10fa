"""threshold (honest): y = x where x > threshold else value."""
import pypto
import torch

TILE = 16
D = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _kernel_for(tdtype, threshold, value):
    key = (tdtype, threshold, value)
    if key in _KERNELS:
        return _KERNELS[key]
    dt = _DT[tdtype]

    @pypto.frontend.jit
    def threshold_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
            keep = pypto.greater(xf, threshold)
            yf = pypto.where(keep, xf, pypto.add(pypto.mul(xf, 0.0), value))
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    _KERNELS[key] = threshold_kernel
    return threshold_kernel


def threshold_wrapper(x, threshold, value):
    x = x.contiguous()
    y = torch.empty_like(x)
    threshold_kernel = _kernel_for(x.dtype, float(threshold), float(value))
    threshold_kernel(x, y)
    return y
