# Golden function inventory
# | # | Golden operation                                   | Shape transformation  |
# |---|----------------------------------------------------|-----------------------|
# | 1 | ms = mean(x^2, -1) in fp32                         | [B,D] -> [B,1]        |
# | 2 | y = x / sqrt(ms + eps) * (w + 1 if unit_offset else w) | [B,D],[D] -> [B,D] |
import numpy as np


def golden(x, weight, eps, unit_offset):
    xf = x.astype(np.float32)
    wf = weight.astype(np.float32) + (np.float32(1.0) if unit_offset else np.float32(0.0))
    ms = np.mean(xf * xf, axis=-1, keepdims=True)
    yf = xf / np.sqrt(ms + np.float32(eps)) * wf
    return yf.astype(x.dtype)
