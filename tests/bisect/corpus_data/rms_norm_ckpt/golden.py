# Golden function inventory
# | # | Golden operation            | Shape transformation  |
# |---|-----------------------------|-----------------------|
# | 1 | cast x to fp32              | [B,D] -> [B,D]        |
# | 2 | square                      | [B,D] -> [B,D]        |
# | 3 | sum of squares over D       | [B,D] -> [B,1]        |
# | 4 | mean: ss / D                | [B,1] -> [B,1]        |
# | 5 | inv = rsqrt(ms + eps)       | [B,1] -> [B,1]        |
# | 6 | xn = xf * inv               | [B,D] -> [B,D]        |
# | 7 | y = xn * gamma              | [B,D],[1,D] -> [B,D]  |
"""RMSNorm golden (fp32)."""

import numpy as np


def golden(x, gamma, eps=1e-6):
    xf = x.astype(np.float32)                                   # [B, D]
    sq = xf * xf                                                # [B, D]
    ss = np.sum(sq, axis=-1, keepdims=True)                     # [B, 1]
    ms = ss * np.float32(1.0 / x.shape[-1])                     # [B, 1]
    inv = np.float32(1.0) / np.sqrt(ms + np.float32(eps))       # [B, 1]
    xn = xf * inv                                               # [B, D]
    y = xn * gamma.astype(np.float32)                           # [B, D]
    return y.astype(x.dtype)
