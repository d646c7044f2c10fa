"""AdamW step golden (torch, fp32): returns the new parameter and both moments."""

import torch


def adamw_golden(param, grad, exp_avg, exp_avg_sq, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 weight_decay=0.01, step=1):
    p = param * (1.0 - lr * weight_decay)  # [N, D]
    m = beta1 * exp_avg + (1.0 - beta1) * grad  # [N, D]
    v = beta2 * exp_avg_sq + (1.0 - beta2) * grad * grad  # [N, D]
    bc1 = 1.0 - beta1 ** step
    bc2 = 1.0 - beta2 ** step
    p = p - lr * (m / bc1) / (torch.sqrt(v / bc2) + eps)  # [N, D]
    return p, m, v


def _make_inputs(device):
    cases = []
    for rows in (64, 90):
        param = torch.randn(rows, 64, device=device)
        grad = torch.randn(rows, 64, device=device) * 0.1
        exp_avg = torch.randn(rows, 64, device=device) * 0.01
        exp_avg_sq = torch.rand(rows, 64, device=device) * 0.01
        kwargs = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01, "step": 3}
        cases.append((f"rows{rows}", [param, grad, exp_avg, exp_avg_sq], kwargs))
    return cases
