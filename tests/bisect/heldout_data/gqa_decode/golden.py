# Golden function inventory
# | # | Golden operation                       | Shape transformation            |
# |---|----------------------------------------|---------------------------------|
# | 1 | scores = q_h @ k_h^T * scale per group | [NH,D],[S,KVD] -> [NKV,G,S]     |
# | 2 | mx = row max of scores                 | [NKV,G,S] -> [NKV,G,1]          |
# | 3 | p = exp(scores - mx)                   | [NKV,G,S] -> [NKV,G,S]          |
# | 4 | den = row sum of p                     | [NKV,G,S] -> [NKV,G,1]          |
# | 5 | ctx = p @ v_h                          | [NKV,G,S],[S,KVD] -> [NKV,G,D]  |
# | 6 | out = ctx / den                        | [NKV,G,D] -> [NH,D]             |
"""GQA decode golden (fp32), torch-style reshapes of the token-major KV cache."""

import numpy as np


def golden(q, k, v, scale=0.125):
    nh, d = q.shape
    s_len = k.shape[0]
    nkv = k.shape[1] // d
    qh = q.reshape(nkv, nh // nkv, d)                           # [NKV, G, D]
    kh = k.reshape(s_len, nkv, d).transpose(1, 0, 2)            # [NKV, S, D]
    vh = v.reshape(s_len, nkv, d).transpose(1, 0, 2)            # [NKV, S, D]
    scores = (qh @ kh.transpose(0, 2, 1)) * np.float32(scale)   # [NKV, G, S]
    mx = scores.max(axis=-1, keepdims=True)                     # [NKV, G, 1]
    p = np.exp(scores - mx)                                     # [NKV, G, S]
    den = p.sum(axis=-1, keepdims=True)                         # [NKV, G, 1]
    ctx = p @ vh                                                # [NKV, G, D]
    out = (ctx / den).reshape(nh, d)                            # [NH, D]
    return out.astype(q.dtype)
