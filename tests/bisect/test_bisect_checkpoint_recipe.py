"""Checkpoint mode on a workspace op (the docs/bisect.md recipe) and on the corpus kernel: verify calls the
instrumented wrapper exactly like the original, padded checkpoints are compared on their valid region."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from bisect_corpus import CORPUS

from runtime.bisect import bisect
from runtime.bisect._checkpoint import valid_region
from runtime.verify import verify

ROOT = Path(__file__).resolve().parents[2]
RECIPE = Path(__file__).with_name("recipes") / "rms_norm_impl.py"


def _workspace_copy(tmp_path: Path, kernel: str) -> Path:
    op = tmp_path / "rms_norm"
    shutil.copytree(ROOT / "workspace" / "rms_norm", op, ignore=shutil.ignore_patterns("traces", "authoring"))
    (op / "rms_norm_impl.py").write_text(kernel)
    return op


def test_instrumented_workspace_kernel_passes_verify_and_checkpoints_match(tmp_path: Path,
                                                                          golden_cache: dict) -> None:
    op = _workspace_copy(tmp_path, RECIPE.read_text())
    rep = verify(op, "rms_norm_impl.py", case="B77_D512-bf16-s0-offset")
    assert rep.verdict == "PASS", rep.reasons
    b = bisect(op, "rms_norm_impl.py", case="B77_D512-bf16-s0-offset", golden_cache=golden_cache)
    assert b.method == "auto+checkpoint" and b.status == "NO_DIVERGENCE", b.summary
    assert [(c.name, c.status) for c in b.checkpoints] == [("ms", "match"), ("inv", "match")]
    inv = b.checkpoints[1]
    assert inv.stats is not None and inv.stats.elements == 77 and inv.not_written == 0  # padding ignored


def test_instrumented_workspace_kernel_localizes_a_bug_by_checkpoint(tmp_path: Path, golden_cache: dict) -> None:
    bugged = RECIPE.read_text().replace("pypto.rsqrt(pypto.add(ms_t, EPS))", "pypto.rsqrt(pypto.add(ms_t, 0.5))")
    op = _workspace_copy(tmp_path, bugged)
    assert verify(op, "rms_norm_impl.py", case="B64_D512-bf16-s0-normal").verdict == "FAIL_NUMERIC"
    b = bisect(op, "rms_norm_impl.py", golden_cache=golden_cache)
    assert b.first_checkpoint == "inv", b.to_json()
    assert [c.status for c in b.checkpoints] == ["match", "mismatch"]


def test_corpus_checkpoint_kernel_passes_verify() -> None:
    rep = verify(CORPUS / "rms_norm_ckpt", "rms_norm_ckpt_impl.py", case="B37_D64-fp32-s1-normal")
    assert rep.verdict == "PASS", rep.reasons


def test_valid_region_ignores_padding_and_unit_axes() -> None:
    g_shape = (5, 3)
    padded = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)
    np.testing.assert_array_equal(valid_region(padded, g_shape), padded[:5, :3])
    col = np.arange(7, dtype=np.float32).reshape(7, 1)
    np.testing.assert_array_equal(valid_region(col, (5,)), np.arange(5, dtype=np.float32))
    assert valid_region(np.zeros((4, 3), np.float32), g_shape) is None  # too small: not a padded checkpoint
    assert valid_region(np.zeros((5, 3, 2), np.float32), g_shape) is None
