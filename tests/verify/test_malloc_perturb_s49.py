"""Children's fresh memory is never zero by chance (session 49: `runtime.sandbox.env_policy.child_env`).

A write-only output the wrapper took from ``torch.empty`` is described to the device as a zero fill when its bytes
happen to be zero, and as uninitialised memory otherwise: a kernel that left part of it unwritten got FAIL_CHEAT on
one machine and FAIL_NUMERIC on another (CI, ``test_an_int_output_left_unwritten_is_not_judged_on_a_zero_fill``, 4 of
6 runs in one clone). glibc's ``MALLOC_PERTURB_`` fills every malloc'd block; ``calloc`` (``np.zeros``) stays zero."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from runtime.sandbox.env_policy import child_env

_PROBE = """
import numpy as np
big = np.empty(1 << 21, np.uint8)     # fresh pages (mmap): zeros without the perturbation
small = np.empty(4096, np.int32)      # from the heap
zeros = np.zeros(1 << 21, np.uint8)   # calloc: zeros either way
print(int(np.count_nonzero(big) == 0), int(np.count_nonzero(small) == 0), int(np.count_nonzero(zeros) == 0))
"""


def test_fresh_memory_of_a_child_is_never_all_zero(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], env=child_env(tmp_path), capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    assert out == ["0", "0", "1"], out


def test_without_it_fresh_pages_are_zero(tmp_path: Path) -> None:
    """The control: the same probe without the variable - what made the verdict depend on the allocator's luck."""
    env = {k: v for k, v in child_env(tmp_path).items() if k != "MALLOC_PERTURB_"}
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True,
                         timeout=60).stdout.split()
    assert out[0] == "1" and out[2] == "1", out
    assert np.uint8(int(child_env(tmp_path)["MALLOC_PERTURB_"])) != 0
