# Golden function inventory
# | # | Golden operation                           | Shape transformation |
# |---|--------------------------------------------|----------------------|
# | 1 | log(p), log(1 - p), each clamped at -100   | [B,D] -> [B,D]       |
# | 2 | -(t * lp + (1 - t) * l1p)                  | [B,D] -> [B,D]       |
import numpy as np


def golden(p, t):
    with np.errstate(divide="ignore"):
        lp = np.maximum(np.log(p), np.float32(-100.0))
        l1p = np.maximum(np.log(np.float32(1.0) - p), np.float32(-100.0))
    return (-(t * lp + (np.float32(1.0) - t) * l1p)).astype(np.float32)
