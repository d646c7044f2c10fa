# Golden function inventory
# | # | Golden operation                                  | Shape transformation           |
# |---|---------------------------------------------------|--------------------------------|
# | 1 | out[b, t] = cache[table[b, t // BS], t % BS]      | [NB,BS,D],[B,MB],[B] -> [B,S,D]|
# | 2 | rows at or past lens[b] stay 0                    |                                |
"""Paged KV gather through a block table (exact copy, zeros past each sequence's length)."""

import numpy as np


def golden(cache, table, lens):
    _nb, bs, d = cache.shape
    b_count, mb = table.shape
    out = np.zeros((b_count, mb * bs, d), dtype=cache.dtype)
    for b in range(b_count):
        for t in range(int(lens[b])):
            out[b, t] = cache[int(table[b, t // bs]), t % bs]
    return out
