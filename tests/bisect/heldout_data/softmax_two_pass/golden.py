# Golden function inventory
# | # | Golden operation           | Shape transformation |
# |---|----------------------------|----------------------|
# | 1 | mx = row max               | [R,L] -> [R,1]       |
# | 2 | e = exp(x - mx)            | [R,L] -> [R,L]       |
# | 3 | den = row sum of e         | [R,L] -> [R,1]       |
# | 4 | y = e / den                | [R,L] -> [R,L]       |
"""Row softmax golden (fp32)."""

import numpy as np


def golden(x):
    mx = np.max(x, axis=-1, keepdims=True)                     # [R, 1]
    e = np.exp(x - mx)                                         # [R, L]
    den = np.sum(e, axis=-1, keepdims=True)                    # [R, 1]
    y = e / den                                                # [R, L]
    return y.astype(x.dtype)
