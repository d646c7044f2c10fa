"""SiLU golden (torch), fp32 inside."""

import torch


def silu_golden(x):
    return torch.nn.functional.silu(x.float()).to(x.dtype)  # [rows, 128]


def _make_inputs(device):
    cases = []
    for dtype in (torch.float32, torch.bfloat16):
        for rows in (32, 45):
            x = torch.randn(rows, 128, dtype=dtype, device=device) * 3.0
            cases.append((f"{str(dtype)[6:]}_rows{rows}", [x], {}))
    return cases
