# Golden function inventory
# | # | Golden operation                         | Shape transformation |
# |---|------------------------------------------|----------------------|
# | 1 | m_new = beta1 * m + (1 - beta1) * g      | [R,C] -> [R,C]       |
# | 2 | v_new = beta2 * v + (1 - beta2) * g^2    | [R,C] -> [R,C]       |
# | 3 | m_hat, v_hat (bias correction)           | [R,C] -> [R,C]       |
# | 4 | denom = sqrt(v_hat) + eps                | [R,C] -> [R,C]       |
# | 5 | decayed = param * (1 - lr * wd)          | [R,C] -> [R,C]       |
# | 6 | p_new = decayed - lr * m_hat / denom     | [R,C] -> [R,C]       |
"""AdamW step golden (fp32)."""

import numpy as np


def golden(param, grad, exp_avg, exp_avg_sq, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01,
           step=10):
    f = np.float32
    m_new = f(beta1) * exp_avg + f(1.0 - beta1) * grad                    # [R, C]
    v_new = f(beta2) * exp_avg_sq + f(1.0 - beta2) * grad * grad          # [R, C]
    m_hat = m_new / f(1.0 - beta1 ** step)                               # [R, C]
    v_hat = v_new / f(1.0 - beta2 ** step)                               # [R, C]
    denom = np.sqrt(v_hat) + f(eps)                                      # [R, C]
    decayed = param * f(1.0 - lr * weight_decay)                         # [R, C]
    p_new = decayed - f(lr) * m_hat / denom                              # [R, C]
    return p_new, m_new, v_new
