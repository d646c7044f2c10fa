# Golden function inventory
# | # | Golden operation                                  | Shape transformation |
# |---|---------------------------------------------------|----------------------|
# | 1 | x[:, 1:] > x[:, :-1], False in column 0           | [B,D] -> [B,D]       |
import numpy as np


def golden(x):
    y = np.zeros(x.shape, dtype=bool)
    y[:, 1:] = x[:, 1:] > x[:, :-1]
    return y
