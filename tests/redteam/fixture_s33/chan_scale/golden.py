# Golden function inventory
# | # | Golden operation                      | Shape transformation     |
# |---|---------------------------------------|--------------------------|
# | 1 | per-channel max |x| over (B, H, W)   | [B,C,H,W] -> [1,C,1,1]   |
# | 2 | x / max(amax, 1e-6)                   | [B,C,H,W] -> [B,C,H,W]   |
import numpy as np


def golden(x):
    amax = np.abs(x).max(axis=(0, 2, 3), keepdims=True)
    return (x / np.maximum(amax, np.float32(1e-6))).astype(np.float32)
