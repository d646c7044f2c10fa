"""twopath golden: c = 2x + b1, h = act(c + b2), s = exp(c / 2) * (1 + c) (fp32)."""

import numpy as np


def golden(x, b1, b2):
    c = x * 2.0 + b1
    h_t = c + b2
    h = h_t / (1.0 + np.exp(-h_t))
    p = np.exp(c * 0.5)
    d = p * c
    s = p + d
    return c.astype(np.float32), (h + s).astype(np.float32)
