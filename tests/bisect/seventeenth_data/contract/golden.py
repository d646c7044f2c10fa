"""contract golden: y = x @ w (fp32), the whole contracted axis."""

import numpy as np


def golden(x, w):
    xf = x.astype(np.float32)
    wf = w.astype(np.float32)
    y = xf @ wf
    return y
