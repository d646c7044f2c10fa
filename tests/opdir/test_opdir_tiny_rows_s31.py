"""Tiny rows among the special values (unseen drawing version 6; mutation sweep s30).

The gym's sum_lstm with its RMSNorm eps 1e-5 instead of 1e-6 passed every verification: the eps shows only where the
normalised pre-activation is small while the 1-D weights are not, and a value band scales every input at once (the
weights too, so the error stayed under atol). Special cases now also scale a few rows towards 0 by 2**-7 - the same
rows in every input with as many rows, so fused inputs are small together. ``tests/gym/test_gym_mutants.py`` runs the
sum_lstm mutant itself.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_opdir_near_constant_s17 import SPEC  # x [-2, 2], b [D], pos [0.5, 1.5], neg [-30, -10], idx int32

from runtime.opdir import Case, load_op_dir
from runtime.opdir._inputs import _TINY_SCALE, generate_inputs
from runtime.opdir._unseen import unseen_cases

WORKSPACE = Path(__file__).resolve().parents[2] / "workspace"
RANGES = {0: (-2.0, 2.0), 2: (0.5, 1.5), 3: (-30.0, -10.0)}


def _case(seed: int, dtype: str = "fp32", *, tiny: bool = True, rows: int = 64) -> Case:
    return Case(name="unseen1-B64_D32", dims={"B": rows, "D": 32}, dtype=dtype, seed=seed, band="normal",
                unseen=True, special=True, tiny=tiny)


def _tiny_rows(a: np.ndarray, lo: float, hi: float) -> set[int]:
    """Rows that vary but lie within 2**-7 of the range's width from its point nearest 0."""
    centre = min(max(0.0, lo), hi)
    rows = a.reshape(-1, a.shape[-1]).astype(np.float64)
    near = np.all(np.abs(rows - centre) <= (hi - lo) * _TINY_SCALE * 1.01, axis=1)
    varies = rows.max(axis=1) > rows.min(axis=1)
    return set(np.flatnonzero(near & varies).tolist())


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("seed", [1 << 20, 12345678, 2**61 + 5])
def test_tiny_rows_sit_at_the_same_rows_of_every_input_and_stay_in_range(dtype: str, seed: int) -> None:
    ins = generate_inputs(SPEC, _case(seed, dtype))
    found = {i: _tiny_rows(ins[i], *RANGES[i]) for i in RANGES}
    assert found[0] and found[0] == found[2] == found[3], found  # the same rows of x, pos and neg
    assert len(found[0]) == 64 // 8 and 0 not in found[0]  # one row in eight; the first row stays ordinary
    for i, (lo, hi) in RANGES.items():
        assert ins[i].min() >= lo and ins[i].max() <= hi
        if dtype != "fp32":
            assert np.array_equal(ins[i].astype(np.float32).astype(ins[i].dtype), ins[i])
    ordinary = generate_inputs(SPEC, _case(seed, dtype, tiny=False))
    assert not _tiny_rows(ordinary[0], -2.0, 2.0)  # what no band and no other special kind draws
    # the 1-D weight and the integers are left as the other special kinds made them
    assert np.array_equal(ins[1], ordinary[1]) and np.array_equal(ins[4], ordinary[4])


def test_inputs_with_few_rows_keep_their_other_special_kinds() -> None:
    """Five rows or fewer: no tiny rows, so a zero or constant row still has a place."""
    ins = generate_inputs(SPEC, _case(99, rows=5))
    assert not _tiny_rows(ins[0], -2.0, 2.0)
    assert np.array_equal(ins[0], generate_inputs(SPEC, _case(99, rows=5, tiny=False))[0])


def test_version_6_special_cases_have_tiny_rows_and_version_5_none() -> None:
    op = load_op_dir(WORKSPACE / "rms_norm")
    new = unseen_cases(op.spec, op.cases(), 4242)
    old = unseen_cases(op.spec, op.cases(), 4242, version=5)
    # version 7: the special cases whose vectors run along a leading axis have no tiny rows
    assert [c.tiny for c in new] == [c.special and not c.columns for c in new] and any(c.tiny for c in new)
    assert not any(c.tiny for c in old)
