# Golden function inventory
# | # | Golden operation                                   | Shape transformation          |
# |---|----------------------------------------------------|-------------------------------|
# | 1 | top-k over experts: top logits and expert ids      | [T,E] -> [T,K],[T,K] (int32)  |
# | 2 | row max of the top logits                          | [T,K] -> [T,1]                |
# | 3 | e = exp(top - max)                                 | [T,K],[T,1] -> [T,K]          |
# | 4 | row sum of e                                       | [T,K] -> [T,1]                |
# | 5 | weights = e / sum                                  | [T,K],[T,1] -> [T,K]          |
"""MoE top-k gating golden reference (numpy): fp32 routing weights and int32 expert ids."""

import numpy as np

K = 8


def golden(logits):
    lf = logits.astype(np.float32)                                  # [T, E]
    order = np.argsort(-lf, axis=-1, kind="stable")[:, :K]          # [T, K] (ties: lower id first)
    top = np.take_along_axis(lf, order, axis=-1)                    # [T, K]
    ids = order.astype(np.int32)                                    # [T, K]
    top_max = np.max(top, axis=-1, keepdims=True)                   # [T, 1]
    e = np.exp(top - top_max)                                       # [T, K]
    e_sum = np.sum(e, axis=-1, keepdims=True)                       # [T, 1]
    weights = e / e_sum                                             # [T, K]
    return weights, ids
