# Golden function inventory
# | # | Golden operation                     | Shape transformation   |
# |---|--------------------------------------|------------------------|
# | 1 | cast x and gamma to fp32             | [B,D],[D] -> [B,D],[D] |
# | 2 | mean of squares over D (fp32)        | [B,D] -> [B,1]         |
# | 3 | inv = 1 / sqrt(ms + eps)             | [B,1] -> [B,1]         |
# | 4 | xf * inv * gamma                     | [B,D],[B,1],[D] -> [B,D] |
# | 5 | cast to bf16                         | [B,D] -> [B,D]         |
"""RMSNorm golden reference (numpy): fp32 accumulation, one bf16 rounding at the end."""

import numpy as np


def golden(x, gamma, eps=1e-6):
    xf = x.astype(np.float32)                                  # [B, D]
    gf = gamma.astype(np.float32)                              # [D]
    ms = np.mean(xf * xf, axis=-1, keepdims=True)              # [B, 1]
    inv = 1.0 / np.sqrt(ms + np.float32(eps))                  # [B, 1]
    yf = xf * inv * gf                                         # [B, D]
    return yf.astype(x.dtype)                                  # [B, D]
