"""Unseen drawing version 15 (red team round 27 and accident round 28, session 39): the size-1 case of each dynamic axis
holds version 13's whole-vector kinds in its one row (``decode_vector_plan``), a one-vector float input beside matrices
is near-constant at an end of its range (``end_plan``), varied float attributes keep every float64 digit, and one
attribute case is called twice (``attribute_repeat``). The kernels these catch are in
``tests/redteam/test_round27_s39.py`` (``ln_decode_one_pass``, ``sc_seven_digits``) and
``tests/redteam/test_round28_s39.py`` (``gg_mask_zero``); here the draws themselves, and that versions 1-14 draw
what they drew."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from runtime.opdir import load_op_dir
from runtime.opdir._cases import Case
from runtime.opdir._inputs import END_KINDS, VECTOR_KINDS, generate_inputs
from runtime.opdir._unseen import (
    DECODE_NEAR_CALLS,
    MAX_END_CASES,
    UNSEEN_VERSION,
    attribute_cases,
    attribute_repeat,
    call_plan,
    decode_vector_plan,
    end_plan,
    total_cap,
    unseen_cases,
    varied_attributes,
    vary_unseen_attributes,
)

ROOT = Path(__file__).resolve().parents[2]
S39 = ROOT / "tests" / "redteam" / "fixture_s39"
ACC = ROOT / "tests" / "redteam" / "fixture_s39acc"
SEEDS = (0, 1, 11, 12345)


def _whole_cases(op_dir: Path, seed: int, version: int = UNSEEN_VERSION) -> list[Case]:
    op = load_op_dir(op_dir)
    return [c for c in unseen_cases(op.spec, op.cases(), seed, version) if c.whole]


def test_version_is_15() -> None:
    assert UNSEEN_VERSION >= 15  # (s40) version 16 moved it on: test_unseen_v16_s40.py


# ------------------------------------------------------------------------------------------- the size-1 vector cases

def test_the_size_1_case_holds_every_vector_kind_in_its_one_row_near_constant_first() -> None:
    op = load_op_dir(S39 / "layer_norm")  # x [B, D], gamma [D], beta [D]; B dynamic
    plan = decode_vector_plan(op.spec, [dict(s) for s in op.spec.p0_shapes], list(op.spec.supported_dtypes))
    kinds = [w["x"] for _dims, _dt, w in plan]
    n_dt = len(op.spec.supported_dtypes)
    assert kinds[:DECODE_NEAR_CALLS * n_dt] == ["near"] * DECODE_NEAR_CALLS * n_dt
    assert set(kinds) == set(VECTOR_KINDS)
    assert all(d["B"] == 1 for d, _dt, _w in plan)
    assert all(set(w) == {"x"} for _d, _dt, w in plan)  # gamma and beta are drawn as usual
    for dtype in op.spec.supported_dtypes:  # near-constant in every dtype
        assert sum(dt == dtype and w["x"] == "near" for _d, dt, w in plan) == DECODE_NEAR_CALLS


def test_the_size_1_row_is_near_constant_and_the_weights_are_ordinary() -> None:
    op = load_op_dir(S39 / "layer_norm")
    for seed in SEEDS:
        near = [c for c in _whole_cases(S39 / "layer_norm", seed) if c.whole.get("x") == "near"]
        assert len(near) == DECODE_NEAR_CALLS * len(op.spec.supported_dtypes)
        assert len({c.seed for c in near}) == len(near)  # each its own draw
        for c in near:
            x, gamma, _beta = generate_inputs(op.spec, c)
            assert x.shape == (1, 256)
            xs = x.astype(np.float64)
            lo, hi = op.spec.inputs[0].range
            assert abs(xs.mean()) > 0.8 * max(abs(lo), abs(hi))  # a large offset ...
            assert xs.std() < 0.05 * (hi - lo) and xs.std() > 0  # ... and a small spread, not constant
            assert gamma.astype(np.float64).std() > 0.2  # drawn across its range


_TWO_AXES = """---
schema_version: 1
op_name: rms_bs
inputs:
  - {name: x, shape: [B, S, D], dtype: fp32, range: [-4.0, 4.0]}
  - {name: w, shape: [D], dtype: fp32, range: [0.5, 1.5]}
