# Golden function inventory
# | # | Golden operation                      | Shape transformation            |
# |---|---------------------------------------|---------------------------------|
# | 1 | scores = q @ k^T (fp32 accumulation)  | [B,S,D],[B,L,D] -> [B,S,L]      |
# | 2 | scale by 1/sqrt(D)                    | [B,S,L] -> [B,S,L]              |
# | 3 | row max over L                        | [B,S,L] -> [B,S,1]              |
# | 4 | e = exp(scores - max)                 | [B,S,L],[B,S,1] -> [B,S,L]      |
# | 5 | row sum over L                        | [B,S,L] -> [B,S,1]              |
# | 6 | weighted = e @ v (fp32 accumulation)  | [B,S,L],[B,L,D] -> [B,S,D]      |
# | 7 | out = weighted / sum                  | [B,S,D],[B,S,1] -> [B,S,D]      |
"""Attention forward golden reference (numpy, fp32), normalised after the value product as flash attention is."""

import numpy as np


def golden(q, k, v):
    scale = np.float32(1.0 / np.sqrt(q.shape[-1]))
    qf = q.astype(np.float32)                                  # [B, S, D]
    kt = np.swapaxes(k.astype(np.float32), -1, -2)             # [B, D, L]  (pypto: b_trans=True)
    scores = np.matmul(qf, kt) * scale                         # [B, S, L]
    row_max = np.max(scores, axis=-1, keepdims=True)           # [B, S, 1]
    e = np.exp(scores - row_max)                               # [B, S, L]
    row_sum = np.sum(e, axis=-1, keepdims=True)                # [B, S, 1]
    weighted = np.matmul(e, v.astype(np.float32))              # [B, S, D]
    out = weighted / row_sum                                   # [B, S, D]
    return out
