"""Half-split RoPE golden over heads (fp32)."""

import numpy as np


def golden(x, cos, sin):
    x_e, x_o = x[..., 0::2], x[..., 1::2]          # [B, H, S, 8]
    c_e, c_o = cos[..., 0::2], cos[..., 1::2]      # [B, 1, S, 8]
    s_e, s_o = sin[..., 0::2], sin[..., 1::2]
    ye = x_e * c_e - x_o * s_e
    yo = x_e * s_o + x_o * c_o
    y = np.concatenate([ye, yo], axis=-1)          # [B, H, S, 16]
    return y.astype(x.dtype)
