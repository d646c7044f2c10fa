# Golden function inventory
# | # | Golden operation        | Shape transformation   |
# |---|-------------------------|------------------------|
# | 1 | xs = x * scale          | [B,D] -> [B,D]         |
# | 2 | m = row max             | [B,D] -> [B,1]         |
# | 3 | z = xs - m              | [B,D],[B,1] -> [B,D]   |
# | 4 | e = exp(z)              | [B,D] -> [B,D]         |
# | 5 | s = row sum of e        | [B,D] -> [B,1]         |
# | 6 | y = e / s               | [B,D],[B,1] -> [B,D]   |
"""Scaled softmax golden (fp32)."""

import numpy as np


def golden(x, scale=0.125):
    xs = x.astype(np.float32) * np.float32(scale)               # [B, D]
    m = np.max(xs, axis=-1, keepdims=True)                      # [B, 1]
    z = xs - m                                                  # [B, D]
    e = np.exp(z)                                               # [B, D]
    s = np.sum(e, axis=-1, keepdims=True)                       # [B, 1]
    y = e / s                                                   # [B, D]
    return y.astype(x.dtype)
