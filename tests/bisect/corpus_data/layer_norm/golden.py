# Golden function inventory
# | # | Golden operation          | Shape transformation       |
# |---|---------------------------|----------------------------|
# | 1 | cast x to fp32            | [B,D] -> [B,D]             |
# | 2 | row sum                   | [B,D] -> [B,1]             |
# | 3 | mean = s / D              | [B,1] -> [B,1]             |
# | 4 | d = xf - mean             | [B,D],[B,1] -> [B,D]       |
# | 5 | d2 = d * d                | [B,D] -> [B,D]             |
# | 6 | vs = sum d2               | [B,D] -> [B,1]             |
# | 7 | var = vs / D              | [B,1] -> [B,1]             |
# | 8 | rstd = rsqrt(var + eps)   | [B,1] -> [B,1]             |
# | 9 | xn = d * rstd             | [B,D],[B,1] -> [B,D]       |
# | 10 | yg = xn * gamma          | [B,D],[1,D] -> [B,D]       |
# | 11 | yf = yg + beta, cast     | [B,D],[1,D] -> [B,D]       |
"""LayerNorm golden: fp32 math on bf16 inputs."""

import numpy as np


def golden(x, gamma, beta, eps=1e-5):
    inv_d = np.float32(1.0 / x.shape[-1])
    xf = x.astype(np.float32)                                   # [B, D]
    s = np.sum(xf, axis=-1, keepdims=True)                      # [B, 1]
    mean = s * inv_d                                            # [B, 1]
    d = xf - mean                                               # [B, D]
    d2 = d * d                                                  # [B, D]
    vs = np.sum(d2, axis=-1, keepdims=True)                     # [B, 1]
    var = vs * inv_d                                            # [B, 1]
    rstd = np.float32(1.0) / np.sqrt(var + np.float32(eps))     # [B, 1]
    xn = d * rstd                                               # [B, D]
    yg = xn * gamma                                             # [B, D]
    yf = yg + beta                                              # [B, D]
    return yf.astype(x.dtype)
