"""Precision test of RMSNorm (fp16) on the NPU: python3 test_rms_norm.py."""

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
from rms_norm_golden import rms_norm_golden  # noqa: E402
from rms_norm_impl import rms_norm  # noqa: E402

DEVICE = f"npu:{os.environ.get('TILE_FWK_DEVICE_ID', '0')}"


def test_rms_norm_level0():
    torch.manual_seed(42)
    for tokens in (48, 100):
        x = torch.randn(tokens, 128, dtype=torch.float16, device=DEVICE)
        gamma = torch.rand(128, dtype=torch.float16).npu() + 0.5
        y = rms_norm(x, gamma, eps=1e-6)
        torch.npu.synchronize()
        assert_close(y, rms_norm_golden(x.cpu(), gamma.cpu(), eps=1e-6), atol=2e-3, rtol=2e-3,
                     name=f"y_tokens{tokens}")


if __name__ == "__main__":
    torch.npu.set_device(DEVICE)
    test_rms_norm_level0()
    print("[PRECISION_PASS]")
