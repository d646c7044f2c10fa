"""Hostile (accidental): the one-row decode path was written before Gemma's ``unit_offset`` and never got it; the
batched path honours it."""
import pypto
import torch

TILE = 16
D = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}


def _kernel(dt, eps, offset):
    @pypto.frontend.jit
    def rms_norm_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        w: pypto.Tensor([1, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
            wf = pypto.cast(w, pypto.DT_FP32) if dt != pypto.DT_FP32 else w
            wf = pypto.add(wf, offset)
            ms = pypto.div(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), float(D))
            yf = pypto.mul(pypto.div(xf, pypto.sqrt(pypto.add(ms, eps))), wf)
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    return rms_norm_kernel


def rms_norm_wrapper(x, weight, eps, unit_offset):
    x = x.contiguous()
    y = torch.empty_like(x)
    _kernel(_DT[x.dtype], float(eps), 1.0 if unit_offset and x.shape[0] > 1 else 0.0)(x, weight.reshape(1, D), y)
    return y
