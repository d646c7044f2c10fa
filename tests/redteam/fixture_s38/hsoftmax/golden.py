# Golden function inventory
# | # | Golden operation           | Shape transformation |
# |---|----------------------------|----------------------|
# | 1 | softmax over the last axis | [B,V] -> [B,V]       |
import numpy as np


def golden(x):
    xf = x.astype(np.float64)
    e = np.exp(xf - xf.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
