# Golden function inventory
# | # | Golden operation                     | Shape transformation      |
# |---|--------------------------------------|---------------------------|
# | 1 | y = sum of x over V (keepdims)       | [B,V] -> [B,1] (or [B])   |
import numpy as np


def golden(x, keepdim):
    return x.astype(np.float32).sum(axis=-1, keepdims=keepdim).astype(x.dtype)
