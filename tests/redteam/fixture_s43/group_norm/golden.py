# Golden function inventory
# | # | Golden operation                                          | Shape transformation        |
# |---|-----------------------------------------------------------|-----------------------------|
# | 1 | view each row as num_groups groups                        | [B,D] -> [B,G,D/G]          |
# | 2 | group mean and variance, broadcast back over each group   | [B,G,1] -> [B,G,D/G]        |
# | 3 | y = (x - mean) / sqrt(var + 1e-5)                         | [B,G,D/G] -> [B,D]          |
import numpy as np


def golden(x, num_groups):
    b, d = x.shape
    xg = x.astype(np.float32).reshape(b, num_groups, -1)
    full = (b, num_groups, d // num_groups)
    mu = np.broadcast_to(xg.mean(axis=-1, keepdims=True), full)
    var = np.broadcast_to(((xg - mu) ** 2).mean(axis=-1, keepdims=True), full)
    return ((xg - mu) / np.sqrt(var + np.float32(1e-5))).reshape(b, d).astype(x.dtype)
