"""Row-centred golden (fp32): y = (p - sum(x, -1, keepdims)) * 2."""

import numpy as np


def golden(x, p):
    d = np.sum(x, axis=-1, keepdims=True)
    c = p - d
    y = c * 2.0
    return y.astype(np.float32)
