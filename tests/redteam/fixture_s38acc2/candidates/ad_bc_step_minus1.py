"""adamw_step (wrong): the bias-correction power one step behind (beta ** (step - 1), the step count read as the steps
already taken)."""

import numpy as np
import pypto

M = 16
N_TILE = 128


@pypto.frontend.jit
def adamw_kernel(
    weight: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_FP32),
    grad: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_FP32),
    m: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_FP32),
    v: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_FP32),
    weight_out: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_FP32),
    m_out: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_FP32),
    v_out: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_FP32),
    beta1: float,
    one_m_b1: float,
    beta2: float,
    one_m_b2: float,
    bc1: float,
    bc2: float,
    lr: float,
    weight_decay: float,
    eps: float,
):
    k = weight.shape[1]
    pypto.set_vec_tile_shapes(M, N_TILE)
    for j in pypto.loop((k + N_TILE - 1) // N_TILE, name="k_loop", idx_name="j"):
        off = j * N_TILE
        valid = (k - off).min(N_TILE)
        w = pypto.view(weight, [M, N_TILE], [0, off], valid_shape=[M, valid])
        g = pypto.view(grad, [M, N_TILE], [0, off], valid_shape=[M, valid])
        mt = pypto.view(m, [M, N_TILE], [0, off], valid_shape=[M, valid])
        vt = pypto.view(v, [M, N_TILE], [0, off], valid_shape=[M, valid])
        m_new = pypto.add(pypto.mul(mt, beta1), pypto.mul(g, one_m_b1))
        v_new = pypto.add(pypto.mul(vt, beta2), pypto.mul(pypto.mul(g, g), one_m_b2))
        m_hat = pypto.div(m_new, bc1)
        v_hat = pypto.div(v_new, bc2)
        denom = pypto.add(pypto.sqrt(v_hat), eps)
        update = pypto.add(pypto.div(m_hat, denom), pypto.mul(w, weight_decay))
        w_new = pypto.sub(w, pypto.mul(update, lr))
        pypto.assemble(w_new, [0, off], weight_out)
        pypto.assemble(m_new, [0, off], m_out)
        pypto.assemble(v_new, [0, off], v_out)


def adamw_step_wrapper(weight, grad, m, v, beta1=0.9, beta2=0.999, lr=0.001, weight_decay=0.01, eps=1e-8, step=1):
    bc1 = 1.0 - beta1 ** (step - 1) if step > 1 else 1.0 - beta1
    bc2 = 1.0 - beta2 ** (step - 1) if step > 1 else 1.0 - beta2
    weight_out = np.zeros_like(weight)
    m_out = np.zeros_like(m)
    v_out = np.zeros_like(v)
    adamw_kernel(weight, grad, m, v, weight_out, m_out, v_out, float(beta1), float(1.0 - beta1), float(beta2),
                 float(1.0 - beta2), float(bc1), float(bc2), float(lr), float(weight_decay), float(eps))
    return weight_out, m_out, v_out
