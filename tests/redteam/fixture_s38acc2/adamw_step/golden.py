# Golden function inventory
# | # | Golden operation                                   | Shape transformation |
# |---|----------------------------------------------------|----------------------|
# | 1 | m_out, v_out: the moment updates                   | [M,K] -> [M,K]       |
# | 2 | bc1, bc2 = 1 - beta^step (host scalars)            | scalars              |
# | 3 | weight_out = w - lr*(m_hat/(sqrt(v_hat)+eps)+wd*w)  | [M,K] -> [M,K]       |
"""AdamW single step with bias correction and decoupled weight decay, fp32 (gym ApplyAdamWV2's golden)."""

import numpy as np


def golden(weight, grad, m, v, beta1=0.9, beta2=0.999, lr=0.001, weight_decay=0.01, eps=1e-8, step=1):
    if int(step) != step or step < 1:
        raise ValueError("step must be an int >= 1")
    f = np.float32
    m_out = f(beta1) * m + f(1.0 - beta1) * grad
    v_out = f(beta2) * v + f(1.0 - beta2) * (grad * grad)
    bc1, bc2 = f(1.0 - beta1 ** step), f(1.0 - beta2 ** step)
    update = (m_out / bc1) / (np.sqrt(v_out / bc2) + f(eps)) + f(weight_decay) * weight
    w_out = weight - f(lr) * update
    return w_out.astype(np.float32), m_out.astype(np.float32), v_out.astype(np.float32)
