"""Unseen drawing version 13 (red team s38): a float input that is one vector ([N], [1, V], [N, 1]) or a few rows
([4, V]) gets the special kinds as whole vectors, one kind per vector case - before, the kinds went one per row after
the first, so a one-row input got only ties and the range's two ends and a few rows no peaked or sorted row
(``tests/redteam/test_round24_s38.py`` holds the kernels that passed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from runtime.opdir import load_op_dir
from runtime.opdir._inputs import VECTOR_KINDS, few_vectors, generate_inputs, one_vector
from runtime.opdir._unseen import unseen_cases

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "redteam" / "fixture_s38"
SEEDS = (0, 1, 7, 11, 12345)


def test_one_vector_is_one_axis_longer_than_one() -> None:
    assert one_vector((512,)) and one_vector((1, 512)) and one_vector((512, 1)) and one_vector((1, 3, 1))
    assert not one_vector((2, 512)) and not one_vector((2,)) and not one_vector((1,)) and not one_vector(())
    assert few_vectors((4, 512)) and few_vectors((2, 4, 3)) and few_vectors((2, 3))
    assert not few_vectors((9, 512)) and not few_vectors((4, 2)) and not few_vectors((512,))


@pytest.mark.parametrize("op", ["vnorm", "vsoftmax", "hsoftmax"])
def test_version_13_runs_every_kind_once_and_version_12_none(op: str) -> None:
    o = load_op_dir(FIXTURE / op)
    for seed in SEEDS:
        v12 = unseen_cases(o.spec, o.cases(), seed, version=12)
        v13 = unseen_cases(o.spec, o.cases(), seed, version=13)
        assert not any(c.vector for c in v12)
        kinds = [c.vector for c in v13 if c.vector]
        assert kinds == list(VECTOR_KINDS)
        assert all(c.special and not c.columns and c.band == "normal" for c in v13 if c.vector)
        names12 = [c.name for c in v12]
        # every other case is version 12's (then the powers of two plus a tail: test_pow2_tail_*)
        assert [c.name for c in v13 if not c.vector][:len(names12)] == names12


def _kind_holds(kind: str, x: np.ndarray, lo: float, hi: float) -> bool:
    width = hi - lo
    if kind == "near":
        return float(x.max() - x.min()) <= 2.1e-3 * width and abs(float(x.mean())) >= 0.8 * max(abs(lo), abs(hi))
    if kind == "constant":
        return bool(np.all(x == x[0]))
    if kind == "ascending":
        return bool(np.all(np.diff(x) >= 0))
    if kind == "descending":
        return bool(np.all(np.diff(x) <= 0))
    if kind == "tiny":
        return float(np.abs(x).max()) <= max(abs(lo), abs(hi)) * 2.0 ** -7 * 1.01
    half = x.shape[0] // 2
    big = np.abs(x) >= 0.84 * max(abs(lo), abs(hi))
    late, early = bool(big[half:].any()), bool(big[:half].any())
    return bool(big.sum() <= 3 and (late and not early if kind == "peak" else early and not late))


@pytest.mark.parametrize("op", ["vnorm", "vsoftmax", "hsoftmax"])
def test_a_vector_case_holds_its_kind_as_a_whole(op: str) -> None:
    o = load_op_dir(FIXTURE / op)
    lo, hi = o.spec.inputs[0].range
    for seed in SEEDS:
        for c in unseen_cases(o.spec, o.cases(), seed):
            if c.vector in VECTOR_KINDS:  # (s40) version 17's family kinds: test_unseen_v17_s40.py
                (x,) = generate_inputs(o.spec, c)
                assert np.all((x >= lo) & (x <= hi)), c.name
                for row in np.atleast_2d(x):  # every row of a few-row input, the first included
                    assert _kind_holds(c.vector, row.astype(np.float64), lo, hi), (seed, c.vector, row[:8])


def test_only_an_op_whose_float_data_is_vectors_gets_vector_cases() -> None:
    """A weight vector beside a larger activation gets none: sum_lstm's w_state and b_state ([4096] beside [32, 16384])
    made near-constant or sorted together aligned their extremes in every row, and the vendor's honest fp16 kernel
    left its tolerance on 3 of 6 seeds (s38); rms_norm's gamma beside x [B, D] is the same shape of op."""
    rms = load_op_dir(ROOT / "workspace" / "rms_norm")  # x [B, D], gamma [D]
    assert not any(c.vector for c in unseen_cases(rms.spec, rms.cases(), 0))
    silu = load_op_dir(ROOT / "workspace" / "silu")
    assert not any(c.vector for c in unseen_cases(silu.spec, silu.cases(), 0))
    hs = load_op_dir(FIXTURE / "hsoftmax")  # x and y [4, V]: a few rows, every float input
    assert [c.vector for c in unseen_cases(hs.spec, hs.cases(), 0, 16) if c.vector] == list(VECTOR_KINDS)
    # (s40) version 17 adds version 13's kinds first, then the value families (test_unseen_v17_s40.py)
    assert [c.vector for c in unseen_cases(hs.spec, hs.cases(), 0) if c.vector][:len(VECTOR_KINDS)] == \
        list(VECTOR_KINDS)


@pytest.mark.parametrize("op", ["rms_norm", "silu", "layer_norm"])
def test_version_13_adds_a_power_of_two_plus_a_tail_on_kept_axes(op: str) -> None:
    """(accident s38, ``rms_prefill64``) above 4x the SPEC's largest size a kept axis got only powers of two - a
    ``n // 64`` prefill path for ``n >= 1024`` never wrote its tail rows and passed; version 13 runs the largest
    power of two that ran on the axis plus a tail of 1..15 (halved to the case cap, its tail kept), as a pair, after
    every other case."""
    o = load_op_dir(ROOT / "workspace" / op)
    spec = o.spec
    kept = [a for a in spec.dynamic_axes if all(a in out.shape for out in spec.outputs)]
    assert kept, op
    for seed in SEEDS:
        v12 = unseen_cases(spec, o.cases(), seed, version=12)
        v13 = unseen_cases(spec, o.cases(), seed, version=13)
        tails = [c for c in v13[len(v12):] if not c.vector]
        assert len(tails) == 2 * len(kept), (seed, [c.name for c in tails])
        for axis in kept:
            mine = [c for c in tails if c.dims[axis] > 128 and (c.dims[axis] - 1) % 128 < 15]
            assert len(mine) == 2 and mine[0].dims == mine[1].dims and [m.special for m in mine] == [False, True]
            assert all(m.tail for m in mine)
