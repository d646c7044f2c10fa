# Golden function inventory
# | # | Golden operation                          | Shape transformation    |
# |---|-------------------------------------------|-------------------------|
# | 1 | x_even, x_odd = x[:, 0::2], x[:, 1::2]    | [S,D] -> 2 x [S,D/2]    |
# | 2 | rot_even = x_even * cos - x_odd * sin     | [S,D/2] -> [S,D/2]      |
# | 3 | rot_odd = x_even * sin + x_odd * cos      | [S,D/2] -> [S,D/2]      |
# | 4 | out = interleave(rot_even, rot_odd)       | 2 x [S,D/2] -> [S,D]    |
"""Interleaved RoPE golden (fp32)."""

import numpy as np


def golden(x, cos, sin):
    x_even = x[:, 0::2]                                          # [S, D/2]
    x_odd = x[:, 1::2]                                           # [S, D/2]
    rot_even = x_even * cos - x_odd * sin                        # [S, D/2]
    rot_odd = x_even * sin + x_odd * cos                         # [S, D/2]
    out = np.stack([rot_even, rot_odd], axis=-1).reshape(x.shape)  # [S, D]
    return out.astype(x.dtype)
