# Golden function inventory
# | # | Golden operation                    | Shape transformation |
# |---|-------------------------------------|----------------------|
# | 1 | mean over B and L (float64)         | [B,L,D] -> [D]       |
# | 2 | biased variance over B and L        | [B,L,D] -> [D]       |
# | 3 | (x - mean) / sqrt(var + 1e-5)       | [B,L,D] -> [B,L,D]   |
import numpy as np


def golden(x):
    xd = x.astype(np.float64)
    mean = xd.mean(axis=(0, 1), keepdims=True)
    var = ((xd - mean) ** 2).mean(axis=(0, 1), keepdims=True)
    y = (xd - mean) / np.sqrt(var + 1e-5)
    return y.astype(np.float32)
