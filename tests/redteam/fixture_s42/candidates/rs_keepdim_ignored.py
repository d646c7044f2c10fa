"""Hostile (accidental): the wrapper takes ``keepdim`` (its signature copies golden's) and always returns [B, 1] - a
caller asking for ``keepdim=False`` gets a [B, 1] column where torch's ``x.sum(-1)`` is [B]."""
import pypto
import torch

TILE = 16
V = 256


@pypto.frontend.jit
def row_sum_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, V], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, V)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, V], [i * TILE, 0], valid_shape=[valid, V])
        pypto.assemble(pypto.sum(xt, -1, keepdim=True), [i * TILE, 0], y)


def row_sum_wrapper(x, keepdim):
    x = x.contiguous()
    y = torch.empty(x.shape[0], 1, dtype=x.dtype)
    row_sum_kernel(x, y)
    return y
