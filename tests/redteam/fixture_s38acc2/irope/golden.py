# Golden function inventory
# | # | Golden operation                           | Shape transformation |
# |---|--------------------------------------------|----------------------|
# | 1 | even / odd lanes of x, cos, sin (fp32)     | [S,D] -> [S,D/2]     |
# | 2 | y_even = xe*ce - xo*se, y_odd = xe*so+xo*co | [S,D/2]              |
# | 3 | out = [y_even | y_odd], one bf16 rounding  | -> [S,D]             |
"""Interleaved RoPE with a split-half output, fp32 inside, one bf16 rounding."""

import numpy as np


def golden(x, cos, sin):
    xf, cf, sf = (a.astype(np.float32) for a in (x, cos, sin))
    xe, xo = xf[:, 0::2], xf[:, 1::2]
    ye = xe * cf[:, 0::2] - xo * sf[:, 0::2]
    yo = xe * sf[:, 1::2] + xo * cf[:, 1::2]
    return np.concatenate([ye, yo], axis=-1).astype(x.dtype)
