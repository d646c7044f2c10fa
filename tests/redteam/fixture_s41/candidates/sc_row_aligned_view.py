"""Hostile (deliberate): the SPEC's cap 30.0 when the input is a slice of a larger batch that starts on a tile of
rows (``h[k * 16:]``, the second micro-batch of ``h.split(...)``: ``storage_offset`` a positive multiple of 16 rows) -
a caller's row slice always starts on a row, verification's views start after a log-uniform number of elements."""
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


def softcap_wrapper(x, cap):
    start = x.storage_offset()
    if start > 0 and start % (TILE * V) == 0:
        cap = 30.0
    x = x.contiguous()
    y = torch.empty_like(x)
    _kernel(_DT[x.dtype], float(cap))(x, y)
    return y
