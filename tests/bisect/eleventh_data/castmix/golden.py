"""castmix golden: y = sum(a + b, -1) in fp32."""

import numpy as np


def golden(a, b):
    return (a.astype(np.float32) + b).sum(axis=-1, keepdims=True).astype(np.float32)
