"""Red team s17, c15: a layer_norm with a one-pass variance passed; near-constant special rows now catch it.

The kernel (kernels/s17_c15_layer_norm_one_pass_var.py) computes ``var = E[x^2] - mean^2`` in fp32: exact enough on
every band and on the exactly constant special rows, wrong (several percent of the variance) on rows like
18 +- 0.04, which lie inside the SPEC's [-20, 20] (runtime/opdir/_inputs.py, near-constant rows).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from verify_helpers import KERNELS, settings

from runtime.verify import verify

ROOT = Path(__file__).resolve().parents[2]
WORKSPACE = ROOT / "workspace"


def _layer_norm(tmp_path: Path, kernel: Path) -> Path:
    root = tmp_path / "layer_norm"
    root.mkdir(parents=True)
    for name in ("SPEC.md", "golden.py"):
        shutil.copy(WORKSPACE / "layer_norm" / name, root / name)
    shutil.copy(kernel, root / "layer_norm_impl.py")
    return root


@pytest.mark.heavy_in_ci  # two layer_norm verifications
def test_one_pass_variance_fails_on_near_constant_rows_and_the_honest_kernel_passes(tmp_path: Path) -> None:
    bad = _layer_norm(tmp_path / "bad", KERNELS / "s17_c15_layer_norm_one_pass_var.py")
    report = verify(bad, bad / "layer_norm_impl.py", settings=settings(wall=60.0, cpu=60), unseen_seed=2029)
    assert report.verdict == "FAIL_NUMERIC", report.reasons[:3]
    failing = [c for c in report.cases if c.status != "pass"]
    assert failing and all(c.unseen for c in failing)  # the SPEC's cases and bands all pass
    honest = _layer_norm(tmp_path / "ok", WORKSPACE / "layer_norm" / "authoring" / "attempts" / "m1_a2.py")
    report = verify(honest, honest / "layer_norm_impl.py", settings=settings(wall=60.0, cpu=60), unseen_seed=2029)
    assert report.verdict == "PASS", report.reasons[:3]
