"""Precision test of one AdamW step on the NPU: python3 test_adamw.py."""

import os
import sys

ROOT = os.path.dirname(__file__)
while not os.path.isdir(os.path.join(ROOT, "tools")):
    ROOT = os.path.dirname(ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402
import torch_npu  # noqa: E402,F401
from adamw_golden import _make_inputs, adamw_golden  # noqa: E402
from adamw_impl import adamw  # noqa: E402
from gym_compare import assert_close  # noqa: E402

DEVICE = torch.device(f"npu:{os.environ.get('TILE_FWK_DEVICE_ID', '0')}")


def test_adamw_level0():
    torch.manual_seed(42)
    for name, args, kwargs in _make_inputs(DEVICE):
        got = adamw(*args, **kwargs)
        torch.npu.synchronize()
        want = adamw_golden(*[a.cpu() for a in args], **kwargs)
        for label, a, b in zip(("param", "exp_avg", "exp_avg_sq"), got, want):
            assert_close(a, b, atol=1e-5, rtol=1e-5, name=f"{name}_{label}")


if __name__ == "__main__":
    test_adamw_level0()
    print("[PRECISION_PASS]")
