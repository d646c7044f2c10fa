"""Special values in unseen cases (red team s16 E): zero, constant and tied rows, within the SPEC's declared range.

Random draws in bands never hold an all-zero row, a constant row or two equal values, so a kernel without
``eps`` (0 / 0 on a zero row) or a top-k that breaks ties the wrong way passed every verification.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from opdir_helpers import BASE_SPEC

from runtime.opdir import Case, parse_spec_text
from runtime.opdir._inputs import generate_inputs

TEXT = BASE_SPEC.replace("{name: b, shape: [D], dtype: fp32}",
                         "{name: b, shape: [D], dtype: fp32}\n"
                         "  - {name: pos, shape: [B, D], dtype: fp32, range: [0.5, 1.5]}\n"
                         "  - {name: idx, shape: [B, D], dtype: int32, range: [0, 9]}\n"
                         "  - {name: far, shape: [B, D], dtype: int32, range: [3, 7]}\n"
                         "  - {name: m, shape: [B, D], dtype: bool}")
SPEC = parse_spec_text(TEXT.replace("supported_dtypes: [fp32]", "supported_dtypes: [fp32, bf16]")
                       .replace("tolerance: {", "tolerance: {bf16: {atol: 1.0e-2, rtol: 1.0e-2}, "))


def _case(seed: int, dtype: str = "fp32", rows: int = 64, special: bool = True) -> Case:
    return Case(name="unseen1-B64_D32-fp32", dims={"B": rows, "D": 32}, dtype=dtype, seed=seed, band="normal",
                unseen=True, special=special)


def _kinds(a: np.ndarray) -> tuple[int, int, int]:
    """(all-zero rows, constant non-zero rows, rows with a tie but not constant)."""
    rows = a.reshape(-1, a.shape[-1]).astype(np.float64)
    zero = int(np.sum(np.all(rows == 0, axis=1)))
    const = int(np.sum(np.all(rows == rows[:, :1], axis=1) & (rows[:, 0] != 0)))
    tied = int(np.sum([len(set(r.tolist())) < len(r) and len(set(r.tolist())) > 1 for r in rows]))
    return zero, const, tied


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("seed", [1 << 20, 12345678, 2**61 + 5])
def test_special_rows_are_zero_constant_and_tied_within_the_declared_range(dtype: str, seed: int) -> None:
    x, b, pos, idx, far, m = generate_inputs(SPEC, _case(seed, dtype))
    ordinary = generate_inputs(SPEC, _case(seed, dtype, special=False))
    assert generate_inputs(SPEC, _case(seed, dtype))[0].tobytes() == x.tobytes()  # deterministic
    zero, const, tied = _kinds(x)
    assert zero >= 1 and const >= 1 and tied >= 1, (zero, const, tied)  # 0 lies in [-2, 2]
    # what the draw alone never gives (bf16 has 256 values per octave: a row of 32 ties by chance)
    assert _kinds(ordinary[0])[:2 if dtype == "bf16" else 3] == (0, 0, 0)[:2 if dtype == "bf16" else 3]
    assert x.dtype == ordinary[0].dtype and x.shape == ordinary[0].shape
    assert x.min() >= -2.0 and x.max() <= 2.0
    if dtype == "bf16":  # every value exactly representable (they are the draw's own values or 0)
        assert x.dtype == ml_dtypes.bfloat16
    assert np.array_equal(x[0], ordinary[0][0])  # the first row stays as drawn
    zero_p, const_p, tied_p = _kinds(pos)  # 0 is not in [0.5, 1.5]: constant rows and ties, no zero row
    assert zero_p == 0 and const_p >= 1 and tied_p >= 1 and pos.min() >= 0.5 and pos.max() <= 1.5
    z_i, c_i, _ = _kinds(idx)  # integers: still integer points of the range, so every index stays valid
    assert idx.dtype == np.int32 and idx.min() >= 0 and idx.max() <= 9 and z_i + c_i >= 2
    assert far.min() >= 3 and far.max() <= 7 and not np.any(np.all(far == 0, axis=1))
    assert np.array_equal(m, ordinary[5])  # booleans are left as drawn
    assert len(set(b.tolist())) < b.size  # a 1-D input gets ties only
    assert len(set(b.tolist())) > 1


def test_constant_rows_sum_exactly_and_a_one_row_input_only_gets_ties() -> None:
    x = generate_inputs(SPEC, _case(7 << 20))[0]
    rows = x.reshape(-1, x.shape[-1])
    for r in rows[np.all(rows == rows[:, :1], axis=1) & (rows[:, 0] != 0)]:
        v = np.float32(r[0])
        assert np.float32(np.sum(r, dtype=np.float32)) / np.float32(r.size) == v  # 8 significant bits at most
    one = generate_inputs(SPEC, _case(9 << 20, rows=1))[0]
    assert not np.all(one == one[0, 0]) and len(set(one[0].tolist())) < one.shape[1]


def test_ordinary_cases_are_unchanged() -> None:
    """``special`` defaults to False and then the bytes are the ordinary draw's (SPEC cases, recorded runs)."""
    c = Case(name="B64_D32-fp32-s1-normal", dims={"B": 64, "D": 32}, dtype="fp32", seed=1, band="normal")
    assert not c.special
    from runtime.opdir._inputs import generate_input

    assert [a.tobytes() for a in generate_inputs(SPEC, c)] == \
        [generate_input(t, c, i).tobytes() for i, t in enumerate(SPEC.inputs)]
