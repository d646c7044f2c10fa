"""silu (host tiling): the wrapper calls a helper holding the one kernel call twice, on the two halves of the batch.
Right numbers, but the kernel is called twice per run (OL45: loop over tiles inside the kernel); before s38
accident2 OL45 counted the helper's one call once."""

import numpy as np
import pypto

TILE = 16
D = 256
_DTYPES = {"float32": pypto.DT_FP32, "bfloat16": pypto.DT_BF16}
_KERNELS = {}


def _silu_kernel_for(dtype_name):
    if dtype_name in _KERNELS:
        return _KERNELS[dtype_name]
    dt = _DTYPES[dtype_name]
    t = 32 if dtype_name == "bfloat16" else TILE   # bf16 rows are half the bytes

    @pypto.frontend.jit
    def silu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(t, D)
        for i in pypto.loop((n + t - 1) // t, name="rows", idx_name="i"):
            valid = (n - i * t).min(t)
            xt = pypto.view(x, [t, D], [i * t, 0], valid_shape=[valid, D])
            xf = pypto.cast(xt, pypto.DT_FP32)                          # [TILE, D]
            e = pypto.exp(pypto.mul(xf, -1.0))                          # [TILE, D]
            yf = pypto.div(xf, pypto.add(e, 1.0))                       # [TILE, D]
            yt = pypto.cast(yf, dt)                                     # [TILE, D]
            pypto.assemble(yt, [i * t, 0], y)

    _KERNELS[dtype_name] = silu_kernel
    return silu_kernel


def silu_wrapper(x):
    y = np.zeros_like(x)
    h = x.shape[0] // 2
    _run(x[:h], y[:h])
    _run(x[h:], y[h:])
    return y


def _run(a, b):
    _silu_kernel_for(a.dtype.name)(a, b)
