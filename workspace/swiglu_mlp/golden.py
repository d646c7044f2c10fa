# Golden function inventory
# | # | Golden operation                        | Shape transformation       |
# |---|-----------------------------------------|----------------------------|
# --- Module M1: gate/up projections and SiLU-gating ---
# | 1 | g = x @ w_gate (fp32 accumulation)      | [T,H],[H,F] -> [T,F]       |
# | 2 | u = x @ w_up (fp32 accumulation)        | [T,H],[H,F] -> [T,F]       |
# | 3 | silu(g) = g / (1 + exp(-g))             | [T,F] -> [T,F]             |
# | 4 | h = silu(g) * u                         | [T,F],[T,F] -> [T,F]       |
# --- Module M2: down projection ---
# | 5 | y = h @ w_down (fp32 accumulation)      | [T,F],[F,H] -> [T,H]       |
"""SwiGLU MLP golden reference (numpy, fp32)."""

import numpy as np


def golden(x, w_gate, w_up, w_down):
    # --- Module M1: gate/up projections and SiLU-gating ---
    xf = x.astype(np.float32)                                  # [T, H]
    g = np.matmul(xf, w_gate.astype(np.float32))               # [T, F]
    u = np.matmul(xf, w_up.astype(np.float32))                 # [T, F]
    act = g / (1.0 + np.exp(-g))                               # [T, F]
    h = act * u                                                # [T, F]
    # --- Module M2: down projection ---
    y = np.matmul(h, w_down.astype(np.float32))                # [T, H]
    return y
