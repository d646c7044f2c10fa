"""Golden: leaky_relu(x + b) in fp32, rounded to bf16."""

import torch


def bias_leaky_golden(x, b, negative_slope=0.1):
    z = x.float() + b.float()
    return torch.nn.functional.leaky_relu(z, negative_slope).to(x.dtype)


def _make_inputs(device):
    cases = []
    for rows in (40, 16):
        x = torch.randn(rows, 64, dtype=torch.bfloat16, device=device)
        b = torch.randn(64, dtype=torch.bfloat16, device=device)
        cases.append((f"rows{rows}", [x, b], {"negative_slope": 0.1}))
    return cases
