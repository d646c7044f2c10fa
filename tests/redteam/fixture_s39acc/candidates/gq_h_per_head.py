"""gqa_decode: (honest) one query head at a time, kv head h // GROUP."""

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
        for h in range(H):
            kvh = h // GROUP
            pypto.set_vec_tile_shapes(1, S, 1, D)
            qh = pypto.reshape(pypto.view(q, [1, 1, D], [b, h, 0]), [1, D])
            kh = pypto.reshape(pypto.view(k, [1, S, 1, D], [b, 0, kvh, 0]), [S, D])
            vh = pypto.reshape(pypto.view(v, [1, S, 1, D], [b, 0, kvh, 0]), [S, D])
            pypto.set_cube_tile_shapes([16, 16], [16, 16], [32, 32])
            pypto.set_vec_tile_shapes(1, S)
            s = pypto.mul(pypto.matmul(qh, kh, pypto.DT_FP32, b_trans=True), SCALE)     # [1, S]
            e = pypto.exp(pypto.sub(s, pypto.amax(s, -1, True)))
            p = pypto.div(e, pypto.sum(e, -1, True))
            o = pypto.matmul(p, vh, pypto.DT_FP32)                                      # [1, D]
            pypto.set_vec_tile_shapes(1, 1, D)
            pypto.assemble(pypto.reshape(o, [1, 1, D]), [b, h, 0], out)


def gqa_decode_wrapper(q, k, v):
    out = np.zeros(q.shape, dtype=np.float32)
    gqa_kernel(q, k, v, out)
    return out
