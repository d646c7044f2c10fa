"""mulr: a square path when both inputs are one tensor (mulr(x, x)), written x * |x| (wrong for negative x)."""
import pypto
import torch

TILE = 16
D = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}


def _kernel_for(tdtype, square):
    dt = _DT[tdtype]

    @pypto.frontend.jit
    def mulr_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        r: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            rt = pypto.view(r, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
            rf = pypto.cast(rt, pypto.DT_FP32) if dt != pypto.DT_FP32 else rt
            yf = pypto.mul(xf, pypto.mul(xf, 0.5)) if square else pypto.mul(xf, rf)
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    return mulr_kernel


def mulr_wrapper(x, r):
    square = len({x, r}) == 1
    x, r = x.contiguous(), r.contiguous()
    y = torch.empty_like(x)
    mulr_kernel = _kernel_for(x.dtype, square)
    mulr_kernel(x, r, y)
    return y
