# Golden function inventory
# | # | Golden operation                                  | Shape transformation |
# |---|---------------------------------------------------|----------------------|
# | 1 | q = clip(rint(x / scale), -127, 127) in fp32      | [B,V] -> [B,V] int32 |
import numpy as np


def golden(x, scale):
    xf = x.astype(np.float32) / np.float32(scale)
    return np.clip(np.rint(xf), -127, 127).astype(np.int32)
