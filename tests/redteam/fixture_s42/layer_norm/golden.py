# Golden function inventory
# | # | Golden operation                          | Shape transformation         |
# |---|-------------------------------------------|------------------------------|
# | 1 | cast x, gamma, beta to fp32               | [B,D],[D],[D] -> same, fp32  |
# | 2 | mu = mean of x over D (fp32)              | [B,D] -> [B,1]               |
# | 3 | xc = x - mu                               | [B,D],[B,1] -> [B,D]         |
# | 4 | var = mean of xc^2 over D (fp32)          | [B,D] -> [B,1]               |
# | 5 | rstd = 1 / sqrt(var + eps)                | [B,1] -> [B,1]               |
# | 6 | y = xc * rstd * gamma + beta              | [B,D],[B,1],[D],[D] -> [B,D] |
# | 7 | cast to fp16                              | [B,D] -> [B,D]               |
"""LayerNorm forward golden reference (numpy): fp16 in/out, fp32 statistics, one fp16 rounding at the end."""

import numpy as np


def golden(x, gamma, beta, eps=1e-5):
    xf = x.astype(np.float32)                                  # [B, D]
    gf = gamma.astype(np.float32)                              # [D]
    bf = beta.astype(np.float32)                               # [D]
    mu = np.mean(xf, axis=-1, keepdims=True)                   # [B, 1]
    xc = xf - mu                                               # [B, D]
    var = np.mean(xc * xc, axis=-1, keepdims=True)             # [B, 1]
    rstd = 1.0 / np.sqrt(var + np.float32(eps))                # [B, 1]
    yf = xc * rstd * gf + bf                                   # [B, D]
    return yf.astype(x.dtype)                                  # [B, D]
