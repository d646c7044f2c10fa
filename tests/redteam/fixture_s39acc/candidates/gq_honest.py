"""gqa_decode: per sequence and kv head, the GROUP query heads that share it as one [GROUP, D] matmul against that head's [S, D] keys; softmax over S; times the values."""

import numpy as np
import pypto

H = 8
KVH = 2
GROUP = H // KVH
S = 32
D = 16
SCALE = 1.0 / D ** 0.5


@pypto.frontend.jit
def gqa_kernel(
    q: pypto.Tensor([pypto.DYNAMIC, H, D], pypto.DT_FP32),
    k: pypto.Tensor([pypto.DYNAMIC, S, KVH, D], pypto.DT_FP32),
    v: pypto.Tensor([pypto.DYNAMIC, S, KVH, D], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, H, D], pypto.DT_FP32),
):
    b_count = q.shape[0]
    for b in pypto.loop(b_count, name="seq", idx_name="b"):
        for g in range(KVH):
            pypto.set_vec_tile_shapes(1, S, 1, D)
            qg = pypto.reshape(pypto.view(q, [1, GROUP, D], [b, g * GROUP, 0]), [GROUP, D])
            kg = pypto.reshape(pypto.view(k, [1, S, 1, D], [b, 0, g, 0]), [S, D])
            vg = pypto.reshape(pypto.view(v, [1, S, 1, D], [b, 0, g, 0]), [S, D])
            pypto.set_cube_tile_shapes([16, 16], [16, 16], [32, 32])
            pypto.set_vec_tile_shapes(GROUP, S)
            s = pypto.mul(pypto.matmul(qg, kg, pypto.DT_FP32, b_trans=True), SCALE)     # [GROUP, S]
            e = pypto.exp(pypto.sub(s, pypto.amax(s, -1, True)))
            p = pypto.div(e, pypto.sum(e, -1, True))
            o = pypto.matmul(p, vg, pypto.DT_FP32)                                      # [GROUP, D]
            pypto.set_vec_tile_shapes(1, GROUP, D)
            pypto.assemble(pypto.reshape(o, [1, GROUP, D]), [b, g * GROUP, 0], out)


def gqa_decode_wrapper(q, k, v):
    out = np.zeros(q.shape, dtype=np.float32)
    gqa_kernel(q, k, v, out)
    return out
