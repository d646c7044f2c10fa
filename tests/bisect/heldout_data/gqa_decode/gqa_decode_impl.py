"""GQA decode: online softmax over key blocks; the query group is copied into a local tile per KV head."""

import numpy as np
import pypto

NH, D, NKV, BLK = 8, 64, 2, 32
G = NH // NKV
SCALE = 0.125


@pypto.frontend.jit
def gqa_decode_kernel(
    q: pypto.Tensor([NH, D], pypto.DT_FP32),
    k: pypto.Tensor([pypto.DYNAMIC, NKV * D], pypto.DT_FP32),
    v: pypto.Tensor([pypto.DYNAMIC, NKV * D], pypto.DT_FP32),
    out: pypto.Tensor([NH, D], pypto.DT_FP32),
):
    skv = k.shape[0]
    pypto.set_vec_tile_shapes(G, BLK)
    m = pypto.tensor([G, 1], pypto.DT_FP32, "m")
    lsum = pypto.tensor([G, 1], pypto.DT_FP32, "lsum")
    acc = pypto.tensor([G, D], pypto.DT_FP32, "acc")
    q_tile = pypto.tensor([G, D], pypto.DT_FP32, "q_tile")
    for hk in pypto.loop(NKV, name="kv_head", idx_name="hk"):
        q_tile[:] = pypto.view(q, [G, D], [hk * G, 0])
        for j in pypto.loop((skv + BLK - 1) // BLK, name="kv", idx_name="j"):
            valid = (skv - j * BLK).min(BLK)
            kt = pypto.view(k, [BLK, D], [j * BLK, hk * D], valid_shape=[valid, D])
            vt = pypto.view(v, [BLK, D], [j * BLK, hk * D], valid_shape=[valid, D])
            pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
            s = pypto.matmul(q_tile, kt, pypto.DT_FP32, b_trans=True) * SCALE
            bmax = pypto.amax(s, -1, keepdim=True)
            pypto.set_cube_tile_shapes([16, 16], [32, 32], [64, 64])
            if pypto.is_loop_begin(j):
                p = pypto.exp(s - bmax)
                lsum[:] = pypto.sum(p, -1, keepdim=True)
                acc[:] = pypto.matmul(p, vt, pypto.DT_FP32)
                m[:] = bmax
            else:
                m_new = pypto.maximum(m, bmax)
                alpha = pypto.exp(m - m_new)
                p = pypto.exp(s - m_new)
                lsum[:] = lsum * alpha + pypto.sum(p, -1, keepdim=True)
                acc[:] = acc * alpha + pypto.matmul(p, vt, pypto.DT_FP32)
                m[:] = m_new
            if pypto.is_loop_end(j):
                pypto.assemble(acc / lsum, [hk * G, 0], out)


def gqa_decode_wrapper(q, k, v):
    out = np.zeros(q.shape, dtype=q.dtype)
    gqa_decode_kernel(q, k, v, out)
    return out
