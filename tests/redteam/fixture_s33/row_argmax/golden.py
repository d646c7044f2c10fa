# Golden function inventory
# | # | Golden operation          | Shape transformation |
# |---|---------------------------|----------------------|
# | 1 | argmax over the last axis | [B,D] -> [B]         |
import numpy as np


def golden(x):
    return np.argmax(x, axis=-1).astype(np.int64)
