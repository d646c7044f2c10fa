# Golden function inventory
# | # | Golden operation              | Shape transformation |
# |---|-------------------------------|----------------------|
# | 1 | x * sigmoid(1.702 x) in fp32  | [B,D] -> [B,D]       |
import numpy as np


def golden(x):
    xf = x.astype(np.float32)
    return (xf / (np.float32(1) + np.exp(np.float32(-1.702) * xf))).astype(x.dtype)
