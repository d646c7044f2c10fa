"""Unseen drawing version 11 (red team s36): the attribute cases.

Version 10 varied float attributes by 0.5-1.5x on the first SPEC shape. Five kernels passed every verification
while wrong for a user's value (``tests/redteam/test_round18_s36.py``): a list of floats (Adam's ``betas``) was never
varied; a tiny ``eps`` at 0.5-1.5x moved no bf16 output; the tail path was never called with another value; a cache
keyed on ``int(cap)`` never saw two values with one key; ``eps: 1e-6`` was a YAML string."""

from __future__ import annotations

from pathlib import Path

from runtime.opdir import load_op_dir
from runtime.opdir._cases import _has_tail
from runtime.opdir._spec import parse_spec_text
from runtime.opdir._unseen import (
    ATTR_NEAR,
    ATTR_TINY_FACTORS,
    attribute_cases,
    unseen_cases,
    varied_attributes,
    vary_unseen_attributes,
)

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "redteam" / "fixture_s36"
SEEDS = (0, 1, 7, 11, 12345)


def test_version_11_draws_the_same_unseen_cases_as_version_10() -> None:
    for op in ("silu", "rms_norm", "layer_norm"):
        o = load_op_dir(ROOT / "workspace" / op)
        for seed in SEEDS:
            assert [c.model_dump() for c in unseen_cases(o.spec, o.cases(), seed, version=11)] == \
                [c.model_dump() for c in unseen_cases(o.spec, o.cases(), seed, version=10)]


def test_a_close_value_and_a_tail_shape_in_every_dtype() -> None:
    o = load_op_dir(FIXTURE / "softcap")
    caps = set()
    for seed in SEEDS:
        extra = attribute_cases(o.spec, o.cases(), ["cap"], seed, 30, version=11)
        per_dtype = len(extra) // len(o.spec.supported_dtypes)
        assert per_dtype == 5 and [c.dtype for c in extra] == [d for d in o.spec.supported_dtypes
                                                                for _ in range(per_dtype)]
        base, tail = extra[0].dims, extra[3].dims
        assert not _has_tail(o.spec, base) and _has_tail(o.spec, tail)  # softcap's SPEC lists B: 77 second
        assert [c.dims for c in extra[:5]] == [base, base, base, tail, tail]
        near = extra[2].attrs["cap"]
        assert ATTR_NEAR[0] * 30.0 * 0.99 <= near <= ATTR_NEAR[1] * 30.0 * 1.01 and near != 30.0
        assert int(near) == 30 or round(near) == 31  # what an int(cap) / round(cap) cache key would confuse
        assert extra[3].attrs == extra[0].attrs and extra[4].attrs == extra[1].attrs
        assert [c.special for c in extra[:5]] == [False, True, False, False, True]
        caps.add(near)
    assert len(caps) >= 3


def test_a_list_of_floats_is_varied_leaf_by_leaf() -> None:
    o = load_op_dir(FIXTURE / "adam_moments")
    assert varied_attributes(o.spec, ["betas"], ["betas"], version=10) == []
    assert varied_attributes(o.spec, ["betas"], ["betas"], version=11) == ["betas"]
    extra = attribute_cases(o.spec, o.cases(), ["betas"], 3, 30, version=11)
    lows = extra[0].attrs["betas"]
    assert isinstance(lows, list) and len(lows) == 2
    assert 0.9 * 0.5 * 0.99 <= lows[0] <= 0.9 * 0.9 * 1.01 and 0.999 * 0.5 * 0.99 <= lows[1] <= 0.999 * 0.9 * 1.01
    assert extra[0].name.endswith(f"-betas{lows[0]:.7g}_{lows[1]:.7g}")
    for seed in SEEDS:  # above the SPEC's and close to it: still in (0, 1) - the gym's honest AdamW got inf at 1.02
        for c in attribute_cases(o.spec, o.cases(), ["betas"], seed, 30, version=11)[1:3]:
            b1, b2 = c.attrs["betas"]
            assert 0.9 < b1 < 1.0 and 0.999 < b2 < 1.0, c.attrs


def test_a_tiny_attribute_goes_far_above() -> None:
    o = load_op_dir(FIXTURE / "rms_norm")
    eps = o.spec.attrs["eps"]
    assert eps == 1e-6
    for seed in SEEDS:
        extra = attribute_cases(o.spec, o.cases(), ["eps"], seed, 30, version=11)
        high = extra[1].attrs["eps"]
        assert ATTR_TINY_FACTORS[0] * eps * 0.99 <= high <= ATTR_TINY_FACTORS[1] * eps * 1.01
        assert extra[1].special and extra[1].tiny  # with the tiny rows, where eps matters
        assert 0.5 * eps * 0.99 <= extra[0].attrs["eps"] <= 0.9 * eps * 1.01


