# Golden function inventory
# | # | Golden operation                       | Shape transformation      |
# |---|----------------------------------------|---------------------------|
# | 1 | acc = x @ w (exact integer)            | [M,K],[K,N] -> [M,N]      |
# | 2 | out = fp16(fp32(acc) * scale[n])       | [M,N],[N] -> [M,N]        |
"""int8 matmul, exact int accumulation, per-output-channel dequant scale."""

import numpy as np


def golden(x, w, scale):
    acc = x.astype(np.int64) @ w.astype(np.int64)
    return (acc.astype(np.float32) * scale.astype(np.float32)[None, :]).astype(np.float16)
