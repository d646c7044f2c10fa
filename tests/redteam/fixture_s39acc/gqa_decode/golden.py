# Golden function inventory
# | # | Golden operation                              | Shape transformation              |
# |---|-----------------------------------------------|-----------------------------------|
# | 1 | kv head of query head h: h // (H / KVH)       |                                   |
# | 2 | scores = q . k^T / sqrt(D), softmax over S    | [B,H,D],[B,S,KVH,D] -> [B,H,S]    |
# | 3 | out = p @ v                                   | [B,H,S],[B,S,KVH,D] -> [B,H,D]    |
"""Grouped-query decode attention (fp32)."""

import numpy as np


def golden(q, k, v):
    _b, h, d = q.shape
    group = h // k.shape[2]
    kk = np.repeat(k.astype(np.float32), group, axis=2).transpose(0, 2, 1, 3)   # [B, H, S, D]
    vv = np.repeat(v.astype(np.float32), group, axis=2).transpose(0, 2, 1, 3)
    s = np.einsum("bhd,bhsd->bhs", q.astype(np.float32), kk) / np.float32(np.sqrt(d))
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(-1, keepdims=True)
    return np.einsum("bhs,bhsd->bhd", p, vv).astype(np.float32)
