"""AdamW step over [R, 1024] fp32 tensors in 32 x 512 tiles (row tail through valid_shape)."""

import numpy as np
import pypto

TR = 32
TC = 512
C = 1024
LR = 1.0e-3
BETA1 = 0.9
BETA2 = 0.999
EPS = 1.0e-8
WD = 0.01
STEP = 10
BC1 = 1.0 - BETA1 ** STEP
BC2 = 1.0 - BETA2 ** STEP


@pypto.frontend.jit
def adamw_kernel(
    param: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    grad: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    exp_avg: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    exp_avg_sq: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    p_out: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    m_out: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    v_out: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
):
    rows = param.shape[0]
    pypto.set_vec_tile_shapes(TR, TC)
    for i in pypto.loop((rows + TR - 1) // TR, name="row_tiles", idx_name="i"):
        for j in pypto.loop(C // TC, name="col_tiles", idx_name="j"):
            vr = (rows - i * TR).min(TR)
            p = pypto.view(param, [TR, TC], [i * TR, j * TC], valid_shape=[vr, TC])
            g = pypto.view(grad, [TR, TC], [i * TR, j * TC], valid_shape=[vr, TC])
            m = pypto.view(exp_avg, [TR, TC], [i * TR, j * TC], valid_shape=[vr, TC])
            v = pypto.view(exp_avg_sq, [TR, TC], [i * TR, j * TC], valid_shape=[vr, TC])
            m_new = m * BETA1 + g * (1.0 - BETA1)
            v_new = v * BETA2 + g * g * (1.0 - BETA2)
            m_hat = m_new / BC1
            v_hat = v_new / BC2
            denom = pypto.sqrt(v_hat) + EPS
            decayed = p * (1.0 - LR * WD)
            p_new = decayed - m_hat / denom * LR
            pypto.assemble(m_new, [i * TR, j * TC], m_out)
            pypto.assemble(v_new, [i * TR, j * TC], v_out)
            pypto.assemble(p_new, [i * TR, j * TC], p_out)


def adamw_wrapper(param, grad, exp_avg, exp_avg_sq):
    p_out = np.zeros(param.shape, dtype=param.dtype)
    m_out = np.zeros(param.shape, dtype=param.dtype)
    v_out = np.zeros(param.shape, dtype=param.dtype)
    adamw_kernel(param, grad, exp_avg, exp_avg_sq, p_out, m_out, v_out)
    return p_out, m_out, v_out
