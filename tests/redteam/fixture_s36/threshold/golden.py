# Golden function inventory
# | # | Golden operation                         | Shape transformation |
# |---|------------------------------------------|----------------------|
# | 1 | where(x > threshold, x, value)           | [B,D] -> [B,D]       |
import numpy as np


def golden(x, threshold, value):
    xf = x.astype(np.float32)
    yf = np.where(xf > np.float32(threshold), xf, np.float32(value))
    return yf.astype(x.dtype)
