# Golden function inventory
# | # | Golden operation                 | Shape transformation           |
# |---|----------------------------------|--------------------------------|
# | 1 | mean of squares over D (fp32)    | [B,H,S,D] -> [B,H,S,1]         |
# | 2 | q * rsqrt(ms + 1e-6) * gamma     | [B,H,S,D],[D] -> [B,H,S,D]     |
import numpy as np


def golden(q, gamma):
    qf = q.astype(np.float32)
    ms = np.mean(qf * qf, axis=-1, keepdims=True)
    y = qf / np.sqrt(ms + np.float32(1e-6)) * gamma.astype(np.float32)
    return y.astype(q.dtype)
