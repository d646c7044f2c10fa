# Golden function inventory
# | # | Golden operation                 | Shape transformation |
# |---|----------------------------------|----------------------|
# | 1 | sq_sum = sum of x^2 over C       | [N,C] -> [N,1]       |
# | 2 | rms = sqrt(sq_sum / C + eps)     | [N,1] -> [N,1]       |
# | 3 | xn = x / rms                     | [N,C],[N,1] -> [N,C] |
# | 4 | y = xn * weight                  | [N,C],[1,C] -> [N,C] |
"""RMSNorm over channels (fp32)."""

import numpy as np


def golden(x, weight, eps=1e-6):
    xf = x.astype(np.float32)                                   # [N, C]
    sq_sum = np.sum(xf * xf, axis=-1, keepdims=True)            # [N, 1]
    rms = np.sqrt(sq_sum / np.float32(x.shape[-1]) + np.float32(eps))  # [N, 1]
    xn = xf / rms                                               # [N, C]
    y = xn * weight                                             # [N, C]
    return y.astype(x.dtype)
