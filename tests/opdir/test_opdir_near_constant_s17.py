"""Red team s17, c15: near-constant rows (a large offset, a small spread) among the special values.

A layer_norm with a one-pass variance ``E[x^2] - mean^2`` passed every verification: the bands never draw a row like
19 +- 0.05 (inside the SPEC's [-20, 20]), and the constant rows of the special values are exactly constant, where the
cancellation gives exactly 0. Special cases now also hold rows at about 0.9 of the range's largest magnitude, spread
over about 1e-3 of its width (at least two ulps of the dtype).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from opdir_helpers import BASE_SPEC

from runtime.opdir import Case, load_op_dir, parse_spec_text
from runtime.opdir._inputs import generate_inputs
from runtime.opdir._unseen import LEGACY_RUN_SEEDS, unseen_cases, unseen_version

ROOT = Path(__file__).resolve().parents[2]
TEXT = BASE_SPEC.replace("{name: b, shape: [D], dtype: fp32}",
                         "{name: b, shape: [D], dtype: fp32}\n"
                         "  - {name: pos, shape: [B, D], dtype: fp32, range: [0.5, 1.5]}\n"
                         "  - {name: neg, shape: [B, D], dtype: fp32, range: [-30.0, -10.0]}\n"
                         "  - {name: idx, shape: [B, D], dtype: int32, range: [0, 900]}")
SPEC = parse_spec_text(TEXT.replace("supported_dtypes: [fp32]", "supported_dtypes: [fp32, bf16, fp16]")
                       .replace("tolerance: {", "tolerance: {bf16: {atol: 1.0e-2, rtol: 1.0e-2}, "
                                                "fp16: {atol: 1.0e-3, rtol: 1.0e-3}, "))


def _case(seed: int, dtype: str = "fp32", special: bool = True, dims: dict | None = None) -> Case:
    return Case(name="unseen1-B64_D32", dims=dims or {"B": 64, "D": 32}, dtype=dtype, seed=seed, band="normal",
                unseen=True, special=special)


def _near(a: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Rows that are not constant, whose spread is under 1% of the range's width and whose mean is >= 0.8 of its
    largest magnitude."""
    rows = a.reshape(-1, a.shape[-1]).astype(np.float64)
    spread = rows.max(axis=1) - rows.min(axis=1)
    top = max(abs(lo), abs(hi))
    return rows[(spread > 0) & (spread <= 0.01 * (hi - lo)) & (np.abs(rows.mean(axis=1)) >= 0.8 * top)]


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("seed", [1 << 20, 12345678, 2**61 + 5])
def test_special_cases_hold_near_constant_rows_within_the_range(dtype: str, seed: int) -> None:
    x, _b, pos, neg, idx = generate_inputs(SPEC, _case(seed, dtype))
    ordinary = generate_inputs(SPEC, _case(seed, dtype, special=False))
    for arr, (lo, hi), plain in ((x, (-2.0, 2.0), ordinary[0]), (pos, (0.5, 1.5), ordinary[2]),
                                 (neg, (-30.0, -10.0), ordinary[3])):
        near = _near(arr, lo, hi)
        assert len(near) >= 4, (dtype, lo, hi)  # about one row in eight of 63
        assert arr.min() >= lo and arr.max() <= hi and arr.dtype == plain.dtype
        assert len(_near(plain, lo, hi)) == 0  # what no band draws
        if dtype != "fp32":  # values of the dtype (the draw rounds through fp32 to it)
            assert np.array_equal(arr.astype(np.float32).astype(arr.dtype), arr)
    assert np.all(_near(neg, -30.0, -10.0).mean(axis=1) < 0)  # the offset's sign is one the range holds
    assert len(_near(idx, 0, 900)) == 0 and idx.min() >= 0 and idx.max() <= 900  # integers: no near-constant rows


def test_near_constant_rows_break_a_one_pass_variance_in_fp32() -> None:
    """The point of the class: E[x^2] - mean^2 in fp32 is off by several percent on them (two-pass is not)."""
    op = load_op_dir(ROOT / "workspace" / "layer_norm")  # x: fp16 in [-20, 20], D = 256
    x = generate_inputs(op.spec, _case(2029, "fp16", dims={"B": 64, "D": 256}))[0]
    rows = _near(x, -20.0, 20.0).astype(np.float32)
    assert len(rows) >= 4
    mu = rows.mean(axis=1, dtype=np.float32)
    one_pass = (rows * rows).mean(axis=1, dtype=np.float32) - mu * mu
    exact = rows.astype(np.float64).var(axis=1)
    two_pass = ((rows - mu[:, None]) ** 2).mean(axis=1, dtype=np.float32)
    assert np.max(np.abs(one_pass / exact - 1)) > 0.05
    assert np.max(np.abs(two_pass / exact - 1)) < 1e-3


def test_one_row_and_one_value_rows_get_no_near_constant_row() -> None:
    b = generate_inputs(SPEC, _case(7 << 20))[1]  # 1-D: ties only
    assert len(set(b.tolist())) > 1 and len(_near(b[None, :], -2.0, 2.0)) == 0
    col = generate_inputs(SPEC, _case(7 << 20, dims={"B": 64, "D": 1}))[0]
    assert col.min() >= -2.0 and col.max() <= 2.0


def test_the_shipped_traces_seeds_draw_no_special_case() -> None:
    """Version 1 (LEGACY_RUN_SEEDS) has no special values at all, so its inputs are the recorded ones."""
    op = load_op_dir(ROOT / "workspace" / "layer_norm")
    for seed in sorted(LEGACY_RUN_SEEDS)[:3]:
        assert unseen_version(seed) == 1
        assert not any(c.special for c in unseen_cases(op.spec, op.cases(), seed, unseen_version(seed)))
    assert any(c.special for c in unseen_cases(op.spec, op.cases(), 12345, unseen_version(12345)))
