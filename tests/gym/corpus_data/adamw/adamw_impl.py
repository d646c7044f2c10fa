"""One AdamW step: three outputs (parameter, first and second moment), fp32, 16-row tiles over dynamic rows."""

import pypto
import torch

TILE_ROWS = 16
D = 64


@pypto.frontend.jit
def adamw_kernel(
    param: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    grad: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    exp_avg: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    exp_avg_sq: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    param_out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    exp_avg_out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    exp_avg_sq_out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    bias_correction1: float,
    bias_correction2: float,
):
    pypto.set_vec_tile_shapes(TILE_ROWS, D)
    rows = param.shape[0]
    for i in pypto.loop(pypto.ceildiv(rows, TILE_ROWS), name="rows", idx_name="i"):
        valid = (rows - i * TILE_ROWS).min(TILE_ROWS)
        off = [i * TILE_ROWS, 0]
        p = pypto.view(param, [TILE_ROWS, D], off, valid_shape=[valid, D])
        g = pypto.view(grad, [TILE_ROWS, D], off, valid_shape=[valid, D])
        m = pypto.view(exp_avg, [TILE_ROWS, D], off, valid_shape=[valid, D])
        v = pypto.view(exp_avg_sq, [TILE_ROWS, D], off, valid_shape=[valid, D])
        p = pypto.mul(p, 1.0 - lr * weight_decay)
        m = pypto.add(pypto.mul(m, beta1), pypto.mul(g, 1.0 - beta1))
        v = pypto.add(pypto.mul(v, beta2), pypto.mul(pypto.mul(g, g), 1.0 - beta2))
        denom = pypto.add(pypto.sqrt(pypto.div(v, bias_correction2)), eps)
        step = pypto.div(pypto.div(m, bias_correction1), denom)
        p = pypto.sub(p, pypto.mul(step, lr))
        pypto.assemble(p, off, param_out)
        pypto.assemble(m, off, exp_avg_out)
        pypto.assemble(v, off, exp_avg_sq_out)


def adamw(param, grad, exp_avg, exp_avg_sq, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01,
          step=1):
    param_out = torch.empty_like(param)
    exp_avg_out = torch.empty_like(exp_avg)
    exp_avg_sq_out = torch.empty_like(exp_avg_sq)
    adamw_kernel(param, grad, exp_avg, exp_avg_sq, param_out, exp_avg_out, exp_avg_sq_out,
                 lr, beta1, beta2, eps, weight_decay, 1.0 - beta1 ** step, 1.0 - beta2 ** step)
    return param_out, exp_avg_out, exp_avg_sq_out
