"""permout golden: y = (2x + 1) * w, computed heads first with the sequence padded to 8 (as the gym
gated_delta_rule's golden computes its intermediates), returned as [B, S, H, D]."""

import numpy as np


def golden(x, w):
    pad = ((0, 0), (0, 0), (0, 2), (0, 0))
    xt = np.pad(x.transpose(0, 2, 1, 3), pad)
    wt = np.pad(w.transpose(0, 2, 1, 3), pad)
    a = (xt * 2.0).astype(np.float32)
    b = (a + 1.0).astype(np.float32)
    c = (b * wt).astype(np.float32)
    return np.ascontiguousarray(c[:, :, :6].transpose(0, 2, 1, 3))
