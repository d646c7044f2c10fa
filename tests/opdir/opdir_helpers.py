"""Helpers for building small operator directories in tmp_path (imported by the opdir tests)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SILU = REPO / "workspace" / "silu"

BASE_SPEC = """\
---
op_name: scale_add
inputs:
  - {name: x, shape: [B, D], dtype: T, range: [-2.0, 2.0]}
  - {name: b, shape: [D], dtype: fp32}
outputs:
  - {name: y, shape: [B, D], dtype: T}
dynamic_axes: [B]
p0_shapes: [{B: 16, D: 32}, {B: 21, D: 32}]
supported_dtypes: [fp32]
tolerance: {fp32: {atol: 1.0e-5, rtol: 1.0e-5}}
seeds: [0, 1, 2]
alpha: 2.0
---
# scale_add
"""

BASE_GOLDEN = """\
# Golden function inventory
# | # | Golden operation | Shape transformation |
# |---|------------------|----------------------|
# | 1 | alpha * x        | [B,D] -> [B,D]       |
# | 2 | + b              | [B,D],[D] -> [B,D]   |
import numpy as np


def golden(x, b, alpha=1.0):
    scaled = x.astype(np.float32) * alpha
    y = scaled + b
    return y.astype(x.dtype)
"""


def write_op(root: Path, spec: str | None = BASE_SPEC, golden: str | None = BASE_GOLDEN) -> Path:
    """Create an op dir under ``root`` with the given SPEC.md / golden.py text (None = leave out)."""
    root.mkdir(parents=True, exist_ok=True)
    if spec is not None:
        (root / "SPEC.md").write_text(textwrap.dedent(spec), encoding="utf-8")
    if golden is not None:
        (root / "golden.py").write_text(textwrap.dedent(golden), encoding="utf-8")
    return root


def copy_silu(dest: Path) -> Path:
    """A private copy of workspace/silu (tests that prove "nothing written" must not race other writers)."""
    shutil.copytree(SILU, dest, ignore=shutil.ignore_patterns(".forge", "traces", "__pycache__", ".git"))
    return dest


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with (size, mtime_ns): to prove nothing was written."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}
