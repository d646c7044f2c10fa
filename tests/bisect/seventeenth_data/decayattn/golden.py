"""decayattn golden: out = ((2q * 0.125) @ k^T * decay) @ v with decay = exp(tril(g_i - g_j)) on the lower triangle
(gated_delta_rule's intra-chunk attention, small; the scaled query re-bound as ``query`` as there; no golden names ``q @ k^T`` alone)."""

import numpy as np


def golden(q, k, v, g):
    query = q.astype(np.float32) * np.float32(2.0)
    query = query * np.float32(0.125)
    gf = g.astype(np.float32)
    decay_mask = np.tril(np.exp(np.tril(gf - gf.T)))
    attn = (query @ k.astype(np.float32).T) * decay_mask
    out = attn @ v.astype(np.float32)
    return out
