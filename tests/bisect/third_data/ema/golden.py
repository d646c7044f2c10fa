"""EMA golden: m_new = beta * m + (1 - beta) * g (fp32)."""

import numpy as np


def golden(m, g, beta):
    bm = beta * m
    mg = (1.0 - beta) * g
    m_new = bm + mg
    return m_new.astype(np.float32)
