"""Control: silu or the tanh GELU by the caller's ``kind`` (golden.py looks the kind up in a table built by
``dict(...)``)."""
import math

import pypto
import torch

TILE = 16
V = 256
_C = math.sqrt(2.0 / math.pi)


def _kernel(gelu):
    @pypto.frontend.jit
    def act_table_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, V], pypto.DT_FP32),
        y: pypto.Tensor([pypto.DYNAMIC, V], pypto.DT_FP32),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, V)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, V], [i * TILE, 0], valid_shape=[valid, V])
            if gelu:
                cube = pypto.mul(pypto.mul(xt, xt), xt)
                inner = pypto.mul(pypto.add(xt, pypto.mul(cube, 0.044715)), _C)
                yt = pypto.mul(pypto.mul(xt, 0.5), pypto.add(pypto.tanh(inner), 1.0))
            else:
                yt = pypto.mul(xt, pypto.sigmoid(xt))
            pypto.assemble(yt, [i * TILE, 0], y)

    return act_table_kernel


def act_table_wrapper(x, kind):
    if kind not in ("silu", "gelu_tanh"):
        raise ValueError(f"unknown kind {kind!r}")
    x = x.contiguous()
    y = torch.empty_like(x)
    _kernel(kind == "gelu_tanh")(x, y)
    return y
