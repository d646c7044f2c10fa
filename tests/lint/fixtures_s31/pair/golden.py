# Golden function inventory
# | # | Golden operation            | Shape transformation |
# |---|-----------------------------|----------------------|
# | 1 | a = 2 x, b = x + 1          | [B,D] -> [B,D],[B,D] |
import numpy as np


def golden(x):
    return (x * np.float32(2)).astype(x.dtype), (x + np.float32(1)).astype(x.dtype)   # [B, D], [B, D]
