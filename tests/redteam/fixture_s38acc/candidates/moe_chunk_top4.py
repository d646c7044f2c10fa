"""moe_topk_gating: top-8 of 128 experts per token, softmax-renormalised weights (fp32) and expert ids (int32).

Tokens (T, dynamic) are processed in 16-row tiles; the tail tile is carried by ``valid_shape``. The
experts are ranked in two stages, as a wide top-k is done on the device: each 32-expert chunk of the row
(a view at column offset c * 32) gives its local top-8, whose values and *global* ids (local index +
c * 32) are assembled side by side into a [16, 32] candidate tile at column offset c * 8; one more top-8
over the 32 candidates gives the row's top-8 values and the positions of the winners, and ``gather``
picks their global ids. The weights are a softmax over the 8 winning logits.
"""
# accident: 4 candidates per 32-expert chunk (16 >= 8 in total) - wrong when one chunk holds 5 or more of the row's top 8

import numpy as np
import pypto

TILE = 16
E = 128
K = 8
KC = 4                       # candidates per chunk: 4 chunks x 4 = 16 >= 8
CH = 32                      # experts per chunk
NC = E // CH


@pypto.frontend.jit
def moe_topk_gating_kernel(
    logits: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_FP32),
    weights: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_FP32),
    ids: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_INT32),
):
    t = logits.shape[0]
    pypto.set_vec_tile_shapes(TILE, CH)
    for i in pypto.loop((t + TILE - 1) // TILE, name="tokens", idx_name="i"):
        valid = (t - i * TILE).min(TILE)
        cand_v = pypto.tensor([TILE, NC * KC], pypto.DT_FP32, "cand_v")
        cand_i = pypto.tensor([TILE, NC * KC], pypto.DT_INT32, "cand_i")
        for c in range(NC):                                              # unrolled at trace time
            chunk = pypto.view(logits, [TILE, CH], [i * TILE, c * CH], valid_shape=[valid, CH])
            v_c, local_c = pypto.topk(chunk, KC, -1, True)                # [TILE, K] fp32, int32 in [0, CH)
            global_c = pypto.add(local_c, c * CH)                        # expert id in [0, E)
            pypto.assemble(v_c, [0, c * KC], cand_v)
            pypto.assemble(global_c, [0, c * KC], cand_i)
        cv = pypto.view(cand_v, [TILE, NC * KC], [0, 0], valid_shape=[valid, NC * KC])
        ci = pypto.view(cand_i, [TILE, NC * KC], [0, 0], valid_shape=[valid, NC * KC])
        top, pos = pypto.topk(cv, K, -1, True)                           # [TILE, K], positions in [0, 32)
        top_ids = pypto.gather(ci, -1, pos)                              # [TILE, K] int32 global ids
        pypto.set_vec_tile_shapes(TILE, K)
        top_max = pypto.amax(top, -1, keepdim=True)                      # [TILE, 1]
        e = pypto.exp(pypto.sub(top, top_max))                           # [TILE, K]
        e_sum = pypto.sum(e, -1, keepdim=True)                           # [TILE, 1]
        w = pypto.div(e, e_sum)                                          # [TILE, K]
        pypto.assemble(w, [i * TILE, 0], weights)
        pypto.assemble(top_ids, [i * TILE, 0], ids)
        pypto.set_vec_tile_shapes(TILE, CH)


def moe_topk_gating_wrapper(logits):
    t = logits.shape[0]
    weights = np.zeros((t, K), dtype=np.float32)
    ids = np.zeros((t, K), dtype=np.int32)
    moe_topk_gating_kernel(logits, weights, ids)
    return weights, ids
