# Golden function inventory
# | # | Golden operation                     | Shape transformation |
# |---|--------------------------------------|----------------------|
# | 1 | amax over B of |x|                   | [B,D] -> [1,D]       |
# | 2 | y = x / max(amax, 1e-6)              | [B,D] -> [B,D]       |
import numpy as np


def golden(x):
    amax = np.abs(x).max(axis=0, keepdims=True)
    scale = np.maximum(amax, np.float32(1e-6))
    y = x / scale
    return y.astype(np.float32)
