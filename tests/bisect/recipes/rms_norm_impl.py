"""workspace/rms_norm with two checkpoint tensors (the recipe of docs/bisect.md).

Three edits to the verified kernel, nothing else: (1) two kernel parameters named like golden.py's
intermediates ``ms`` and ``inv``, anywhere among the tensor parameters; (2) the kernel assembles its tiles of
those values into them; (3) the wrapper allocates them. The wrapper's signature (what verify calls) is
unchanged and it still returns only ``y``, so verify judges this file exactly like the original.
"""

import numpy as np
import pypto

TILE = 16
D = 512
EPS = 1.0e-6


@pypto.frontend.jit
def rms_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    gamma: pypto.Tensor([1, D], pypto.DT_BF16),
    ms: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),       # checkpoint (golden `ms`)
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    inv: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),      # checkpoint (golden `inv`)
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        xf = pypto.cast(xt, pypto.DT_FP32)                               # [TILE, D]
        gf = pypto.cast(gamma, pypto.DT_FP32)                            # [1, D]
        ssq = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)             # [TILE, 1]
        ms_t = pypto.div(ssq, float(D))                                  # [TILE, 1]
        pypto.assemble(ms_t, [i * TILE, 0], ms)
        inv_t = pypto.rsqrt(pypto.add(ms_t, EPS))                        # [TILE, 1]
        pypto.assemble(inv_t, [i * TILE, 0], inv)
        yf = pypto.mul(pypto.mul(xf, inv_t), gf)                         # [TILE, D]
        yt = pypto.cast(yf, pypto.DT_BF16)                               # [TILE, D]
        pypto.assemble(yt, [i * TILE, 0], y)


def rms_norm_wrapper(x, gamma):
    y = np.zeros_like(x)
    gamma_row = gamma.reshape(1, D)
    tiles = (x.shape[0] + TILE - 1) // TILE
    ms = np.zeros((x.shape[0], 1), np.float32)                     # checkpoint
    inv = np.zeros((tiles * TILE, 1), np.float32)                  # checkpoint, padded to whole tiles
    rms_norm_kernel(x, gamma_row, ms, y, inv)
    return y
