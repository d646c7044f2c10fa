# Golden function inventory
# | # | Golden operation                                   | Shape transformation        |
# |---|----------------------------------------------------|-----------------------------|
# | 1 | view each row as num_groups groups                 | [B,D] -> [B,G,D/G]          |
# | 2 | y = (x - mean) / sqrt(var + 1e-5) per group        | [B,G,D/G] -> [B,D]          |
import numpy as np


def golden(x, num_groups):
    b, d = x.shape
    xg = x.astype(np.float32).reshape(b, num_groups, d // num_groups)
    mu = xg.mean(axis=-1, keepdims=True)
    var = ((xg - mu) ** 2).mean(axis=-1, keepdims=True)
    return ((xg - mu) / np.sqrt(var + np.float32(1e-5))).reshape(b, d).astype(x.dtype)
