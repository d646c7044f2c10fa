"""Precision test of SiLU on the NPU, one child process per dtype: python3 test_silu.py."""

import os
import subprocess
import sys

ROOT = os.path.dirname(__file__)
while not os.path.isdir(os.path.join(ROOT, "tools")):
    ROOT = os.path.dirname(ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402
import torch_npu  # noqa: E402,F401
from gym_compare import assert_close  # noqa: E402
from silu_golden import silu_golden  # noqa: E402
from silu_impl import silu  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def run_dtype(name):
    torch.npu.set_device(0)
    torch.manual_seed(42)
    for rows in (32, 45):
        x = (torch.randn(rows, 128, dtype=DTYPES[name]) * 3.0).npu()
        y = silu(x)
        torch.npu.synchronize()
        assert_close(y, silu_golden(x.cpu()), atol=1e-2, rtol=1e-2, name=f"y_{name}_rows{rows}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        run_dtype(sys.argv[1])
        sys.exit(0)
    for name in DTYPES:
        rc = subprocess.run([sys.executable, __file__, name], check=False).returncode
        if rc != 0:
            print(f"[PRECISION_FAIL] {name}")
            sys.exit(1)
    print("[PRECISION_PASS]")
