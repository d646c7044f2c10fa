# Golden function inventory
# | # | Golden operation            | Shape transformation |
# |---|-----------------------------|----------------------|
# | 1 | cast x to fp32              | [B,D] -> [B,D]       |
# | 2 | sigmoid(1.702 * xf)         | [B,D] -> [B,D]       |
# | 3 | xf * sig, cast to x.dtype   | [B,D] -> [B,D]       |
import numpy as np


def golden(x):
    xf = x.astype(np.float32)                          # [B, D]
    sig = 1.0 / (1.0 + np.exp(-1.702 * xf))            # [B, D]
    return (xf * sig).astype(x.dtype)                  # [B, D]
