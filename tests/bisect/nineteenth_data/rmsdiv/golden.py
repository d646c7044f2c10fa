"""rmsdiv golden: rms_norm(rms_norm(x) * w), each as x * rsqrt(mean(x^2) + eps) (fp32)."""

import numpy as np


def _rms(x):
    inv_rms = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6)
    return x * inv_rms


def golden(x, w):
    h = _rms(x.astype(np.float32)) * w.astype(np.float32)
    y = _rms(h)
    return y
