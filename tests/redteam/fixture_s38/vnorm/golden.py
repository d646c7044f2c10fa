# Golden function inventory
# | # | Golden operation                 | Shape transformation |
# |---|----------------------------------|----------------------|
# | 1 | mean over N (two-pass, float64)  | [N] -> []            |
# | 2 | biased variance over N           | [N] -> []            |
# | 3 | (x - mean) / sqrt(var + 1e-5)    | [N] -> [N]           |
import numpy as np


def golden(x):
    xd = x.astype(np.float64)
    mean = xd.mean()
    var = ((xd - mean) ** 2).mean()
    return ((xd - mean) / np.sqrt(var + 1e-5)).astype(np.float32)
