"""softmax golden: fp32 inside, bf16 out."""

import torch


def softmax_golden(x):
    xf = x.float()  # [rows, 256]
    return torch.softmax(xf, dim=-1).to(x.dtype)  # [rows, 256]


def _make_inputs(device):
    cases = []
    for rows in (64, 77):
        x = torch.randn(rows, 256, dtype=torch.bfloat16, device=device) * 2.0
        cases.append((f"rows{rows}", [x], {}))
    return cases


if __name__ == "__main__":
    for _name, args, kwargs in _make_inputs("cpu"):
        softmax_golden(*args, **kwargs)
