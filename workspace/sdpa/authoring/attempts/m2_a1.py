"""sdpa stage M1+M2: probs = softmax(q @ k^T / sqrt(D)) (M1, frozen), then out = probs @ v (M2).

The query axis S is dynamic; each (batch, query tile) computes a [1, 16, L] block of scores with a batched
matmul (``b_trans=True`` reads k as [L, D]), applies the max-shifted softmax in fp32 and assembles the
block into ``probs``; M2 multiplies that block by v [1, L, D] and assembles the result into ``out``. The
tail tile (S = 45 -> 13 rows) is carried by ``valid_shape`` on the q view and propagates through both.
"""

import numpy as np
import pypto

B = 2
L = 128
D = 64
TILE = 16
SCALE = 1.0 / D ** 0.5          # 1/sqrt(D) = 0.125, a compile-time constant


@pypto.frontend.jit
def sdpa_module12_kernel(
    q: pypto.Tensor([B, pypto.DYNAMIC, D], pypto.DT_FP32),
    k: pypto.Tensor([B, L, D], pypto.DT_FP32),
    v: pypto.Tensor([B, L, D], pypto.DT_FP32),
    probs_out: pypto.Tensor([B, pypto.DYNAMIC, L], pypto.DT_FP32),
    out_out: pypto.Tensor([B, pypto.DYNAMIC, D], pypto.DT_FP32),
):
    s_len = q.shape[1]
    for b in pypto.loop(B, name="batch", idx_name="b"):
        for i in pypto.loop((s_len + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (s_len - i * TILE).min(TILE)
            qt = pypto.view(q, [1, TILE, D], [b, i * TILE, 0], valid_shape=[1, valid, D])
            kt = pypto.view(k, [1, L, D], [b, 0, 0])
            # --- Module M1: scores and softmax ---
            pypto.set_cube_tile_shapes([16, 16], [64, 64], [128, 128])
            pypto.set_vec_tile_shapes(1, TILE, L)
            raw = pypto.matmul(qt, kt, pypto.DT_FP32, b_trans=True)      # [1, TILE, L]
            scores = pypto.mul(raw, SCALE)                               # [1, TILE, L]
            row_max = pypto.amax(scores, -1, keepdim=True)               # [1, TILE, 1]
            e = pypto.exp(pypto.sub(scores, row_max))                    # [1, TILE, L]
            row_sum = pypto.sum(e, -1, keepdim=True)                     # [1, TILE, 1]
            probs = pypto.div(e, row_sum)                                # [1, TILE, L]
            pypto.assemble(probs, [b, i * TILE, 0], probs_out)
            # --- Module M2: weighted sum ---
            vt = pypto.view(v, [1, L, D], [b, 0, 0])
            pypto.set_cube_tile_shapes([16, 16], [128, 128], [64, 64])
            pypto.set_vec_tile_shapes(1, TILE, D)
            out = pypto.matmul(probs, vt, pypto.DT_FP32)                 # [1, TILE, D]
            pypto.assemble(out, [b, i * TILE, 0], out_out)


def sdpa_module12_wrapper(q, k, v):
    probs = np.zeros((q.shape[0], q.shape[1], k.shape[1]), dtype=np.float32)
    out = np.zeros(q.shape, dtype=np.float32)
    sdpa_module12_kernel(q, k, v, probs, out)
    return probs, out
