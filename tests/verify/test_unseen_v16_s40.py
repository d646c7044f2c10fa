"""Unseen drawing version 16 (accident round 30, session 40): a SPEC of static shapes gets the attribute cases.

Every one-case gym import (sum_lstm, rms_norm, mhc_sinkhorn: ``[32, 16384]``, ``[1, 64, 256, 256]``, ``[8, 4, 4]``)
has a SPEC without ``p0_shapes``. :func:`attribute_cases` returned nothing for it, so its float attributes were varied
once, on its last unseen case, with the "below" set only: never the set that takes a tiny ``eps`` far up with special
(tiny) rows. The gym's sum_lstm normalising the cell path with ``eps_state`` (both eps 1e-6 in the SPEC) passed every
seed (``tests/redteam/test_round30_s40.py``). Version 16 runs the attribute cases on the static shape; nothing else
moves, and a SPEC with ``p0_shapes`` draws exactly what version 15 drew.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.opdir import load_op_dir
from runtime.opdir._unseen import UNSEEN_VERSION, attribute_cases, unseen_cases, varied_attributes

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (0, 1, 11, 12345)
_SPEC = """---
schema_version: 1
op_name: static_norm
inputs:
  - {name: x, shape: [32, 64], dtype: T, range: [-4.0, 4.0], distribution: normal}
outputs:
  - {name: y, shape: [32, 64], dtype: T}
supported_dtypes: [fp32]
tolerance:
  fp32: {atol: 1.0e-4, rtol: 1.0e-4}
attributes:
  eps_a: {type: float, value: 1.0e-06}
  eps_b: {type: float, value: 1.0e-06}
---

# static_norm

    y = x / sqrt(mean(x^2) + eps_a) + eps_b
"""
_GOLDEN = '''"""RMS normalisation of each row with two eps."""

import numpy as np


def golden(x, eps_a=1e-6, eps_b=1e-6):
    x = x.astype(np.float32)
    return (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps_a) + eps_b).astype(np.float32)
'''


def _static_op(tmp_path: Path):
    op_dir = tmp_path / "static_norm"
    op_dir.mkdir()
    (op_dir / "SPEC.md").write_text(_SPEC)
    (op_dir / "golden.py").write_text(_GOLDEN)
    return load_op_dir(op_dir)


def test_version_is_16() -> None:
    assert UNSEEN_VERSION >= 16  # (s40) version 17 moved it on: test_unseen_v17_s40.py


def test_a_static_spec_gets_the_attribute_cases_on_its_one_shape(tmp_path: Path) -> None:
    op = _static_op(tmp_path)
    assert not op.spec.p0_shapes and not op.spec.named_dims()
    names = varied_attributes(op.spec, ["eps_a", "eps_b"], ["eps_a", "eps_b"])
    assert names == ["eps_a", "eps_b"]
    for seed in SEEDS:
        assert attribute_cases(op.spec, op.cases(), names, seed, 9, version=15) == []
        cases = attribute_cases(op.spec, op.cases(), names, seed, 9, version=16)
        assert len(cases) >= 3 and all(c.dims == {} and c.unseen for c in cases)
        assert all(c.name.startswith(f"unseen{9 + i}-static-fp32-") for i, c in enumerate(cases))
        # the set far above a tiny eps runs with special and tiny rows, each eps drawn on its own
        far = [c for c in cases if c.special]
        assert far and all(c.tiny and c.attrs["eps_a"] >= 1e-4 and c.attrs["eps_b"] >= 1e-4 for c in far)
        assert all(c.attrs["eps_a"] != c.attrs["eps_b"] for c in far)
        assert len({c.seed for c in cases} | {c.seed for c in op.cases()}) == len(cases) + len(op.cases())


@pytest.mark.parametrize("op_dir", [ROOT / "tests" / "redteam" / "fixture_s39" / "softcap",
                                    ROOT / "tests" / "redteam" / "fixture_s39acc" / "group_gate",
                                    ROOT / "tests" / "redteam" / "fixture_s38acc" / "rms_norm"])
def test_a_spec_with_p0_shapes_draws_what_version_15_drew(op_dir: Path) -> None:
    op = load_op_dir(op_dir)
    attrs = list(op.spec.attrs)
    names = varied_attributes(op.spec, attrs, attrs)
    for seed in SEEDS:
        assert attribute_cases(op.spec, op.cases(), names, seed, 40, version=16) == \
            attribute_cases(op.spec, op.cases(), names, seed, 40, version=15)
        assert unseen_cases(op.spec, op.cases(), seed, 16) == unseen_cases(op.spec, op.cases(), seed, 15)


def test_versions_up_to_15_are_unchanged_for_a_static_spec(tmp_path: Path) -> None:
    op = _static_op(tmp_path)
    names = ["eps_a", "eps_b"]
    for version in (10, 11, 14, 15):
        assert attribute_cases(op.spec, op.cases(), names, 0, 9, version=version) == []
    for seed in SEEDS:
        assert unseen_cases(op.spec, op.cases(), seed, 16) == unseen_cases(op.spec, op.cases(), seed, 15)
