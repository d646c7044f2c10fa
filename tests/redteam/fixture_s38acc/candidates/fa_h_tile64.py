"""flash_attention: out = softmax(q @ k^T / sqrt(D)) @ v with an online softmax over 32-key tiles.

The key/value length L is dynamic; for each batch the kernel walks the keys in 32-key tiles (the last one
may be a tail, carried by ``valid_shape`` on the k and v views) and never materialises the [S, L] scores.
Per query row it carries three pieces of state from tile to tile: the running maximum ``m_run``, the
running sum of exponentials ``l_run`` and the output accumulator ``acc``, each rescaled by
``alpha = exp(m_old - m_new)`` when a larger maximum appears; after the last tile ``acc / l_run`` is the
output rows of this batch.
"""
# honest: 64-key tiles

import numpy as np
import pypto

B = 2
S = 32
D = 64
TL = 64                          # keys per tile
SCALE = 1.0 / D ** 0.5           # 1/sqrt(D) = 0.125


@pypto.frontend.jit
def flash_attention_kernel(
    q: pypto.Tensor([B, S, D], pypto.DT_FP32),
    k: pypto.Tensor([B, pypto.DYNAMIC, D], pypto.DT_FP32),
    v: pypto.Tensor([B, pypto.DYNAMIC, D], pypto.DT_FP32),
    out: pypto.Tensor([B, S, D], pypto.DT_FP32),
):
    l_len = k.shape[1]
    for b in pypto.loop(B, name="batch", idx_name="b"):
        qt = pypto.view(q, [1, S, D], [b, 0, 0])
        pypto.set_vec_tile_shapes(1, S, D)
        # loop-carried state: tensors written with [:] = (a re-bound Python name is not carried)
        m_run = pypto.tensor([1, S, 1], pypto.DT_FP32, "m_run")
        l_run = pypto.tensor([1, S, 1], pypto.DT_FP32, "l_run")
        acc = pypto.tensor([1, S, D], pypto.DT_FP32, "acc")
        for j in pypto.loop((l_len + TL - 1) // TL, name="kv", idx_name="j"):
            valid = (l_len - j * TL).min(TL)
            kt = pypto.view(k, [1, TL, D], [b, j * TL, 0], valid_shape=[1, valid, D])
            vt = pypto.view(v, [1, TL, D], [b, j * TL, 0], valid_shape=[1, valid, D])
            pypto.set_cube_tile_shapes([32, 32], [64, 64], [64, 64])
            pypto.set_vec_tile_shapes(1, S, TL)
            s = pypto.mul(pypto.matmul(qt, kt, pypto.DT_FP32, b_trans=True), SCALE)   # [1, S, TL]
            m_tile = pypto.amax(s, -1, keepdim=True)                                  # [1, S, 1]
            pypto.set_cube_tile_shapes([32, 32], [64, 64], [64, 64])
            if pypto.is_loop_begin(j):
                p = pypto.exp(pypto.sub(s, m_tile))                                   # [1, S, TL]
                l_run[:] = pypto.sum(p, -1, keepdim=True)
                pypto.set_vec_tile_shapes(1, S, D)
                acc[:] = pypto.matmul(p, vt, pypto.DT_FP32)                           # [1, S, D]
                m_run[:] = m_tile
            else:
                m_new = pypto.maximum(m_run, m_tile)                                  # [1, S, 1]
                alpha = pypto.exp(pypto.sub(m_run, m_new))                            # [1, S, 1]
                p = pypto.exp(pypto.sub(s, m_new))                                    # [1, S, TL]
                l_run[:] = pypto.add(pypto.mul(l_run, alpha), pypto.sum(p, -1, keepdim=True))
                pypto.set_vec_tile_shapes(1, S, D)
                acc[:] = pypto.add(pypto.mul(acc, alpha), pypto.matmul(p, vt, pypto.DT_FP32))
                m_run[:] = m_new
            if pypto.is_loop_end(j):
                pypto.set_vec_tile_shapes(1, S, D)
                pypto.assemble(pypto.div(acc, l_run), [b, 0, 0], out)


def flash_attention_wrapper(q, k, v):
    out = np.zeros(q.shape, dtype=np.float32)
    flash_attention_kernel(q, k, v, out)
    return out
