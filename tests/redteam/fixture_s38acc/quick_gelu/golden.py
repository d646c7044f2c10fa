# Golden function inventory
# | # | Golden operation                   | Shape transformation |
# |---|------------------------------------|----------------------|
# | 1 | z = -1.702 * x                     | [B,D] -> [B,D]       |
# | 2 | sigmoid: 1 / (1 + exp(z))          | [B,D] -> [B,D]       |
# | 3 | multiply x * sig                   | [B,D] -> [B,D]       |
"""QuickGELU golden reference: y = x * sigmoid(1.702 x), in fp32."""

import numpy as np


def golden(x):
    z = np.float32(-1.702) * x                  # [B, D]
    sig = 1.0 / (1.0 + np.exp(z))               # [B, D]
    y = x * sig                                 # [B, D]
    return y.astype(np.float32)                 # [B, D]
