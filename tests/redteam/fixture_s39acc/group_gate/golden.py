# Golden function inventory
# | # | Golden operation                                   | Shape transformation   |
# |---|----------------------------------------------------|------------------------|
# | 1 | scores = sigmoid(logits); aug = scores + bias      | [T,E],[E] -> [T,E]     |
# | 2 | group max of aug, top-2 groups (stable)            | [T,E] -> [T,2]         |
# | 3 | aug of dropped groups = -inf; top-8 ids (stable)   | [T,E] -> [T,8]         |
# | 4 | weights = scores[ids] / sum                        | [T,E],[T,8] -> [T,8]   |
"""Group-limited top-k gating: sigmoid scores, biased selection, renormalised unbiased weights."""

import numpy as np

GROUPS, TOP_GROUPS, TOP_K = 4, 2, 8


def golden(logits, bias):
    x = logits.astype(np.float32)
    scores = (np.float32(1.0) / (np.float32(1.0) + np.exp(-x))).astype(np.float32)
    aug = scores + bias.astype(np.float32)[None, :]
    t, e = aug.shape
    gscore = aug.reshape(t, GROUPS, e // GROUPS).max(-1)
    top_groups = np.argsort(-gscore, axis=-1, kind="stable")[:, :TOP_GROUPS]
    keep = np.zeros((t, GROUPS), dtype=bool)
    np.put_along_axis(keep, top_groups, True, axis=-1)
    masked = np.where(np.repeat(keep, e // GROUPS, axis=-1), aug, -np.inf).astype(np.float32)
    ids = np.argsort(-masked, axis=-1, kind="stable")[:, :TOP_K]
    picked = np.take_along_axis(scores, ids, axis=-1)
    weights = (picked / picked.sum(-1, keepdims=True)).astype(np.float32)
    return weights, ids.astype(np.int32)
