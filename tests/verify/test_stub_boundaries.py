"""A ``# STUB`` feeds only a declared module boundary (held-out attack A11).

A module stage that took golden locals (say a softmax's exponentials and row sums) as STUBs could skip its
module's work and still match; the plan refuses such a stage before anything runs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runtime.verify._target import TargetError, plan_target

AFFINE = Path(__file__).resolve().parents[1] / "lint" / "fixtures" / "ops" / "affine"


def _stage(tmp_path: Path, stub: str) -> Path:
    op = tmp_path / "affine"
    op.mkdir()
    shutil.copy(AFFINE / "module_interfaces.yaml", op / "module_interfaces.yaml")
    (op / "modules").mkdir()
    target = op / "modules" / "affine_module12_impl.py"
    target.write_text(
        "def affine_module12_wrapper(x, gamma,\n"
        f"                            {stub},  # STUB: until M2 verified; golden-fed tensor\n"
        "                            ):\n"
        "    return x, x\n", encoding="utf-8")
    return target


def test_a_stub_of_a_declared_boundary_is_planned(tmp_path: Path) -> None:
    plan = plan_target(tmp_path / "affine", _stage(tmp_path, "h"), "affine", ["x", "gamma"], ["y"])
    assert plan.stub_params == ["h"] and plan.expected == ["h", "y"]


@pytest.mark.parametrize("local", ["ht", "yt", "x_scaled"])
def test_a_stub_of_a_golden_local_is_refused(tmp_path: Path, local: str) -> None:
    with pytest.raises(TargetError, match=rf"STUB parameter\(s\) {local} are not boundary tensors.*\(h\)"):
        plan_target(tmp_path / "affine", _stage(tmp_path, local), "affine", ["x", "gamma"], ["y"])
