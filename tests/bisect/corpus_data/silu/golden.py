# Golden function inventory
# | # | Golden operation      | Shape transformation |
# |---|-----------------------|----------------------|
# | 1 | e = exp(-x)           | [B,D] -> [B,D]       |
# | 2 | den = 1 + e           | [B,D] -> [B,D]       |
# | 3 | y = x / den           | [B,D] -> [B,D]       |
"""SiLU golden, fp32."""

import numpy as np


def golden(x):
    xf = x.astype(np.float32)                                   # [B, D]
    nx = -xf                                                    # [B, D]
    e = np.exp(nx)                                              # [B, D]
    den = e + np.float32(1.0)                                   # [B, D]
    y = xf / den                                                # [B, D]
    return y.astype(x.dtype)
