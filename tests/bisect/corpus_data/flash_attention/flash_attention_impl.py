"""Flash attention with an online softmax over a dynamic key length (from tests/emulator/corpus/attention.py).

Runtime branches on is_loop_begin/is_loop_end: kept apart from the main variants (REAL_ONLY_VARIANTS) for that history.
"""

import numpy as np
import pypto

QR, FD, BLK = 32, 64, 32
SCALE = 0.125


@pypto.frontend.jit
def flash_attention_kernel(
    q: pypto.Tensor([QR, FD], pypto.DT_FP32),
    k: pypto.Tensor([pypto.DYNAMIC, FD], pypto.DT_FP32),
    v: pypto.Tensor([pypto.DYNAMIC, FD], pypto.DT_FP32),
    out: pypto.Tensor([QR, FD], pypto.DT_FP32),
):
    skv = k.shape[0]
    pypto.set_vec_tile_shapes(QR, BLK)
    m = pypto.tensor([QR, 1], pypto.DT_FP32, "m")
    lsum = pypto.tensor([QR, 1], pypto.DT_FP32, "lsum")
    acc = pypto.tensor([QR, FD], pypto.DT_FP32, "acc")
    for j in pypto.loop((skv + BLK - 1) // BLK, name="kv", idx_name="j"):
        valid = (skv - j * BLK).min(BLK)
        kt = pypto.view(k, [BLK, FD], [j * BLK, 0], valid_shape=[valid, FD])
        vt = pypto.view(v, [BLK, FD], [j * BLK, 0], valid_shape=[valid, FD])
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        s = pypto.matmul(q, kt, pypto.DT_FP32, b_trans=True) * SCALE
        bmax = pypto.amax(s, -1, keepdim=True)
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [64, 64])
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
            out[:] = acc / lsum


def flash_attention_wrapper(q, k, v):
    out = np.zeros(q.shape, dtype=q.dtype)
    flash_attention_kernel(q, k, v, out)
    return out
