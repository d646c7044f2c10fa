# Golden function inventory
# | # | Golden operation                          | Shape transformation  |
# |---|-------------------------------------------|-----------------------|
# | 1 | softmax over E in fp32                    | [T,E] -> [T,E]        |
# | 2 | top-8 ids (descending p, lower id first)  | [T,E] -> [T,K]        |
# | 3 | weights = p[ids] (fp32)                    | [T,E] -> [T,K]        |
import numpy as np


def golden(logits):
    xf = logits.astype(np.float32)
    e = np.exp(xf - xf.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    ids = np.argsort(-p, axis=-1, kind="stable")[:, :8].astype(np.int32)
    weights = np.take_along_axis(p, ids, axis=-1)          # fp32
    return weights, ids
