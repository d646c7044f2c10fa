"""Top-k selection golden (fp32): y = 2 * w at the 4 largest s of each row (largest first)."""

import numpy as np


def golden(s, w):
    ids = np.argsort(-s, axis=-1, kind="stable")[:, :4]
    picked = np.take_along_axis(w, ids, axis=-1)
    y = picked * 2.0
    return y.astype(np.float32)
