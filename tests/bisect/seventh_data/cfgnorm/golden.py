"""cfgnorm golden: y = x / sqrt(mean(x^2, -1) + eps) (fp32)."""

import numpy as np


def golden(x, eps):
    mean_sq = (x * x).mean(-1, keepdims=True)
    mean_sq_eps = mean_sq + eps
    rms = np.sqrt(mean_sq_eps)
    y = x / rms
    return y.astype(np.float32)
