"""Unseen drawing version 19 (red team round 32, session 42): reshape ints, str attributes and the decode row.

Round 31 left open a GroupNorm built for the SPEC's group count (an int golden() uses in a reshape stayed at the
SPEC's value) and an activation wrapper ignoring its ``kind`` (a str attribute was never varied); round 32 found
``B == 1`` decode paths built with the SPEC's values - the far, flipped, str and reshape sets ran on the first SPEC
shape and the tail shape only. Here: what the analysis of golden.py finds, the values and cases drawn, and that
versions up to 18 draw none of them (``tests/redteam/test_round32_s42.py`` runs the kernels).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from runtime import pyast
from runtime.opdir import load_op_dir
from runtime.opdir._intattrs import int_attribute_roles, string_attribute_values
from runtime.opdir._unseen import (
    UNSEEN_VERSION,
    attribute_cases,
    flipped_bools,
    int_attribute_cases,
    int_values,
    string_attribute_cases,
    varied_attributes,
    varied_ints,
    varied_strings,
)

ROOT = Path(__file__).resolve().parents[2]
S42 = ROOT / "tests" / "redteam" / "fixture_s42"
SEEDS = (0, 11, 12345)


def test_version_is_19_or_later() -> None:
    assert UNSEEN_VERSION >= 19  # version 20: tests/verify/test_unseen_v20_s43.py


# --------------------------------------------------------------------------------------------- reshape ints

@pytest.mark.parametrize(("source", "reshape_only"), [
    ("def golden(x, g=4):\n    b, d = x.shape\n    return x.reshape(b, g, d // g).mean(-1)\n", True),
    ("import numpy as np\n\n\ndef golden(x, g=4):\n    return np.reshape(x, (x.shape[0], g, -1)).sum(-1)\n", True),
    ("def golden(x, g=4):\n    return x.view(x.shape[0], g, -1).sum(-1)\n", True),
    ("def golden(x, bits=8):\n    return x.view(bits)\n", False),  # a dtype, not a shape
    ("def golden(x, g=4):\n    return x.reshape(-1, g)[:, :g]\n", False),  # a slice too
    ("import torch\n\n\ndef golden(x, g=4):\n    return torch.topk(x.reshape(-1, g), k=g).values\n", False),
])
def test_an_int_whose_only_vetoes_are_reshape_arguments_is_reshape_only(source: str, reshape_only: bool) -> None:
    role = int_attribute_roles(pyast.parse(source), ["g" if "g=" in source else "bits"])
    (r,) = role.values()
    assert r.kind is None and r.reshape_only is reshape_only, (r.stays, r.reshapes)


def test_a_reshape_int_varies_from_version_19_through_values_that_keep_it_whole() -> None:
    op = load_op_dir(S42 / "group_norm")
    names = list(op.spec.attrs)
    assert varied_ints(op.spec, names, names, op.golden_tree) == {"num_groups": "shape"}
    assert varied_ints(op.spec, names, names, op.golden_tree, 18) == {}
    assert varied_ints(op.spec, [], names, op.golden_tree) == {}  # the wrapper does not take it: the SPEC's
    rng = np.random.default_rng(0)
    for v, lows in ((8, {2, 4}), (16, {4, 8}), (6, {3}), (3, {1})):
        for _ in range(8):
            a, b = int_values("shape", v, rng)
            assert a in lows and b == 2 * v
    assert int_values("shape", 1, rng) == (2, 4)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_group_norm_int_cases_run_half_twice_and_four_times_on_three_shapes(seed: int) -> None:
    op = load_op_dir(S42 / "group_norm")
    cases = int_attribute_cases(op.spec, op.cases(), {"num_groups": "shape"}, seed, 100)
    by_shape: dict[int, set[int]] = {}
    for c in cases:
        by_shape.setdefault(c.dims["B"], set()).add(int(c.attrs["num_groups"]))
    assert sorted(by_shape) == [1, 45, 64]  # the decode row, the tail shape, the first SPEC shape
    assert {16, 32} <= by_shape[64] and by_shape[64] & {2, 4} and 32 in by_shape[1]
    v18 = int_attribute_cases(op.spec, op.cases(), {"num_groups": "shape"}, seed, 100, 18)
    assert not [c for c in v18 if c.dims["B"] == 1]  # (version 18 never draws "shape": no decode row then)


# --------------------------------------------------------------------------------------------- str attributes

STRINGS = {
    "compare": ('def golden(x, kind="a"):\n    if kind == "a":\n        return x\n    if kind != "b":\n'
                '        raise ValueError(kind)\n    return -x\n', ["a", "b"]),
    "membership": ('def golden(x, mode="sum"):\n    assert mode in ("sum", "mean", "max")\n    return x\n',
                   ["sum", "mean", "max"]),
    "match": ('def golden(x, kind="relu"):\n    match kind:\n        case "relu":\n            return x\n'
              '        case "gelu" | "silu":\n            return -x\n    return x\n', ["relu", "gelu", "silu"]),
    "table": ('import numpy as np\n\nACT = {"tanh": np.tanh, "exp": np.exp}\n\n\ndef golden(x, act="tanh"):\n'
              '    return ACT[act](x)\n', ["tanh", "exp"]),
    "helper": ('def _f(x, k):\n    return x if k == "p" else -x\n\n\ndef golden(x, kind="p"):\n    k2 = kind\n'
               '    return _f(x, k=k2) if kind != "q" else x\n', ["q", "p"]),
    "none": ('def golden(x, kind="a"):\n    return x if kind.startswith("a") else -x\n', []),
}


@pytest.mark.parametrize("case", sorted(STRINGS))
def test_the_str_values_golden_compares_with_are_found(case: str) -> None:
    source, want = STRINGS[case]
    name = source.split("golden(x, ")[1].split("=")[0]
    assert string_attribute_values(pyast.parse(source), [name]) == {name: want}


def test_a_str_attribute_runs_its_other_values_on_three_shapes_from_version_19() -> None:
    op = load_op_dir(S42 / "activation")
    names = list(op.spec.attrs)
    strings = varied_strings(op.spec, names, names, op.golden_tree)
    assert strings == {"kind": ["gelu_tanh"]}
    assert varied_strings(op.spec, names, names, op.golden_tree, 18) == {}
    assert varied_strings(op.spec, [], names, op.golden_tree) == {}
    for seed in SEEDS:
        cases = string_attribute_cases(op.spec, op.cases(), strings, seed, 100)
        assert [(c.dims["B"], c.special, c.attrs) for c in cases] == [
            (64, True, {"kind": "gelu_tanh"}), (45, False, {"kind": "gelu_tanh"}), (1, False, {"kind": "gelu_tanh"})]
        assert all(c.name.endswith("kindgelu_tanh") for c in cases)


# --------------------------------------------------------------------------------------------- the decode row

def _attr_cases(op_dir: Path, seed: int, version: int) -> list:
    op = load_op_dir(op_dir)
    names_all = list(op.spec.attrs)
    names = varied_attributes(op.spec, names_all, names_all, version)
    flips = flipped_bools(op.spec, names_all, names_all, version)
    return attribute_cases(op.spec, op.cases(), names, seed, 100, version, flips=flips)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_far_and_flipped_sets_run_on_the_decode_row_too(seed: int) -> None:
    for name, key in (("softcap", "cap"), ("rms_norm", "unit_offset")):
        v17, v18, v19 = (_attr_cases(S42 / name, seed, v) for v in (17, 18, 19))
        assert v19[:len(v17)] == v17  # version 17's cases first, unchanged
        new = v19[len(v17):]
        for dtype in load_op_dir(S42 / name).spec.supported_dtypes:
            ones = [c for c in new if c.dtype == dtype and c.dims["B"] == 1]
            base = [c for c in new if c.dtype == dtype and c.dims["B"] == 64]
            assert ones and sorted(str(c.attrs[key]) for c in ones) == sorted(str(c.attrs[key]) for c in base)
        assert not [c for c in v18[len(v17):] if c.dims["B"] == 1]