outputs:
  - {name: y, shape: [B, S, D], dtype: fp32}
dynamic_axes: [B, S]
p0_shapes:
  - {B: 4, S: 16, D: 64}
supported_dtypes: [fp32]
tolerance:
  fp32: {atol: 1.0e-5, rtol: 1.0e-5}
---

# rms_bs

    y = x / sqrt(mean(x^2, -1) + 1e-6) * w
"""


def test_an_op_with_two_dynamic_axes_gets_its_one_row_case_with_both_at_1(tmp_path: Path) -> None:
    """``x [B, S, D]``: B == 1 alone leaves 16 rows and S == 1 alone 4 (no one vector): the kinds go to B == S == 1,
    where x is one row; ``w`` stays as drawn."""
    op_dir = tmp_path / "rms_bs"
    op_dir.mkdir()
    (op_dir / "SPEC.md").write_text(_TWO_AXES)
    (op_dir / "golden.py").write_text("import numpy as np\n\n\ndef golden(x, w):\n"
                                      "    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w\n")
    op = load_op_dir(op_dir)
    plan = decode_vector_plan(op.spec, [dict(s) for s in op.spec.p0_shapes], ["fp32"])
    assert {(d["B"], d["S"]) for d, _dt, _w in plan} == {(1, 1)}
    assert [w for _d, _dt, w in plan][0] == {"x": "near"} and len(plan) == DECODE_NEAR_CALLS + len(VECTOR_KINDS) - 1
    case = next(c for c in unseen_cases(op.spec, op.cases(), 0) if c.whole)
    x, w = generate_inputs(op.spec, case)
    assert x.shape == (1, 1, 64) and x.std() < 0.1 and abs(x.mean()) > 3.0 and w.std() > 0.1


def test_a_size_1_shape_that_is_a_spec_shape_is_left_to_version_13() -> None:
    op = load_op_dir(S39 / "layer_norm")
    shapes = [{"B": 1, "D": 256}]
    assert decode_vector_plan(op.spec, shapes, ["fp16"]) == []


# ------------------------------------------------------------------------------------------------- the end cases

def test_a_one_vector_input_beside_matrices_goes_to_each_end_of_its_range() -> None:
    op = load_op_dir(ACC / "group_gate")  # logits [T, E] in [-6, 6], bias [E] in [-0.5, 0.5]
    plan = end_plan(op.spec, [dict(s) for s in op.spec.p0_shapes], list(op.spec.supported_dtypes))
    assert [w for _d, _dt, w in plan] == [{"bias": "low"}, {"bias": "high"}]
    for seed in SEEDS:
        # (s40) version 17 adds the bias at its initial value (test_unseen_v17_s40.py)
        cases = [c for c in _whole_cases(ACC / "group_gate", seed) if c.whole.get("bias") in END_KINDS]
        assert [c.whole["bias"] for c in cases] == ["low", "high"]
        for c in cases:
            logits, bias = generate_inputs(op.spec, c)
            assert logits.std() > 2.0  # the matrix is drawn as usual
            b = bias.astype(np.float64)
            assert b.max() - b.min() <= 2 * 5e-3 + 1e-6
            assert (b.max() < -0.4) if c.whole["bias"] == "low" else (b.min() > 0.4)
            assert -0.5 <= b.min() and b.max() <= 0.5


def test_end_cases_low_in_every_dtype_and_at_most_the_cap() -> None:
    op = load_op_dir(S39 / "layer_norm")  # gamma, beta beside x [B, D]
    dtypes = list(op.spec.supported_dtypes)
    plan = end_plan(op.spec, [dict(s) for s in op.spec.p0_shapes], dtypes)
    assert len(plan) <= MAX_END_CASES
    lows = [(dt, next(iter(w))) for _d, dt, w in plan if "low" in w.values()]
    assert {dt for dt, _n in lows} == set(dtypes)
    assert {n for _dt, n in lows} == {"gamma", "beta"}
    assert all(set(w.values()) <= set(END_KINDS) for _d, _dt, w in plan)


def test_no_end_case_where_every_float_input_is_a_vector_or_none_is() -> None:
    op = load_op_dir(S39 / "layer_norm")
    assert end_plan(op.spec, [{"B": 1, "D": 256}], ["fp16"]) == []  # every float input a vector: version 13's
    sc = load_op_dir(S39 / "softcap")  # x [B, V] alone
    assert end_plan(sc.spec, [dict(s) for s in sc.spec.p0_shapes], list(sc.spec.supported_dtypes)) == []


def test_the_new_cases_stay_inside_the_total_byte_cap() -> None:
    for op_dir in (S39 / "layer_norm", ACC / "group_gate", S39 / "softcap"):
        op = load_op_dir(op_dir)
        from runtime.opdir._memory import case_bytes

        for seed in SEEDS:
            cases = unseen_cases(op.spec, op.cases(), seed, version=20)  # (v21: test_unseen_v21_s44.py)
            v14 = unseen_cases(op.spec, op.cases(), seed, version=14)
            new = [c for c in cases if c.whole]
            assert new and len(cases) == len(v14) + len(new)
            assert sum(case_bytes(op.spec, c) for c in new) <= total_cap(op.spec, op.cases())


def test_the_new_cases_take_their_seeds_from_their_own_stream() -> None:
    """Every case of version 14 keeps its shape, dtype and seed in version 15 (the tails after them too)."""
    for op_dir in (S39 / "layer_norm", ACC / "group_gate", S39 / "softcap"):
        op = load_op_dir(op_dir)
        for seed in SEEDS:
            old = unseen_cases(op.spec, op.cases(), seed, version=14)
            kept = [c for c in unseen_cases(op.spec, op.cases(), seed, version=20) if not c.whole]
            assert [(c.dims, c.dtype, c.seed, c.band) for c in kept] == [(c.dims, c.dtype, c.seed, c.band)
                                                                         for c in old]


def test_version_14_and_earlier_draw_no_whole_case() -> None:
    for op_dir in (S39 / "layer_norm", ACC / "group_gate"):
        for version in (1, 9, 13, 14):
            assert _whole_cases(op_dir, 0, version) == []


# ------------------------------------------------------------------------------------------ full-precision floats

def test_varied_float_attributes_keep_every_float64_digit() -> None:
    op = load_op_dir(S39 / "softcap")
    names = varied_attributes(op.spec, list(op.spec.attrs), list(op.spec.attrs))
    assert names
    long = 0
    for seed in SEEDS:
        for version, digits in ((14, True), (15, False)):
            cases = attribute_cases(op.spec, op.cases(), names, seed, 40, version=version)
            values = [c.attrs[n] for c in cases for n in names if isinstance(c.attrs.get(n), float)]
            assert values
            rounded = [v == float(f"{v:.7g}") for v in values]
            if digits:
                assert all(rounded)
            else:
                long += sum(not r for r in rounded)
                # the name still shows seven digits
                assert all(f"{c.attrs[n]:.7g}" in c.name for c in cases for n in names
                           if isinstance(c.attrs.get(n), float))
    assert long > 0


def test_full_precision_values_keep_their_ranges_and_order() -> None:
    op = load_op_dir(S39 / "softcap")
    names = varied_attributes(op.spec, list(op.spec.attrs), list(op.spec.attrs))
    spec_v = float(op.spec.attrs[names[0]])
    for seed in SEEDS:
        v14 = attribute_cases(op.spec, op.cases(), names, seed, 40, version=14)
        v15 = attribute_cases(op.spec, op.cases(), names, seed, 40, version=15)
        assert [c.dims for c in v14] == [c.dims for c in v15] and [c.seed for c in v14] == [c.seed for c in v15]
        for a, b in zip(v14, v15, strict=True):
            x, y = a.attrs[names[0]], b.attrs[names[0]]
            if isinstance(x, float):  # the same draw, unrounded
                assert x == float(f"{y:.7g}") and y != spec_v


def test_the_unseen_shape_cases_take_full_precision_values_too() -> None:
    op = load_op_dir(S39 / "softcap")
    names = varied_attributes(op.spec, list(op.spec.attrs), list(op.spec.attrs))
    cases = unseen_cases(op.spec, op.cases(), 11)
    varied = [c for c in vary_unseen_attributes(op.spec, cases, names, 11) if c.attrs]
    assert any(isinstance(c.attrs[n], float) and c.attrs[n] != float(f"{c.attrs[n]:.7g}")
               for c in varied for n in names if n in c.attrs)


# --------------------------------------------------------------------------------------------- the repeated call

def test_one_attribute_case_is_called_twice_after_its_first_call() -> None:
    names = [f"c{i}" for i in range(12)]
    attrs = ["c3", "c7", "c9"]
    for seed in SEEDS:
        base = call_plan(names, seed, repeats=2)
        plan = attribute_repeat(base, attrs, seed)
        assert len(plan) == len(base) + 1
        extra = [n for n in attrs if plan.count(n) == base.count(n) + 1]
        assert len(extra) == 1
        first = plan.index(extra[0])
        assert extra[0] in plan[first + 1:]
        rest = list(plan)
        rest.pop(len(plan) - 1 - plan[::-1].index(extra[0]))  # without the added call: the old order
        assert sorted(rest) == sorted(base)
    assert attribute_repeat(["a", "b"], [], 0) == ["a", "b"]


def test_the_repeat_is_drawn_per_seed() -> None:
    names = [f"c{i}" for i in range(20)]
    attrs = names[5:15]
    picked = set()
    for seed in range(12):
        base = call_plan(names, seed)
        plan = attribute_repeat(base, attrs, seed)
        picked |= {n for n in attrs if plan.count(n) > base.count(n)}
    assert len(picked) >= 3


# ------------------------------------------------------------------------------------ review of version 14's ints

_HEADS_SPEC = """---
schema_version: 1
op_name: head_sum
inputs:
  - {name: q, shape: [B, 8, D], dtype: fp32, range: [-1.0, 1.0]}
