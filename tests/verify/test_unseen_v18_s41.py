"""Unseen drawing version 18 and the row-aligned layouts (red team round 31, session 41).

Four wrong kernels of ``tests/redteam/test_round31_s41.py`` passed every seed of version 17: an RMSNorm wrapper that
ignored its ``unit_offset`` bool (or honoured it on the bf16 path only) - a bool attribute was never varied -, a
``max(cap, 1.0)`` guard and "a cap >= 100 never bites" - attribute values were drawn 0.5-3x the SPEC's. Version 18
adds, after version 17's attribute cases and from a random stream of its own, a far-below and a far-above set of the
float attributes of magnitude 1 or more and each bool flipped (``runtime.opdir._unseen._far_and_flipped_cases``). A
fifth read ``x.storage_offset()`` to tell a caller's row slice ``h[k:]`` (verification's views started after any
number of elements): lint PF04 refuses the read and half of the view calls now start on a whole row
(``runtime.verify._calling.draw_layouts``). Here: the values and cases drawn on every seed, versions 10-17 unchanged
(pinned), the layouts, and the lint rule.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from runtime.lint import lint_source
from runtime.opdir import load_op_dir
from runtime.opdir._unseen import (
    UNSEEN_VERSION,
    attribute_cases,
    flipped_bools,
    unseen_cases,
    varied_attributes,
    vary_unseen_attributes,
)
from runtime.verify._calling import draw_layouts, lay_out

ROOT = Path(__file__).resolve().parents[2]
S41 = ROOT / "tests" / "redteam" / "fixture_s41"
SEEDS = (0, 11, 12345)


def test_version_is_18_or_later() -> None:
    assert UNSEEN_VERSION >= 18  # version 19: tests/verify/test_unseen_v19_s42.py


def _attr_cases(op_dir: Path, seed: int, version: int = 18) -> list:
    op = load_op_dir(op_dir)
    names_all = list(op.spec.attrs)
    names = varied_attributes(op.spec, names_all, names_all, version)
    flips = flipped_bools(op.spec, names_all, names_all, version)
    return attribute_cases(op.spec, op.cases(), names, seed, 100, version, flips=flips)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_seed_runs_a_cap_below_one_and_one_far_above_in_every_dtype(seed: int) -> None:
    cases = _attr_cases(S41 / "softcap", seed)
    for dtype in ("fp32", "bf16"):
        caps = [float(c.attrs["cap"]) for c in cases if c.dtype == dtype]
        assert min(caps) < 1.0 and max(caps) >= 120.0, caps  # max(cap, 1.0) and "cap >= 100 never bites"
        far = [c for c in cases if c.dtype == dtype and (float(c.attrs["cap"]) < 1.0 or float(c.attrs["cap"]) >= 120)]
        assert all(c.special and c.dims == {"B": 64, "V": 256} for c in far)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_seed_runs_the_bool_flipped_in_every_dtype_and_leaves_a_small_eps_alone(seed: int) -> None:
    cases = _attr_cases(S41 / "rms_norm", seed)
    v17 = _attr_cases(S41 / "rms_norm", seed, 17)
    assert all(set(c.attrs) == {"unit_offset"} for c in cases[len(v17):])  # an eps is not taken far (docstring)
    for dtype in ("fp32", "bf16"):
        mine = [c for c in cases if c.dtype == dtype]
        flipped = [c for c in mine if c.attrs.get("unit_offset") is True]
        assert sorted(c.dims["B"] for c in flipped) == [45, 64]  # the first SPEC shape and the tail shape
        assert all("unit_offsetTrue" in c.name for c in flipped)


def test_the_version_17_attribute_cases_come_first_unchanged() -> None:
    for name in ("softcap", "rms_norm"):
        for seed in SEEDS:
            v17, v18 = _attr_cases(S41 / name, seed, 17), _attr_cases(S41 / name, seed, 18)
            assert v18[:len(v17)] == v17 and len(v18) > len(v17)
            assert not {c.seed for c in v17} & {c.seed for c in v18[len(v17):]}


def test_a_bool_is_flipped_only_where_the_wrapper_and_golden_both_take_it() -> None:
    spec = load_op_dir(S41 / "rms_norm").spec
    assert flipped_bools(spec, ["eps", "unit_offset"], ["eps", "unit_offset"]) == ["unit_offset"]
    assert flipped_bools(spec, ["eps"], ["eps", "unit_offset"]) == []  # the wrapper does not take it: the SPEC's
    assert flipped_bools(spec, ["eps", "unit_offset"], ["eps", "unit_offset"], 17) == []


def test_a_far_set_keeps_a_list_in_order_and_a_zero_leaf_at_zero() -> None:
    for rel, name in (("fixture_s36/clamp_bounds", "bounds"), ("fixture_s36/adam_moments", "betas")):
        op_dir = ROOT / "tests" / "redteam" / rel
        spec_value = list(load_op_dir(op_dir).spec.attrs[name])
        for seed in SEEDS:
            v17 = len(_attr_cases(op_dir, seed, 17))
            for c in _attr_cases(op_dir, seed)[v17:]:
                leaves = list(c.attrs[name])
                assert sorted(range(len(leaves)), key=leaves.__getitem__) == \
                    sorted(range(len(spec_value)), key=spec_value.__getitem__)
                assert all(v != 0.0 or w == 0.0 for v, w in zip(spec_value, leaves, strict=True))
                assert all(w == v for v, w in zip(spec_value, leaves, strict=True) if abs(v) < 1.0)


_PINNED = json.loads((Path(__file__).parent / "fixtures" / "unseen_attr_v17_pins.json").read_text())
"""sha256 (16 hex digits) of the attribute cases of versions 10-17 (the unseen cases with their rotated values and
:func:`attribute_cases`), recorded with the code before version 18."""


def _digest(op_dir: Path) -> str:
    op = load_op_dir(op_dir)
    cases = op.cases()
    names_all = list(op.spec.attrs)
    h = hashlib.sha256()
    for version in range(10, 18):
        names = varied_attributes(op.spec, names_all, names_all, version)
        for seed in SEEDS:
            u = vary_unseen_attributes(op.spec, unseen_cases(op.spec, cases, seed, version), names, seed, version)
            for c in [*u, *attribute_cases(op.spec, cases, names, seed, len(u) + 1, version)]:
                if c.attrs:
                    d = c.model_dump()
                    d.pop("scaled")  # (version 22) a field added later, False in every case before it
                    h.update(json.dumps(d, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("rel", sorted(_PINNED))
def test_versions_10_to_17_vary_what_they_varied(rel: str) -> None:
    assert _digest(ROOT / rel) == _PINNED[rel]


# --------------------------------------------------------------------------------------------- row-aligned views

@pytest.mark.parametrize("seed", SEEDS)
def test_half_of_the_view_calls_start_on_a_whole_row(seed: int) -> None:
    layouts = draw_layouts(seed, 75)
    views = [lay for lay in layouts if lay is not None]
    rows = [lay[2] for lay in views if len(lay) == 3]
    assert len(views) == 37 and 10 <= len(rows) <= 27
    assert any(r % 16 == 0 for r in rows) and any(r % 2 for r in rows)
    assert all(lay[0] >= 1 and lay[1] >= 0 for lay in views)


def test_a_row_aligned_view_starts_that_many_rows_in_for_every_input() -> None:
    pytest.importorskip("torch", reason="a torch wrapper's inputs are laid out as torch tensors (torch not installed)")

    x = np.arange(3 * 256, dtype=np.float32).reshape(3, 256)
    w = np.ones(256, dtype=np.float32)
    (tx, tw), (vx, vw) = lay_out([x, w], True, [5, 2, 32])
    assert tx.storage_offset() == 32 * 256 and tw.storage_offset() == 32
    assert np.array_equal(vx, x) and np.array_equal(tx.numpy(), x)
    (ax,), _ = lay_out([x], False, [5, 2, 1 << 20])  # capped at the pad bound, still on a row
    assert ax.base.size - ax.size - 2 == (1 << 22) // 256 * 256


_WRAPPER = """import pypto
import torch


def softcap_wrapper(x, cap):
    {line}
    y = torch.empty_like(x)
    return y
"""


def test_lint_refuses_reading_the_storage_offset_outside_an_assertion() -> None:
    def pf04(line: str) -> list[str]:
        src = _WRAPPER.format(line=line)
        return [f.message for f in lint_source(src, "softcap_impl.py", stage="final") if f.rule_id == "PF04"]

    assert any("storage_offset" in m for m in pf04("cap = 30.0 if x.storage_offset() % 4096 == 0 else cap"))
    assert not any("storage_offset" in m for m in pf04("assert x.storage_offset() >= 0"))
