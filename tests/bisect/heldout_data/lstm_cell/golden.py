# Golden function inventory
# | # | Golden operation                        | Shape transformation          |
# |---|-----------------------------------------|-------------------------------|
# | 1 | gates = x @ w_ih + h @ w_hh + bias      | [B,I],[I,4H],[B,H],[H,4H] -> [B,4H] |
# | 2 | split gates in four, activations        | [B,4H] -> 4 x [B,H]           |
# | 3 | c_new = f * c + i * g                   | [B,H] -> [B,H]                |
# | 4 | h_new = o * tanh(c_new)                 | [B,H] -> [B,H]                |
"""LSTM cell golden (fp32), in the style of a gym reference: torch-like chunk of the fused projection."""

import numpy as np


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def golden(x, h, c, w_ih, w_hh, bias):
    gates = x @ w_ih + h @ w_hh + bias                          # [B, 4H]
    H = h.shape[-1]
    in_gate = _sigmoid(gates[:, 0:H])                           # [B, H]
    forget_gate = _sigmoid(gates[:, H:2 * H])                   # [B, H]
    cell_gate = np.tanh(gates[:, 2 * H:3 * H])                  # [B, H]
    out_gate = _sigmoid(gates[:, 3 * H:4 * H])                  # [B, H]
    c_new = forget_gate * c + in_gate * cell_gate               # [B, H]
    h_new = out_gate * np.tanh(c_new)                           # [B, H]
    return h_new.astype(x.dtype), c_new.astype(x.dtype)
