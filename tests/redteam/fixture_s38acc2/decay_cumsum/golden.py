# Golden function inventory
# | # | Golden operation                     | Shape transformation |
# |---|--------------------------------------|----------------------|
# | 1 | inclusive cumsum of g over positions | [B,L] -> [B,L]       |
# | 2 | exp                                  | [B,L] -> [B,L]       |
"""Inclusive cumulative sum of log-gates over a chunk, then exp (the gated delta rule's decay)."""

import numpy as np


def golden(g):
    return np.exp(np.cumsum(g.astype(np.float64), axis=-1)).astype(np.float32)
