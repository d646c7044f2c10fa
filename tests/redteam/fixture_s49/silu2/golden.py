# Golden function inventory
# | # | Golden operation                  | Shape transformation |
# |---|-----------------------------------|----------------------|
# | 1 | cast x to fp32                    | [B,D] -> [B,D]       |
# | 2 | sigmoid: 1 / (1 + exp(-xf))       | [B,D] -> [B,D]       |
# | 3 | multiply xf * sig                 | [B,D] -> [B,D]       |
# | 4 | cast to the input dtype           | [B,D] -> [B,D]       |
"""SiLU golden reference (red-team round 34): y = x * sigmoid(x), computed in fp32, rounded once to the input dtype."""

import numpy as np


def golden(x):
    xf = x.astype(np.float32)                   # [B, D]
    sig = 1.0 / (1.0 + np.exp(-xf))             # [B, D]
    yf = xf * sig                               # [B, D]
    return yf.astype(x.dtype)                   # [B, D]
