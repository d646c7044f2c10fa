"""Unseen drawing version 17 (red team round 29, session 40): the value families real data has and no draw made.

Eight wrong kernels of ``tests/redteam/test_round29_s40.py`` check each row on the device and are 10% off only on
bell-shaped rows, sparse rows (30-97% exact zeros), rows holding a -0.0, rows of whole numbers, or where a 1-D weight
is at its initial value (beta all zeros, gamma all one value). Version 17 gives those families to the special rows
and columns (``Case.families``, :data:`runtime.opdir._inputs.FAMILY_KINDS`) and, after every other case, to whole
vectors (:func:`runtime.opdir._unseen.family_plan`: 1-D weights at ``init``/``zero``, the size-1 decode row, the
vector cases). Here: each kind is drawn, inside the SPEC's range and dtype, on every seed; SPEC hints are honoured
(``ties: unspecified``, integer inputs); and versions 1-16 draw what they drew (case lists and input bytes pinned
below, recorded with the code before version 17).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from runtime.opdir import load_op_dir
from runtime.opdir._cases import Case
from runtime.opdir._inputs import FAMILY_KINDS, INIT_KINDS, generate_inputs
from runtime.opdir._unseen import MAX_FAMILY_CASES, UNSEEN_VERSION, family_plan, unseen_cases

ROOT = Path(__file__).resolve().parents[2]
S40 = ROOT / "tests" / "redteam" / "fixture_s40"
SEEDS = (0, 11, 12345)


def test_version_is_17() -> None:
    assert UNSEEN_VERSION >= 17  # (s41) version 18 moved it on: test_unseen_v18_s41.py


# ------------------------------------------------------------------------------------------------ row statistics

def _normal(row: np.ndarray) -> bool:
    """The red team's test for a bell-shaped row (``sc_gauss_rows``): kurtosis 2.65-3.8, |skewness| < 0.3, 63-75%
    within one standard deviation, the largest deviation 2.45-4.6 of it."""
    d = row - row.mean()
    m2 = (d * d).mean()
    if m2 <= 1e-12:
        return False
    kurt, skew = (d ** 4).mean() / m2 ** 2, (d ** 3).mean() / m2 ** 1.5
    sd = math.sqrt(m2)
    within = float((np.abs(d) < sd).mean())
    return 2.65 < kurt < 3.8 and abs(skew) < 0.3 and 0.63 < within < 0.75 and 2.45 < np.abs(d).max() / sd < 4.6


def _sparse(row: np.ndarray) -> bool:
    return 0.3 <= float((row == 0).mean()) <= 0.97


def _negzero(row: np.ndarray) -> bool:
    return bool(((row == 0) & np.signbit(row)).any())


def _integer(row: np.ndarray) -> bool:
    return bool(np.all(row == np.round(row))) and row.max() - row.min() > 0.5


_TESTS = {"normal": _normal, "sparse": _sparse, "negzero": _negzero, "integer": _integer}


def _rows(arr: np.ndarray) -> np.ndarray:
    a = np.asarray(arr)
    if a.dtype == ml_dtypes.bfloat16 or a.dtype.kind == "f":
        a = a.astype(np.float64)
    return a.reshape(-1, a.shape[-1])


def _kinds_seen(op_dir: Path, seed: int, name: str = "x") -> set[str]:
    op = load_op_dir(op_dir)
    i = [t.name for t in op.spec.inputs].index(name)
    seen: set[str] = set()
    for c in unseen_cases(op.spec, op.cases(), seed):
        if not c.special or c.columns:
            continue
        rows = _rows(generate_inputs(op.spec, c)[i])
        seen |= {k for k, f in _TESTS.items() if any(f(r) for r in rows)}
    return seen


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("op", ["softcap", "layer_norm"])
def test_every_seed_draws_each_row_family(op: str, seed: int) -> None:
    """Per seed, not per run of many: a kernel must not pass a seed by luck."""
    assert _kinds_seen(S40 / op, seed) == set(FAMILY_KINDS)


def test_version_16_draws_none_of_them() -> None:
    op = load_op_dir(S40 / "softcap")
    for seed in SEEDS:
        cases = unseen_cases(op.spec, op.cases(), seed, 16)
        assert not any(c.families for c in cases)
        seen = set()
        for c in cases:
            if c.special:
                rows = _rows(generate_inputs(op.spec, c)[0])
                seen |= {k for k, f in _TESTS.items() if any(f(r) for r in rows)}
        assert not seen & {"sparse", "negzero", "integer"}, seen  # a uniform row is never bell-shaped either
        assert "normal" not in seen


@pytest.mark.parametrize("op", ["softcap", "layer_norm"])
def test_family_values_stay_in_the_range_and_the_dtype(op: str) -> None:
    o = load_op_dir(S40 / op)
    for seed in SEEDS:
        for c in unseen_cases(o.spec, o.cases(), seed):
            if not c.families:
                continue
            for t, arr in zip(o.spec.inputs, generate_inputs(o.spec, c), strict=True):
                lo, hi = t.range
                a = np.asarray(arr)
                assert a.dtype.name in ("float32", "float16", "bfloat16"), a.dtype
                f = a.astype(np.float64)
                assert np.all((f >= lo) & (f <= hi)), (c.name, t.name, f.min(), f.max())
                assert np.all(np.isfinite(f))


def test_the_columns_cases_hold_the_families_along_the_leading_axis() -> None:
    op = load_op_dir(S40 / "softcap")
    seen: set[str] = set()
    for seed in SEEDS:
        for c in unseen_cases(op.spec, op.cases(), seed):
            if c.columns and c.families and c.dims["B"] >= 32:
                cols = _rows(generate_inputs(op.spec, c)[0].T)
                seen |= {k for k, f in _TESTS.items() if any(f(r) for r in cols)}
    assert seen >= {"sparse", "negzero", "integer"}, seen  # a 32-64-value column is too short for the normal test


# ------------------------------------------------------------------------------ whole vectors: weights, decode row

def test_a_fresh_layer_norm_gets_gamma_one_and_beta_zero_in_every_seed() -> None:
    op = load_op_dir(S40 / "layer_norm")  # gamma [D] in [0.5, 1.5], beta [D] in [-0.5, 0.5]
    for seed in SEEDS:
        init = [c for c in unseen_cases(op.spec, op.cases(), seed) if c.whole.get("gamma") == "init"]
        assert len(init) == len(op.spec.supported_dtypes)
        for c in init:
            x, gamma, beta = generate_inputs(op.spec, c)
            assert np.all(gamma.astype(np.float64) == 1.0)
            b = beta.astype(np.float64)
            assert np.all(b == 0.0) and not np.signbit(b).any()
            assert x.astype(np.float64).std() > 1.0  # the matrix is data, not a weight


def test_zero_runs_where_a_weight_range_holds_both_zero_and_one(tmp_path: Path) -> None:
    spec = (S40 / "layer_norm" / "SPEC.md").read_text().replace("range: [0.5, 1.5]", "range: [-2.0, 2.0]")
    d = tmp_path / "layer_norm"
    d.mkdir()
    (d / "SPEC.md").write_text(spec)
    (d / "golden.py").write_text((S40 / "layer_norm" / "golden.py").read_text())
    op = load_op_dir(d)
    plan = family_plan(op.spec, [dict(s) for s in op.spec.p0_shapes], list(op.spec.supported_dtypes))
    assert [w for _d, _t, _v, w in plan][:2] == [{"gamma": "init", "beta": "init"}, {"gamma": "zero", "beta": "zero"}]
    zero = next(c for c in unseen_cases(op.spec, op.cases(), 0) if c.whole.get("gamma") == "zero")
    _x, gamma, beta = generate_inputs(op.spec, zero)
    assert np.all(gamma.astype(np.float64) == 0.0) and np.all(beta.astype(np.float64) == 0.0)
    init = next(c for c in unseen_cases(op.spec, op.cases(), 0) if c.whole.get("gamma") == "init")
    _x, gamma, beta = generate_inputs(op.spec, init)
    assert np.all(gamma.astype(np.float64) == 1.0) and np.all(beta.astype(np.float64) == 0.0)


def test_a_per_row_statistic_is_not_a_weight() -> None:
    """layer_norm_backward's mean and rstd [B] are data about each row: only gamma [D] is set to its init."""
    op = load_op_dir(ROOT / "workspace" / "layer_norm_backward")
    plan = family_plan(op.spec, [dict(s) for s in op.spec.p0_shapes], list(op.spec.supported_dtypes))
    inits = [w for _d, _t, _v, w in plan if set(w.values()) & set(INIT_KINDS)]
    assert inits and all(set(w) == {"gamma"} for w in inits)


