"""Unseen drawing version 7 (red team s32): special vectors along a leading axis, and the power of two in every dtype.

Before it, every zero, constant and near-constant vector of a special case ran along the last axis, so an op that
reduces over the batch never met one: BatchNorm with a one-pass variance ``E[x^2] - E[x]^2`` and a per-column
``x / amax`` without a clamp passed every verification (``tests/redteam/test_round10_s32.py`` verifies them). And
the power of two, the only size class above 4x the SPEC, ran in one dtype: a bf16-only path with a 128-row block slip
passed 61% of verifications of a two-dtype op.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_opdir_near_constant_s17 import SPEC  # x [-2, 2], b [D], pos [0.5, 1.5], neg [-30, -10], idx int32

from runtime.opdir import Case, load_op_dir
from runtime.opdir._unseen import unseen_cases

WORKSPACE = Path(__file__).resolve().parents[2] / "workspace"


def _case(seed: int, dtype: str = "fp32", *, columns: bool, orient: int = 0) -> Case:
    return Case(name="unseen1-B64_D32", dims={"B": 64, "D": 32}, dtype=dtype, seed=seed, band="normal",
                unseen=True, special=True, tiny=not columns, columns=columns, masks=True, orient=orient)


def _kinds(a: np.ndarray) -> tuple[int, int]:
    """(all-zero vectors, constant non-zero vectors) among the last-axis vectors of ``a``."""
    v = a.reshape(-1, a.shape[-1]).astype(np.float64)
    zero = int(np.all(v == 0, axis=1).sum())
    const = int((np.all(v == v[:, :1], axis=1) & (v[:, 0] != 0)).sum())
    return zero, const


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("seed", [1 << 20, 12345678, 2**61 + 5])
def test_a_columns_case_holds_zero_and_constant_columns_and_a_rows_case_rows(dtype: str, seed: int) -> None:
    from runtime.opdir._inputs import generate_inputs

    x_cols = generate_inputs(SPEC, _case(seed, dtype, columns=True))[0]
    x_rows = generate_inputs(SPEC, _case(seed, dtype, columns=False))[0]
    assert x_cols.shape == x_rows.shape == (64, 32) and x_cols.flags.c_contiguous
    zc, cc = _kinds(x_cols.T)
    assert zc >= 1 and cc >= 1  # zero and constant columns (x's range holds 0)
    assert _kinds(x_cols) == (0, 0)  # and no such row
    zr, cr = _kinds(x_rows)
    assert zr >= 1 and cr >= 1 and _kinds(x_rows.T) == (0, 0)
    assert not np.all(x_cols[0] == 0)  # the first row is never one special value throughout
    assert np.all((x_cols >= -2.0) & (x_cols <= 2.0))


def test_near_constant_columns_spread_wider_than_rows() -> None:
    """A near-constant column spreads over ~1e-2 of the width (the rows' 1e-3 made an honest two-pass fp32 BatchNorm
    depart from its golden), still a large offset with a small spread."""
    from runtime.opdir._inputs import generate_inputs

    neg = generate_inputs(SPEC, _case(777, columns=True))[3].astype(np.float64).T  # range [-30, -10]
    spread = neg.max(axis=1) - neg.min(axis=1)
    near = (spread > 0) & (spread <= 0.021 * 20) & (np.abs(neg.mean(axis=1)) >= 0.8 * 30)
    assert near.any() and spread[near].max() > 0.0021 * 20


def test_version_7_alternates_the_orientation_of_special_cases_and_version_6_has_rows_only() -> None:
    op = load_op_dir(WORKSPACE / "rms_norm")
    new = unseen_cases(op.spec, op.cases(), 4242)
    special = [c for c in new if c.special]
    assert any(c.columns for c in special) and any(not c.columns for c in special)
    assert not any(c.columns and c.tiny for c in new) and not any(c.columns for c in new if not c.special)
    assert not any(c.columns for c in unseen_cases(op.spec, op.cases(), 4242, version=6))


@pytest.mark.parametrize("seed", [3, 11, 12345, 2**40 + 7])
def test_version_7_runs_the_power_of_two_in_every_dtype(seed: int) -> None:
    op = load_op_dir(WORKSPACE / "silu")  # fp32 + bf16, one dynamic axis every output keeps
    axis = op.spec.dynamic_axes[0]
    spec_sizes = {c.dims[axis] for c in op.cases()}

    def pow2_dtypes(version: int) -> dict[int, set[str]]:
        got: dict[int, set[str]] = {}
        for c in unseen_cases(op.spec, op.cases(), seed, version=version):
            n = c.dims[axis]
            if n >= 128 and n & (n - 1) == 0 and n not in spec_sizes:
                got.setdefault(n, set()).add(c.dtype)
        return got

    new = pow2_dtypes(7)  # each dtype's case is halved to the byte cap on its own: fp32 may get half bf16's size
    assert set().union(*new.values()) == set(op.spec.supported_dtypes), new
    assert min(new) >= 256  # a kept axis: one 128-row block shows no slip in the next block's offset


def test_rank_3_columns_cases_also_cover_all_leading_and_all_trailing_axes_and_booleans() -> None:
    """Red team s32b: BatchNorm over B and L with a one-pass variance, a per-clip ``x / amax`` over a whole [T, D]
    block and a masked mean ``sum / count`` over a bool mask passed every verification: special vectors ran along one
    axis only, and booleans got none."""
    from runtime.opdir._inputs import apply_special_values
    from runtime.opdir._spec import TensorSpec

    t = TensorSpec(name="x", shape=["B", "L", "D"], dtype="fp32", range=[-1.0, 1.0])
    m = TensorSpec(name="m", shape=["B", "D"], dtype="bool")
    seen = set()
    for seed in range(1 << 20, (1 << 20) + 8):
        case = _case(seed, columns=True, orient=seed % 4)
        x = apply_special_values(t, case, 0, np.random.default_rng(seed).uniform(-1, 1, (8, 6, 32)))
        if np.any(np.all(x.reshape(-1, 32) == 0, axis=0)):
            seen.add("leading")  # a feature zero over all of B x L
        if np.any(np.all(x.reshape(8, -1) == 0, axis=1)):
            seen.add("trailing")  # a whole [L, D] block zero
        mask = apply_special_values(m, case, 1, np.random.default_rng(seed).random((16, 32)) < 0.5)
        vecs = np.moveaxis(mask, 0, -1)  # rank 2: the one leading axis
        assert vecs.dtype == bool and (~vecs).all(axis=1).any() and vecs.all(axis=1).any()
        rows = apply_special_values(m, _case(seed, columns=False), 1, np.random.default_rng(seed).random((16, 32)) < .5)
        assert (~rows).all(axis=1).any() and rows.all(axis=1).any()  # an empty mask row, and a full one
    assert seen == {"leading", "trailing"}
