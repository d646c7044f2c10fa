# Golden function inventory
# | # | Golden operation              | Shape transformation       |
# |---|-------------------------------|----------------------------|
# | 1 | s = q @ k^T * scale           | [Q,E],[S,E] -> [Q,S]       |
# | 2 | mx = row max of s             | [Q,S] -> [Q,1]             |
# | 3 | e = exp(s - mx)               | [Q,S],[Q,1] -> [Q,S]       |
# | 4 | den = row sum of e            | [Q,S] -> [Q,1]             |
# | 5 | o = e @ v                     | [Q,S],[S,E] -> [Q,E]       |
# | 6 | out = o / den                 | [Q,E],[Q,1] -> [Q,E]       |
"""Attention golden (fp32), the reference of the flash-attention kernel."""

import numpy as np


def golden(q, k, v, scale=0.125):
    kt = np.transpose(k, (1, 0))                                # [E, S]  q @ k^T -> pypto: b_trans=True
    s = (q @ kt) * np.float32(scale)                            # [Q, S]
    mx = np.max(s, axis=-1, keepdims=True)                      # [Q, 1]
    e = np.exp(s - mx)                                          # [Q, S]
    den = np.sum(e, axis=-1, keepdims=True)                     # [Q, 1]
    o = e @ v                                                   # [Q, E]
    out = o / den                                               # [Q, E]
    return out.astype(q.dtype)
