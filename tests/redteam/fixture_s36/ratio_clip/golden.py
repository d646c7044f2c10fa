# Golden function inventory
# | # | Golden operation                         | Shape transformation |
# |---|------------------------------------------|----------------------|
# | 1 | clip(x, bounds[0], bounds[1])            | [B,D] -> [B,D]       |
import numpy as np


def golden(x, bounds):
    xf = x.astype(np.float32)
    yf = np.clip(xf, np.float32(bounds[0]), np.float32(bounds[1]))
    return yf.astype(x.dtype)
