"""Precision test of softmax (bf16) on the NPU: python3 test_softmax.py."""

import os
import sys

ROOT = os.path.dirname(__file__)
while not os.path.isdir(os.path.join(ROOT, "tools")):
    ROOT = os.path.dirname(ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402
import torch_npu  # noqa: E402,F401
from gym_compare import assert_close  # noqa: E402
from softmax_golden import softmax_golden  # noqa: E402
from softmax_impl import softmax  # noqa: E402

DEVICE_ID = int(os.environ.get("TILE_FWK_DEVICE_ID", "0"))


def test_softmax_level0():
    torch.npu.set_device(DEVICE_ID)
    torch.manual_seed(42)
    for rows in (64, 77):
        x = (torch.randn(rows, 256, dtype=torch.bfloat16) * 2.0).to(f"npu:{DEVICE_ID}")
        y = softmax(x)
        torch.npu.synchronize()
        assert_close(y.cpu(), softmax_golden(x.cpu()), atol=0.0078125, rtol=0.0078125, name=f"y_rows{rows}")


if __name__ == "__main__":
    test_softmax_level0()
    print("[PRECISION_PASS]")