def test_the_decode_row_holds_each_family_as_a_whole() -> None:
    op = load_op_dir(S40 / "layer_norm")
    for seed in SEEDS:
        cases = [c for c in unseen_cases(op.spec, op.cases(), seed) if c.whole.get("x") in FAMILY_KINDS]
        assert sorted(c.whole["x"] for c in cases) == sorted(FAMILY_KINDS)
        for c in cases:
            x, gamma, _beta = generate_inputs(op.spec, c)
            assert x.shape == (1, 256) and c.dims["B"] == 1
            row = _rows(x)[0]
            if c.whole["x"] == "normal":  # bell-shaped; one row of 256 passes the red team's four bounds 4 times in 5
                d = (row - row.mean()) / row.std()
                assert 2.2 < (d ** 4).mean() < 4.2 and np.abs(d).max() > 2.3 and 0.6 < (np.abs(d) < 1).mean() < 0.78
            else:
                assert _TESTS[c.whole["x"]](row), (seed, c.whole)
            assert gamma.astype(np.float64).std() > 0.1  # the weights beside it are drawn as usual


def test_the_family_cases_come_last_with_seeds_of_their_own() -> None:
    for name in ("softcap", "layer_norm"):
        op = load_op_dir(S40 / name)
        for seed in SEEDS:
            v16 = unseen_cases(op.spec, op.cases(), seed, 16)
            v17 = unseen_cases(op.spec, op.cases(), seed, 17)
            assert [c.model_copy(update={"families": False}) for c in v17[:len(v16)]] == v16
            extra = v17[len(v16):]
            assert len(extra) <= MAX_FAMILY_CASES
            assert all(c.whole or c.vector for c in extra)
            assert len({c.seed for c in v17}) == len(v17) and not {c.seed for c in v17} & {c.seed for c in op.cases()}


