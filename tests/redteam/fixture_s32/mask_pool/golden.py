# Golden function inventory
# | # | Golden operation                                  | Shape transformation   |
# |---|---------------------------------------------------|------------------------|
# | 1 | masked sum over T                                 | [B,T,D],[B,T] -> [B,D] |
# | 2 | count of True per row, clamped at 1               | [B,T] -> [B,1]         |
# | 3 | sum / count                                       | [B,D] -> [B,D]         |
import numpy as np


def golden(x, mask):
    m = mask.astype(np.float32)[:, :, None]                     # [B, T, 1]
    s = (x * m).sum(axis=1)                                     # [B, D]
    count = np.maximum(m.sum(axis=1), np.float32(1.0))         # [B, 1]
    return (s / count).astype(np.float32)
