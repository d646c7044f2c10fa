"""y = q * w per KV-head group: the query's heads grouped [NKV, G, D] by a reshape (contiguous heads per group),
each group scaled by its weight row (bisect test op)."""

import numpy as np
import pypto

NQ, NKV, D = 8, 2, 16
G = NQ // NKV


@pypto.frontend.jit
def grouped_kernel(
    q: pypto.Tensor([NQ, D], pypto.DT_FP32),
    w: pypto.Tensor([NKV, D], pypto.DT_FP32),
    y: pypto.Tensor([NQ, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(NKV, G, D)
    q_3d = pypto.tensor([NKV, G, D], pypto.DT_FP32, "q_3d")
    q_3d[:] = pypto.reshape(q, [NKV, G, D])
    w_3d = pypto.reshape(w, [NKV, 1, D])
    o_3d = pypto.mul(q_3d, w_3d)
    y[:] = pypto.reshape(o_3d, [NQ, D])


def grouped_wrapper(q, w):
    y = np.zeros_like(q)
    grouped_kernel(q, w, y)
    return y