# ------------------------------------------------------------------------------------------------- SPEC hints

_TIES = """---
schema_version: 1
op_name: topk_rows
inputs:
  - {name: x, shape: [B, N], dtype: fp32, range: [-50.0, 50.0]}
  - {name: idx, shape: [B, N], dtype: int32, range: [0, 100]}
outputs:
  - {name: y, shape: [B, N], dtype: fp32}
dynamic_axes: [B]
p0_shapes:
  - {B: 64, N: 128}
supported_dtypes: [fp32]
tolerance:
  fp32: {atol: 1.0e-5, rtol: 1.0e-5}
seeds: [0, 1, 2]
ties: unspecified
---

# topk_rows

    y = x + 0 * idx
"""


def test_ties_unspecified_gets_no_sparse_or_whole_number_rows_and_ints_stay_as_drawn(tmp_path: Path) -> None:
    d = tmp_path / "topk_rows"
    d.mkdir()
    (d / "SPEC.md").write_text(_TIES)
    (d / "golden.py").write_text("import numpy as np\n\n\ndef golden(x, idx):\n    return x.copy()\n")
    op = load_op_dir(d)
    seen: set[str] = set()
    for seed in SEEDS:
        v17 = unseen_cases(op.spec, op.cases(), seed, 17)
        v16 = {c.seed: c for c in unseen_cases(op.spec, op.cases(), seed, 16)}
        for c in v17:
            x, idx = generate_inputs(op.spec, c)
            if c.special:
                rows = _rows(x)
                seen |= {k for k, f in _TESTS.items() if any(f(r) for r in rows)}
                ties = [r for r in rows if 1 < np.unique(r).size < r.size - r.size // 4 - 1]
                assert not any(_sparse(r) or _integer(r) for r in ties), c.name
            if c.seed in v16:  # an integer input: exactly what version 16 drew
                assert np.array_equal(idx, generate_inputs(op.spec, v16[c.seed])[1]), c.name
    assert seen == {"normal", "negzero"}  # one -0.0 per row where ties are not judged


# ------------------------------------------------------------------------------- versions 1-16: bit-identical

_PINNED = json.loads((Path(__file__).parent / "fixtures" / "unseen_v16_pins.json").read_text())
"""sha256 (16 hex digits) of the case lists and the input bytes of versions 1-16 per op dir, recorded with the code
before version 17 (``_digest`` below)."""


def _digest(op_dir: Path) -> str:
    op = load_op_dir(op_dir)
    cases = op.cases()
    h = hashlib.sha256()
    for version in range(1, 17):
        for seed in (0, 11, 12345):
            u = unseen_cases(op.spec, cases, seed, version)
            for c in u:
                d = c.model_dump()
                d.pop("families")
                d.pop("scaled")  # (version 22) a field added later, False in every case before it
                h.update(json.dumps(d, sort_keys=True, default=str).encode())
            if seed == 0 and version >= 12:
                for c in u[:12]:
                    for arr in generate_inputs(op.spec, c):
                        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("rel", sorted(_PINNED))
def test_versions_1_to_16_draw_what_they_drew(rel: str) -> None:
    assert _digest(ROOT / rel) == _PINNED[rel]


def test_a_case_before_version_17_has_no_families() -> None:
    assert Case(name="c", dims={}, dtype="fp32", seed=0, band="normal").families is False
