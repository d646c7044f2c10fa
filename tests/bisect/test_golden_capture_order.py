"""Golden intermediates come back in the order golden.py computed them (bisect's data-flow order).

Python lists a local that is read inside a generator expression (a cell variable) after every other local;
the capture must not inherit that order.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bisect_corpus import CORPUS

from runtime.opdir import load_op_dir, run_golden

GOLDEN = '''
import numpy as np


def golden(x, gamma, eps=1e-6):
    xf = x.astype(np.float32)
    sq = xf * xf
    parts = [sq[:, c::4] for c in range(4)]
    ss = sum(p.sum(axis=-1, keepdims=True) for p in parts) + 0 * sq[:, :1]
    ms = ss * np.float32(1.0 / x.shape[-1])
    inv = np.float32(1.0) / np.sqrt(ms + np.float32(eps))
    y = (xf * inv) * gamma
    return y.astype(x.dtype)
'''


def test_intermediates_keep_binding_order_with_generator_reads(tmp_path: Path) -> None:
    op_dir = tmp_path / "op"
    shutil.copytree(CORPUS / "rms_norm_ckpt", op_dir)
    (op_dir / "golden.py").write_text(GOLDEN)
    op = load_op_dir(op_dir)
    run = run_golden(op, op.cases()[0])
    names = [n for n in run.intermediates if n in {"xf", "sq", "parts", "ss", "ms", "inv", "y"}]
    # `sq` is read inside a generator expression (a cell variable) yet must come right after `xf`
    assert names == ["xf", "sq", "ss", "ms", "inv", "y"], list(run.intermediates)
