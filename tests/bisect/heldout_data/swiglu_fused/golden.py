# Golden function inventory
# | # | Golden operation                  | Shape transformation      |
# |---|-----------------------------------|---------------------------|
# | 1 | gu = x @ w_gu                     | [M,HID],[HID,2F] -> [M,2F] |
# | 2 | gate, up = halves of gu           | [M,2F] -> 2 x [M,F]       |
# | 3 | act = silu(gate) * up             | [M,F] -> [M,F]            |
# | 4 | out = act @ w_down                | [M,F],[F,HID] -> [M,HID]  |
"""SwiGLU MLP golden (fp32) with a fused gate/up weight."""

import numpy as np


def golden(x, w_gu, w_down):
    gu = x @ w_gu                                               # [M, 2F]
    f = w_down.shape[0]
    gate = gu[:, :f]                                            # [M, F]
    up = gu[:, f:]                                              # [M, F]
    silu = gate / (1.0 + np.exp(-gate))                         # [M, F]
    act = silu * up                                             # [M, F]
    out = act @ w_down                                          # [M, HID]
    return out.astype(x.dtype)