outputs:
  - {name: y, shape: [B, D], dtype: fp32}
dynamic_axes: [B]
p0_shapes:
  - {B: 16, D: 64}
supported_dtypes: [fp32]
tolerance:
  fp32: {atol: 1.0e-5, rtol: 1.0e-5}
heads: 8
---

# head_sum

    y = sum over the 8 heads of q
"""
_HEADS_GOLDEN = '''"""Sum of the heads."""

import numpy as np


def golden(q, heads=8):
    y = np.zeros((q.shape[0], q.shape[2]), dtype=np.float32)
    for h in range(heads):
        y = y + q[:, h]
    return y
'''


def test_an_int_equal_to_a_literal_dim_of_a_tensor_stays_from_version_15(tmp_path: Path) -> None:
    """``heads: 8`` beside ``q: [B, 8, D]``: golden loops ``range(heads)`` (a count), but the kernel honestly reads
    the head count from q's shape - at ``heads: 3`` golden sums 3 heads of 8 and the kernel 8. Version 14 varied it
    (its dim check read ``p0_shapes`` only); version 15 keeps it."""
    from runtime.opdir._unseen import varied_ints

    op_dir = tmp_path / "head_sum"
    op_dir.mkdir()
    (op_dir / "SPEC.md").write_text(_HEADS_SPEC)
    (op_dir / "golden.py").write_text(_HEADS_GOLDEN)
    op = load_op_dir(op_dir)
    assert varied_ints(op.spec, ["heads"], ["heads"], op.golden_tree, version=14) == {"heads": "count"}
    assert varied_ints(op.spec, ["heads"], ["heads"], op.golden_tree) == {}
    # a count that is no dim still varies
    (op_dir / "SPEC.md").write_text(_HEADS_SPEC.replace("heads: 8", "heads: 5"))
    op = load_op_dir(op_dir)
    assert varied_ints(op.spec, ["heads"], ["heads"], op.golden_tree) == {"heads": "count"}
