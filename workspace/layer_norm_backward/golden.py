# Golden function inventory
# | # | Golden operation                                  | Shape transformation          |
# |---|---------------------------------------------------|-------------------------------|
# --- Module M1: normalised input ---
# | 1 | xhat = (x - mean) * rstd                          | [N,H],[N,1],[N,1] -> [N,H]    |
# --- Module M2: parameter gradients ---
# | 2 | dgamma = sum over rows of dy * xhat               | [N,H],[N,H] -> [H]            |
# | 3 | dbeta = sum over rows of dy                       | [N,H] -> [H]                  |
# --- Module M3: input gradient ---
# | 4 | g = dy * gamma                                    | [N,H],[H] -> [N,H]            |
# | 5 | mean_g = mean of g over H                         | [N,H] -> [N,1]                |
# | 6 | mean_gx = mean of g * xhat over H                 | [N,H],[N,H] -> [N,1]          |
# | 7 | dx = (g - mean_g - xhat * mean_gx) * rstd         | [N,H],[N,1],[N,1] -> [N,H]    |
"""LayerNorm backward golden reference (numpy, fp32): dx, dgamma, dbeta from dy, x and the saved statistics."""

import numpy as np


def golden(dy, x, mean, rstd, gamma):
    # --- Module M1: normalised input ---
    m = mean.astype(np.float32)[:, None]                       # [N, 1]
    r = rstd.astype(np.float32)[:, None]                       # [N, 1]
    xhat = (x.astype(np.float32) - m) * r                      # [N, H]
    # --- Module M2: parameter gradients ---
    dyf = dy.astype(np.float32)                                # [N, H]
    dgamma = np.sum(dyf * xhat, axis=0)                        # [H]
    dbeta = np.sum(dyf, axis=0)                                # [H]
    # --- Module M3: input gradient ---
    g = dyf * gamma.astype(np.float32)                         # [N, H]
    mean_g = np.mean(g, axis=-1, keepdims=True)                # [N, 1]
    mean_gx = np.mean(g * xhat, axis=-1, keepdims=True)        # [N, 1]
    dx = (g - mean_g - xhat * mean_gx) * r                     # [N, H]
    return dx, dgamma, dbeta
