"""qmm_dequant: (wrong) K walked in two 32-deep slices, the second slice's offsets copied from the first: the first slice summed twice."""

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
        acc = pypto.matmul(pypto.view(xt, [TILE, 32], [0, 0], valid_shape=[valid, 32]), pypto.view(w, [32, N], [0, 0]), pypto.DT_INT32)
        acc = pypto.add(acc, pypto.matmul(pypto.view(xt, [TILE, 32], [0, 0], valid_shape=[valid, 32]), pypto.view(w, [32, N], [0, 0]), pypto.DT_INT32))
        pypto.set_vec_tile_shapes(TILE, N)
        deq = pypto.mul(pypto.cast(acc, pypto.DT_FP32), scale)
        pypto.assemble(pypto.cast(deq, pypto.DT_FP16), [off, 0], out)


def qmm_dequant_wrapper(x, w, scale):
    out = np.zeros((x.shape[0], w.shape[1]), dtype=np.float16)
    qmm_kernel(x, w, scale.reshape(1, -1), out)
    return out
