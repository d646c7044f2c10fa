# Golden function inventory
# | # | Golden operation                          | Shape transformation       |
# |---|-------------------------------------------|----------------------------|
# | 1 | per-channel mean over (B, H, W)           | [B,C,H,W] -> [1,C,1,1]     |
# | 2 | per-channel biased variance (two-pass)    | [B,C,H,W] -> [1,C,1,1]     |
# | 3 | (x - mean) / sqrt(var + 1e-5)             | [B,C,H,W] -> [B,C,H,W]     |
import numpy as np


def golden(x):
    xd = x.astype(np.float64)
    mean = xd.mean(axis=(0, 2, 3), keepdims=True)
    var = ((xd - mean) ** 2).mean(axis=(0, 2, 3), keepdims=True)
    y = (xd - mean) / np.sqrt(var + 1e-5)
    return y.astype(np.float32)
