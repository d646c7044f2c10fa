# Golden function inventory
# | # | Golden operation     | Shape transformation          |
# |---|----------------------|-------------------------------|
# | 1 | a * b + c in fp32    | [B,D],[B,D],[B,D] -> [B,D]    |
import numpy as np


def golden(a, b, c):
    f = np.float32
    return (a.astype(f) * b.astype(f) + c.astype(f)).astype(a.dtype)
