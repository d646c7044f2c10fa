# Golden function inventory
# | # | Golden operation                   | Shape transformation |
# |---|------------------------------------|----------------------|
# | 1 | h = exp(x - row max)               | [B,N,N] -> [B,N,N]   |
# | 2 | 6 x (row sums, h / row, col sums, h / col) | [B,N,N] -> [B,N,N] |
"""Sinkhorn golden in torch: the deep capture keeps every round's values (``golden.py:<line> div@k``)."""

import torch

ROUNDS = 6


def golden(x):
    h = torch.from_numpy(x)
    h = torch.exp(h - h.amax(-1, keepdim=True))
    for _ in range(ROUNDS):
        row = h.sum(-1, keepdim=True)
        h = h / row
        col = h.sum(-2, keepdim=True)
        h = h / col
    return h.numpy()
