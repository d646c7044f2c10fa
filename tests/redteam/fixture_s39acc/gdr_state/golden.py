# Golden function inventory
# | # | Golden operation                                   | Shape transformation            |
# |---|----------------------------------------------------|---------------------------------|
# | 1 | S = exp(g_t) * S                                   | [DK,DV] -> [DK,DV]              |
# | 2 | u = v_t - k_t @ S; S += outer(k_t, beta_t * u)     | [DK],[DV],[DK,DV] -> [DK,DV]    |
# | 3 | o_t = q_t @ S                                      | [DK],[DK,DV] -> [DV]            |
# | 4 | hT = S after the last step                         | -> [B,DK,DV]                    |
"""Gated delta rule, recurrent form (fp32, float64 internally)."""

import numpy as np


def golden(q, k, v, g, beta, h0):
    b_count, steps, _dk = q.shape
    o = np.zeros((b_count, steps, v.shape[2]), dtype=np.float64)
    h_t = np.zeros(h0.shape, dtype=np.float64)
    for b in range(b_count):
        s = h0[b].astype(np.float64)
        for t in range(steps):
            s = np.exp(np.float64(g[b, t])) * s
            u = v[b, t].astype(np.float64) - k[b, t].astype(np.float64) @ s
            s = s + np.outer(k[b, t].astype(np.float64), np.float64(beta[b, t]) * u)
            o[b, t] = q[b, t].astype(np.float64) @ s
        h_t[b] = s
    return o.astype(np.float32), h_t.astype(np.float32)
