"""permpad golden: xn = x / 4 + 1 in the input's layout, then y = (2xn + 1) * xn per head on the permuted xn, whose
padding holds xn's value at x = 0 (the golden pads with f(0) = 1, not with zeros)."""

import numpy as np


def golden(x):
    s = x.shape[0]
    xn = x * 0.25 + 1.0
    xt = np.ones((x.shape[1], 8, x.shape[2]), dtype=np.float32)
    xt[:, :s] = xn.transpose(1, 0, 2)
    xs = xt * 2.0
    xs1 = xs + 1.0
    ys = xs1 * xt
    return np.ascontiguousarray(ys[:, :s].transpose(1, 0, 2)).astype(np.float32)
