# Golden function inventory
# | # | Golden operation                              | Shape transformation |
# |---|-----------------------------------------------|----------------------|
# | 1 | keep scores where i - window < j <= i, else 0 | [S,S] -> [S,S]       |
"""Causal sliding-window mask: a query keeps itself and the window-1 keys before it."""

import numpy as np


def golden(scores, window=8):
    s = scores.shape[0]
    i = np.arange(s)[:, None]
    j = np.arange(s)[None, :]
    keep = (j <= i) & (j > i - int(window))
    return np.where(keep, scores, np.float32(0)).astype(scores.dtype)
