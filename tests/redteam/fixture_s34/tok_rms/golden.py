# Golden function inventory
# | # | Golden operation                 | Shape transformation       |
# |---|----------------------------------|----------------------------|
# | 1 | mean of squares over D (fp32)    | [B,S,D] -> [B,S,1]         |
# | 2 | x * rsqrt(ms + 1e-6) * gamma     | [B,S,D],[D] -> [B,S,D]     |
import numpy as np


def golden(x, gamma):
    xf = x.astype(np.float32)
    ms = np.mean(xf * xf, axis=-1, keepdims=True)
    y = xf / np.sqrt(ms + np.float32(1e-6)) * gamma.astype(np.float32)
    return y.astype(x.dtype)
