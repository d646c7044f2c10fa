# Golden function inventory
# | # | Golden operation                   | Shape transformation |
# |---|------------------------------------|----------------------|
# | 1 | m_new = b1 * m + (1 - b1) * g      | [B,D] -> [B,D]       |
# | 2 | v_new = b2 * v + (1 - b2) * g * g  | [B,D] -> [B,D]       |
import numpy as np


def golden(m, v, g, betas):
    b1, b2 = np.float32(betas[0]), np.float32(betas[1])
    m_new = b1 * m + (np.float32(1) - b1) * g
    v_new = b2 * v + (np.float32(1) - b2) * (g * g)
    return m_new.astype(np.float32), v_new.astype(np.float32)
