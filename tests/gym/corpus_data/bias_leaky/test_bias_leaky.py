"""python3 test_bias_leaky.py on the NPU."""

import os
import sys

ROOT = os.path.dirname(__file__)
while not os.path.isdir(os.path.join(ROOT, "tools")):
    ROOT = os.path.dirname(ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402
import torch_npu  # noqa: E402,F401
from bias_leaky_golden import bias_leaky_golden  # noqa: E402
from bias_leaky_impl import bias_leaky  # noqa: E402
from gym_compare import assert_close  # noqa: E402


def test_bias_leaky():
    torch.manual_seed(0)
    for rows in (40, 16):
        x = torch.randn(rows, 64, dtype=torch.bfloat16).npu()
        b = torch.randn(64, dtype=torch.bfloat16, device="npu")
        y = bias_leaky(x, b, negative_slope=0.1)
        torch.npu.synchronize()
        assert_close(y, bias_leaky_golden(x.cpu(), b.cpu(), 0.1), atol=2 ** -7, rtol=2 ** -7, name=f"rows{rows}")


if __name__ == "__main__":
    torch.npu.set_device(0)
    test_bias_leaky()
    print("[PRECISION_PASS]")
