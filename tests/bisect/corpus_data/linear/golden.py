# Golden function inventory
# | # | Golden operation            | Shape transformation        |
# |---|-----------------------------|-----------------------------|
# | 1 | mm = x @ w^T (b_trans=True) | [M,K],[N,K] -> [M,N]        |
# | 2 | ys = mm * alpha             | [M,N] -> [M,N]              |
# | 3 | y = ys + bias               | [M,N],[1,N] -> [M,N]        |
"""Scaled linear layer golden, fp32."""

import numpy as np


def golden(x, w, bias, alpha=0.5):
    wt = np.transpose(w, (1, 0))                                # [K, N]  x @ w^T -> pypto: b_trans=True
    mm = x.astype(np.float32) @ wt.astype(np.float32)           # [M, N]
    ys = mm * np.float32(alpha)                                 # [M, N]
    y = ys + bias                                               # [M, N]
    return y.astype(x.dtype)
