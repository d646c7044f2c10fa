"""scaled golden: s = (2q * 0.125) @ k^T (fp32 inside; the scaled query re-bound as ``query``)."""

import numpy as np


def golden(q, k):
    query = q.astype(np.float32) * 2.0
    query = query * 0.125
    key = k.astype(np.float32)
    s = query @ key.T
    return s
