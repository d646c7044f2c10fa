# Golden function inventory
# | # | Golden operation         | Shape transformation |
# |---|--------------------------|----------------------|
# | 1 | softmax over the vector  | [V] -> [V]           |
import numpy as np


def golden(x):
    xf = x.astype(np.float64)
    e = np.exp(xf - xf.max())
    return (e / e.sum()).astype(np.float32)
