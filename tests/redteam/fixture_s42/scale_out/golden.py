# Golden function inventory
# | # | Golden operation                          | Shape transformation |
# |---|-------------------------------------------|----------------------|
# | 1 | y = 2 x, cast to fp16 for out == "half"   | [B,V] -> [B,V]       |
import numpy as np


def golden(x, out):
    y = x.astype(np.float32) * np.float32(2.0)
    if out == "half":
        return y.astype(np.float16)
    if out != "same":
        raise ValueError(f"unknown out {out!r}")
    return y.astype(x.dtype)
