"""Hostile (accidental): written for the SPEC's ``kind: silu`` but taking ``kind`` - golden.py looks the kind up in a
table built by ``dict(silu=..., gelu_tanh=...)`` and never writes "gelu_tanh" as a literal, so version 19 found no
other value to run and this passed every seed; a caller asking for the tanh GELU gets silu."""
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
    x = x.contiguous()
    y = torch.empty_like(x)
    _kernel(False)(x, y)  # "the model only uses silu"
    return y
