# Golden function inventory
# | # | Golden operation                  | Shape transformation |
# |---|-----------------------------------|----------------------|
# | 1 | cast x to fp32                    | [B,S,D] -> [B,S,D]       |
# | 2 | sigmoid: 1 / (1 + exp(-xf))       | [B,S,D] -> [B,S,D]       |
# | 3 | multiply xf * sig                 | [B,S,D] -> [B,S,D]       |
# | 4 | cast to the input dtype           | [B,S,D] -> [B,S,D]       |
"""SiLU golden reference (red-team round 34): y = x * sigmoid(x), computed in fp32, rounded once to the input dtype."""

import numpy as np


def golden(x):
    xf = x.astype(np.float32)                   # [B, S, D]
    sig = 1.0 / (1.0 + np.exp(-xf))             # [B, S, D]
    yf = xf * sig                               # [B, S, D]
    return yf.astype(x.dtype)                   # [B, S, D]
