# Golden function inventory
# | # | Golden operation                                | Shape transformation |
# |---|-------------------------------------------------|----------------------|
# | 1 | y = sum, mean or max of x over V by `mode`      | [B,V] -> [B,1]       |
import numpy as np

MODES = ("sum", "mean", "max")
_REDUCE = (("sum", np.sum), ("mean", np.mean), ("max", np.max))


def golden(x, mode):
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    xf = x.astype(np.float32)
    for name, fn in _REDUCE:
        if name == mode:
            return fn(xf, axis=-1, keepdims=True).astype(x.dtype)
    raise AssertionError(mode)
