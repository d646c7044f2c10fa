# Golden function inventory
# | # | Golden operation           | Shape transformation |
# |---|----------------------------|----------------------|
# | 1 | sq = x * x                 | [B,D] -> [B,D]       |
# | 2 | ss = row sum of squares    | [B,D] -> [B,1]       |
# | 3 | ms = ss / D                | [B,1] -> [B,1]       |
# | 4 | inv = rsqrt(ms + eps)      | [B,1] -> [B,1]       |
# | 5 | y = x * inv                | [B,D],[B,1] -> [B,D] |
"""Row L2 (RMS) normalization golden, fp32."""

import numpy as np


def golden(x, eps=1e-6):
    xf = x.astype(np.float32)                                   # [B, D]
    sq = xf * xf                                                # [B, D]
    ss = np.sum(sq, axis=-1, keepdims=True)                     # [B, 1]
    ms = ss * np.float32(1.0 / x.shape[-1])                     # [B, 1]
    inv = np.float32(1.0) / np.sqrt(ms + np.float32(eps))       # [B, 1]
    y = xf * inv                                                # [B, D]
    return y.astype(x.dtype)
