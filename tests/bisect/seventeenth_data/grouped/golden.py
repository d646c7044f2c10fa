"""grouped golden: every query head h scaled by the weight of its KV head h // G (the weights expanded, as
gqa_decode_attn's golden expands its reduced KV heads; no grouped query is named)."""

import numpy as np

G = 4


def golden(q, w):
    w_exp = np.repeat(w.astype(np.float32), G, axis=0)
    y = q.astype(np.float32) * w_exp
    return y
