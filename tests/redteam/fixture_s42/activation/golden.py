# Golden function inventory
# | # | Golden operation                                  | Shape transformation |
# |---|---------------------------------------------------|----------------------|
# | 1 | silu(x) or gelu_tanh(x) by `kind`, in fp32        | [B,V] -> [B,V]       |
import numpy as np


def golden(x, kind):
    xf = x.astype(np.float32)
    if kind == "silu":
        return (xf / (np.float32(1.0) + np.exp(-xf))).astype(x.dtype)
    if kind == "gelu_tanh":
        inner = np.float32(np.sqrt(2.0 / np.pi)) * (xf + np.float32(0.044715) * xf * xf * xf)
        return (np.float32(0.5) * xf * (np.float32(1.0) + np.tanh(inner))).astype(x.dtype)
    raise ValueError(f"unknown kind {kind!r}")
