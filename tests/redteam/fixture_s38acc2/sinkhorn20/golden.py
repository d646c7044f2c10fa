# Golden function inventory
# | # | Golden operation                          | Shape transformation |
# |---|-------------------------------------------|----------------------|
# | 1 | P = exp(x)                                | [B,N,N]              |
# | 2 | iters x (row normalise, then column)      | [B,N,N]              |
"""Sinkhorn-Knopp: rows then columns, `iters` times, fp32."""

import numpy as np


def golden(x, iters=20):
    p = np.exp(x.astype(np.float32))
    for _ in range(int(iters)):
        p = p / p.sum(axis=-1, keepdims=True)
        p = p / p.sum(axis=-2, keepdims=True)
    return p.astype(np.float32)
