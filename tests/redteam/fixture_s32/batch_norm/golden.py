# Golden function inventory
# | # | Golden operation                    | Shape transformation |
# |---|-------------------------------------|----------------------|
# | 1 | mean over B (two-pass, float64)     | [B,D] -> [D]         |
# | 2 | biased variance over B              | [B,D] -> [D]         |
# | 3 | (x - mean) / sqrt(var + 1e-5)       | [B,D] -> [B,D]       |
import numpy as np


def golden(x):
    xd = x.astype(np.float64)
    mean = xd.mean(axis=0, keepdims=True)
    var = ((xd - mean) ** 2).mean(axis=0, keepdims=True)
    y = (xd - mean) / np.sqrt(var + 1e-5)
    return y.astype(np.float32)
