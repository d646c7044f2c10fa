# Golden function inventory
# | # | Golden operation            | Shape transformation |
# |---|-----------------------------|----------------------|
# | 1 | x + r (dropout off)         | [B,D] -> [B,D]       |
import numpy as np


def golden(x, r, dropout_p):
    return (x.astype(np.float32) + r.astype(np.float32)).astype(x.dtype)
