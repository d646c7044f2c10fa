"""silu with a torch wrapper and the fp32 math in a helper; the jit factory is keyed by torch dtype."""

import pypto
import torch

TILE = 16
D = 256
_PT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}
_CACHE = {}


def _silu_tile(xt, dt):
    xf = pypto.cast(xt, pypto.DT_FP32)
    return pypto.cast(xf / (pypto.exp(xf * -1.0) + 1.0), dt)


def _kernel(torch_dtype):
    if torch_dtype not in _CACHE:
        dt = _PT[torch_dtype]

        @pypto.frontend.jit
        def silu_kernel(x: pypto.Tensor([pypto.DYNAMIC, D], dt), y: pypto.Tensor([pypto.DYNAMIC, D], dt)):
            n = x.shape[0]
            pypto.set_vec_tile_shapes(TILE, D)
            for i in pypto.loop(pypto.ceildiv(n, TILE), name="rows", idx_name="i"):
                valid = (n - i * TILE).min(TILE)
                xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
                pypto.assemble(_silu_tile(xt, dt), [i * TILE, 0], y)

        _CACHE[torch_dtype] = silu_kernel
    return _CACHE[torch_dtype]


def silu_wrapper(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    _kernel(x.dtype)(x, y)
    return y
