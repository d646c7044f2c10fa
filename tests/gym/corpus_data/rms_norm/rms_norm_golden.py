"""RMSNorm golden (torch), fp32 accumulation."""

import torch


def rms_norm_golden(x, gamma, eps=1e-6):
    xf = x.float()  # [T, H]
    ms = torch.mean(xf * xf, dim=-1, keepdim=True)  # [T, 1]
    y = xf * torch.rsqrt(ms + eps) * gamma.float()  # [T, H]
    return y.to(x.dtype)


def _make_inputs(device):
    cases = []
    for tokens in (48, 100):
        x = torch.randn(tokens, 128, dtype=torch.float16, device=device)
        gamma = (torch.rand(128, dtype=torch.float16, device=device) + 0.5)
        cases.append((f"tokens{tokens}", [x, gamma], {"eps": 1e-6}))
    return cases