def test_an_exponent_without_a_dot_is_the_float_its_author_wrote() -> None:
    spec = (FIXTURE / "rms_norm_s" / "SPEC.md").read_text(encoding="utf-8")
    assert "eps: 1e-6\n" in spec
    assert parse_spec_text(spec).attrs["eps"] == 1e-6  # PyYAML (YAML 1.1) reads '1e-6'
    quoted = spec.replace("eps: 1e-6\n", "eps: '1e-6'\nbetas: [1e-3, 0.5, \"2e-1\"]\nname: 3e2x\n")
    assert parse_spec_text(quoted).attrs == {"eps": "1e-6", "betas": [1e-3, 0.5, "2e-1"], "name": "3e2x"}


def test_the_last_unseen_case_of_every_shape_takes_other_values() -> None:
    """Red team s36b: a B == 1 decode path and a B > 256 path built with the SPEC's cap passed - the attribute cases
    ran on two SPEC shapes only."""
    o = load_op_dir(FIXTURE / "softcap")
    for seed in SEEDS:
        plain = unseen_cases(o.spec, o.cases(), seed, version=11)
        varied = vary_unseen_attributes(o.spec, plain, ["cap"], seed, version=11)
        assert len(varied) == len(plain)
        shapes = {(tuple(sorted(c.dims.items())), c.dtype) for c in plain}
        moved = {(tuple(sorted(c.dims.items())), c.dtype) for c in varied if c.attrs}
        assert moved == shapes  # every shape and dtype is called with another cap
        for a, b in zip(plain, varied, strict=True):
            assert b.name == a.name if not b.attrs else b.name.startswith(a.name + "-cap")
            assert not b.attrs or b.attrs["cap"] != 30.0
        assert vary_unseen_attributes(o.spec, plain, ["cap"], seed, version=10) == plain


def test_each_value_is_also_moved_alone() -> None:
    """Red team s36b: a cache keyed on beta1 alone passed - every set moved both betas."""
    o = load_op_dir(FIXTURE / "adam_moments")
    alone = set()
    for seed in SEEDS:
        for c in vary_unseen_attributes(o.spec, unseen_cases(o.spec, o.cases(), seed, version=11), ["betas"], seed,
                                        version=11):
            if c.attrs:
                b1, b2 = c.attrs["betas"]
                if b1 == 0.9 or b2 == 0.999:
                    alone.add("b1" if b2 == 0.999 else "b2")
    assert alone == {"b1", "b2"}


def test_values_have_seven_digits_zero_stays_and_a_list_keeps_its_order() -> None:
    """Red team s36b: ``round(cap, 2)`` was exact on every three-digit value. s36c: a 0.0 may be a switch
    (``dropout_p: 0.0``: varied, honest inference kernels failed and a golden that refuses it made verify an ERROR),
    and PPO's ``bounds: [0.8, 1.2]`` scaled leaf by leaf came out inverted."""
    o = load_op_dir(FIXTURE / "softcap")
    caps = [c.attrs["cap"] for seed in SEEDS for c in attribute_cases(o.spec, o.cases(), ["cap"], seed, 30, version=11)]
    assert sum(round(v, 2) != v for v in caps) >= len(caps) - 1
    t = load_op_dir(FIXTURE / "threshold")
    assert t.spec.attrs["value"] == 0.0
    assert varied_attributes(t.spec, ["threshold", "value"], ["threshold", "value"]) == ["threshold"]
    d = load_op_dir(FIXTURE / "drop_add")
    assert varied_attributes(d.spec, list(d.spec.attrs), list(d.spec.attrs)) == []
    b = load_op_dir(FIXTURE / "clamp_bounds")
    assert b.spec.attrs["bounds"] == [0.0, 6.0]
    for seed in SEEDS:
        for c in attribute_cases(b.spec, b.cases(), ["bounds"], seed, 30, version=11):
            assert c.attrs["bounds"][0] == 0.0 and c.attrs["bounds"][1] != 6.0  # the 6.0 of a ReLU6 moves
    r = load_op_dir(FIXTURE / "ratio_clip")
    lo, hi = r.spec.attrs["bounds"]
    for seed in range(40):  # about 9% of seeds drew inverted bounds before
        for c in attribute_cases(r.spec, r.cases(), ["bounds"], seed, 30):
            assert c.attrs["bounds"][0] < c.attrs["bounds"][1], (seed, c.attrs)
