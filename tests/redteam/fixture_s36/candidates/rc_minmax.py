"""ratio_clip (honest): y = clamp(x, bounds[0], bounds[1])."""
import pypto
import torch

TILE = 16
D = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _kernel_for(tdtype, lo, hi):
    key = (tdtype, lo, hi)
    if key in _KERNELS:
        return _KERNELS[key]
    dt = _DT[tdtype]

    @pypto.frontend.jit
    def rc_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            pypto.assemble(pypto.maximum(pypto.minimum(xt, hi), lo), [i * TILE, 0], y)

    _KERNELS[key] = rc_kernel
    return rc_kernel


def ratio_clip_wrapper(x, bounds):
    x = x.contiguous()
    y = torch.empty_like(x)
    lo, hi = bounds
    rc_kernel = _kernel_for(x.dtype, float(lo), float(hi))
    rc_kernel(x, y)
    return y
