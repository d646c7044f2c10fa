"""Mutants of real gym kernels that verification once passed (mutation sweep s30): each must now fail.

A mutant is the vendor's kernel, imported as a gym user's run imports it, with one line changed the way a model
slips. ``lstm_eps_1e5``: sum_lstm's RMSNorm eps 1e-5 instead of the SPEC's 1e-6 passed every verification until
the special cases held tiny rows (unseen drawing version 6, ``runtime.opdir._inputs.apply_special_values``).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GYM = (Path(os.environ.get("FORGE_SHARED") or ROOT.parent / "shared") / "gym").resolve()
needs_gym = pytest.mark.skipif(not (GYM / "runs.tsv").is_file(),
                               reason=f"the gym corpus is not here ({GYM}; set FORGE_SHARED)")
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="gym tests are torch; torch is not installed (pip install torch==2.13.0)")


@pytest.mark.slow
@needs_gym
@needs_torch
def test_sum_lstm_with_a_wrong_rms_norm_eps_fails_verification(tmp_path: Path) -> None:
    from orchestrator.adapters.gym import import_gym_op
    from runtime.verify import verify

    dest = tmp_path / "sum_lstm"
    report = import_gym_op(GYM / "ops" / "sum_lstm", dest, command="test_sum_lstm.py", cwd="tests/ops/arctic",
                           timeout=900)
    impl = dest / f"{report.op_name}_impl.py"
    lines = impl.read_text().splitlines(keepends=True)
    assert lines[61].strip() == "y = pypto.add(y, epsilon)"  # the vendor file's line 62
    pristine = verify(dest, impl, unseen_seed=0)
    assert pristine.verdict == "PASS", pristine.reasons[:3]
    lines[61] = lines[61].replace("epsilon", "1e-5")
    impl.write_text("".join(lines))
    for seed in (0, 1):
        mutant = verify(dest, impl, unseen_seed=seed)
        assert mutant.verdict == "FAIL_NUMERIC", (seed, mutant.verdict, mutant.reasons[:3])
        assert all(c.status == "pass" for c in mutant.cases if not c.unseen)  # right on every public case
