"""qmm_dequant: (honest) the int8 operands cast to fp16 (exact) and multiplied with an fp32 accumulator and output (exact below 2**24)."""

import numpy as np
import pypto

TILE = 16
K = 64
N = 32


@pypto.frontend.jit
def qmm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_INT8),
    w: pypto.Tensor([K, N], pypto.DT_INT8),
    scale: pypto.Tensor([1, N], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
):
    m = x.shape[0]
    for i in pypto.loop((m + TILE - 1) // TILE, name="rows", idx_name="i"):
        off = i * TILE
        valid = (m - off).min(TILE)
        xt = pypto.view(x, [TILE, K], [off, 0], valid_shape=[valid, K])
        pypto.set_vec_tile_shapes(TILE, K)
        pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
        acc = pypto.matmul(pypto.cast(xt, pypto.DT_FP16), pypto.cast(w, pypto.DT_FP16), pypto.DT_FP32)
        pypto.set_vec_tile_shapes(TILE, N)
        deq = pypto.mul(acc, scale)
        pypto.assemble(pypto.cast(deq, pypto.DT_FP16), [off, 0], out)


def qmm_dequant_wrapper(x, w, scale):
    out = np.zeros((x.shape[0], w.shape[1]), dtype=np.float16)
    qmm_kernel(x, w, scale.reshape(1, -1), out)
    return out
