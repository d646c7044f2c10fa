# Golden function inventory
# | # | Golden operation              | Shape transformation |
# |---|-------------------------------|----------------------|
# | 1 | cap * tanh(x / cap) in fp32   | [B,V] -> [B,V]       |
import numpy as np


def golden(x, cap):
    xf = x.astype(np.float32)
    yf = np.float32(cap) * np.tanh(xf / np.float32(cap))
    return yf.astype(x.dtype)
