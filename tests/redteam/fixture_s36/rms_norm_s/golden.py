# Golden function inventory
# | # | Golden operation                     | Shape transformation   |
# |---|--------------------------------------|------------------------|
# | 1 | cast x and gamma to fp32             | [B,D],[D] -> [B,D],[D] |
# | 2 | mean of squares over D (fp32)        | [B,D] -> [B,1]         |
# | 3 | inv = 1 / sqrt(ms + eps)             | [B,1] -> [B,1]         |
# | 4 | xf * inv * gamma, cast               | [B,D] -> [B,D]         |
import numpy as np


def golden(x, gamma, eps=1e-6):
    xf = x.astype(np.float32)
    gf = gamma.astype(np.float32)
    ms = np.mean(xf * xf, axis=-1, keepdims=True)
    inv = 1.0 / np.sqrt(ms + np.float32(eps))
    yf = xf * inv * gf
    return yf.astype(x.dtype)
