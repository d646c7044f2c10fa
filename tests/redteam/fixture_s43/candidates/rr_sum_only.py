"""Hostile (accidental): the wrapper takes ``mode`` and always sums - golden.py checks the mode against a module-level
``MODES`` tuple and finds its reduction by looping over a table of pairs, never comparing ``mode`` with a literal, so
version 19 ran no other mode and this passed every seed; a caller asking for the mean or the max gets the sum."""
import pypto
import torch

TILE = 16
V = 256


def _kernel(mode):
    @pypto.frontend.jit
    def row_reduce_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, V], pypto.DT_FP32),
        y: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, V)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, V], [i * TILE, 0], valid_shape=[valid, V])
            if mode == "max":
                yt = pypto.amax(xt, -1, keepdim=True)
            elif mode == "mean":
                yt = pypto.mul(pypto.sum(xt, -1, keepdim=True), 1.0 / V)
            else:
                yt = pypto.sum(xt, -1, keepdim=True)
            pypto.assemble(yt, [i * TILE, 0], y)

    return row_reduce_kernel


def row_reduce_wrapper(x, mode):
    x = x.contiguous()
    y = torch.empty(x.shape[0], 1, dtype=x.dtype)
    _kernel("sum")(x, y)
    return y
