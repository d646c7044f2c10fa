"""Exponential moving average with the blend factors computed by the host wrapper (AdamW's first moment)."""

import numpy as np
import pypto

ROWS = 8
COLS = 32


@pypto.frontend.jit
def ema_kernel(
    m: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    g: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    beta: float,
    one_m_beta: float,
):
    pypto.set_vec_tile_shapes(ROWS, COLS)
    n = m.shape[0]
    for i in pypto.loop((n + ROWS - 1) // ROWS, name="r_loop"):
        valid = (n - i * ROWS).min(ROWS)
        m_t = pypto.view(m, [ROWS, COLS], [i * ROWS, 0], valid_shape=[valid, COLS])
        g_t = pypto.view(g, [ROWS, COLS], [i * ROWS, 0], valid_shape=[valid, COLS])
        bm = pypto.mul(m_t, beta)
        mg = pypto.mul(g_t, one_m_beta)
        m_new = pypto.add(bm, mg)
        pypto.assemble(m_new, [i * ROWS, 0], out)


def ema_wrapper(m, g, beta):
    one_m_beta = 1.0 - beta
    out = np.zeros_like(m)
    ema_kernel(m, g, out, beta, one_m_beta)
    return out
