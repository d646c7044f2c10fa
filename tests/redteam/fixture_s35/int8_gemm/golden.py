# Golden function inventory
# | # | Golden operation                 | Shape transformation       |
# |---|----------------------------------|----------------------------|
# | 1 | a @ b, int32 accumulation, exact | [M,K],[K,N] -> [M,N]       |
import numpy as np


def golden(a, b):
    c = a.astype(np.int32) @ b.astype(np.int32)   # [M, N] int32, exact
    return c
