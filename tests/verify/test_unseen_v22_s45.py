"""Unseen drawing version 22 (red team round 35, session 45): tails in every window of sizes, in every dtype.

Round 35 (``tests/redteam/test_round35_s45.py``, fixture ``fixture_s45/``) wrote silu kernels whose row tiling is
wrong only on some tails (size mod 16) inside one window of sizes - below the SPEC's smallest, between the SPEC and
twice it, in one dtype - or on one tail the SPEC showed at one size only. Version 21 drew such a size in 40-95% of
runs (session 44 left ``s2_mid_window`` and ``s2_mid_even_tail`` at 90-94%). Version 22
(``runtime.opdir._unseen.cover_plan``) adds, after every other case, sizes so that every window of an axis holds a
tail of 2..14 in every dtype and two distinct tails in all, and every tail 1..15 is drawn on every axis. Here, without
running a kernel: the size each kernel is wrong on is drawn in every one of 40 runs, version 21's cases keep their
draws, and the calls added stay bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from runtime.opdir import load_op_dir
from runtime.opdir._unseen import UNSEEN_VERSION, _windows, unseen_cases

ROOT = Path(__file__).resolve().parents[2]
SILU2 = ROOT / "tests" / "redteam" / "fixture_s45" / "silu2"
BS = ROOT / "tests" / "redteam" / "fixture_s45" / "bs_silu"

WRONG: dict[str, Callable[[int, str], bool]] = {
    # where each kernel is wrong (silu2: B 64 and 77, fp32 and bf16, 16-row tiles)
    "s2_mid_window": lambda n, d: 77 < n < 160 and 1 <= n % 16 <= 13,          # version 21: 7% of runs passed
    "s2_mid_even_tail": lambda n, d: n >= 16 and n % 16 in (10, 12, 14),       # 9.5%
    "r35_odd_tails": lambda n, d: n % 16 in (3, 5, 7),                        # 5.5%
    "r35_below_window": lambda n, d: 32 < n < 64 and 1 <= n % 16 <= 12,       # 60%
    "r35_prefill_plus2": lambda n, d: n >= 320 and 1 <= n % 16 <= 13,         # 14.5%
    "r35_tail13_off_spec": lambda n, d: n % 16 == 13 and n != 77,             # 52.5%
}
SEEDS = range(40)


@cache
def _sizes(seed: int, version: int = UNSEEN_VERSION) -> frozenset[tuple[int, str]]:
    od = load_op_dir(SILU2)
    return frozenset((int(c.dims["B"]), c.dtype) for c in unseen_cases(od.spec, od.cases(), seed, version))


def test_version_22_is_current() -> None:
    assert UNSEEN_VERSION >= 22


@pytest.mark.parametrize("name", sorted(WRONG))
def test_every_run_draws_a_size_round_35s_kernel_is_wrong_on(name: str) -> None:
    wrong = WRONG[name]
    missed = [seed for seed in SEEDS if not any(wrong(n, d) for n, d in _sizes(seed))]
    assert not missed, missed


def test_version_21_missed_them() -> None:
    runs = [_sizes(seed, 21) for seed in SEEDS]
    for name, wrong in WRONG.items():
        assert any(not any(wrong(n, d) for n, d in sizes) for sizes in runs), name


def test_every_window_holds_a_fresh_tail_in_every_dtype_and_every_tail_is_drawn() -> None:
    od = load_op_dir(SILU2)
    for seed in range(10):
        sizes = _sizes(seed)
        assert {n % 16 for n, _ in sizes if n not in (64, 77)} >= set(range(1, 16))
        for lo, hi in _windows({64, 77}, 8192):
            for dtype in od.spec.supported_dtypes:
                tails = {n % 16 for n, d in sizes if d == dtype and lo < n <= hi and n not in (64, 77)}
                assert tails & set(range(2, 15)), (seed, lo, hi, dtype)


@pytest.mark.parametrize("op", [SILU2, BS, ROOT / "workspace" / "rms_norm", ROOT / "workspace" / "flash_attention"])
def test_version_21_cases_keep_their_draws_and_the_new_ones_are_bounded(op: Path) -> None:
    """Every case of version 21 first, as it was; the cover cases after it are unseen, not SPEC shapes, within the
    case cap, with seeds of their own, at most MAX_COVER_PER_DTYPE_AXIS calls per dtype and dynamic axis, rows
    at their own scales."""
    from runtime.opdir._memory import case_bytes
    from runtime.opdir._unseen import MAX_COVER_PER_DTYPE_AXIS, case_cap

    od = load_op_dir(op)
    cap = case_cap(od.spec, od.cases())
    for seed in (0, 11, 12345):
        old = unseen_cases(od.spec, od.cases(), seed, 21)
        new = unseen_cases(od.spec, od.cases(), seed, 22)
        assert [(c.name, c.dims, c.dtype, c.seed, c.band) for c in new[:len(old)]] == \
            [(c.name, c.dims, c.dtype, c.seed, c.band) for c in old]
        added = new[len(old):]
        bound = MAX_COVER_PER_DTYPE_AXIS * len(od.spec.supported_dtypes) * max(1, len(od.spec.dynamic_axes))
        assert 0 < len(added) <= bound, (op.name, seed)
        spec_dims = [dict(s) for s in od.spec.p0_shapes]
        assert all(c.dims not in spec_dims and c.unseen and not c.special and c.scaled for c in added)
        assert not any(c.scaled for c in old)
        assert all(case_bytes(od.spec, c) <= cap for c in added)
        seeds = [c.seed for c in new]
        assert len(set(seeds)) == len(seeds)
        assert new == unseen_cases(od.spec, od.cases(), seed, 22)


def test_windows_follow_the_spec_sizes() -> None:
    # under a tile, two tiles, doublings up to the SPEC's smallest, between the SPEC's sizes, 2x, 4x, above
    assert _windows({64, 77}, 8192) == [(0, 16), (16, 32), (32, 64), (64, 77), (77, 154), (154, 308), (308, 8192)]
    assert _windows({2048}, 8192) == [(0, 16), (16, 32), (32, 64), (64, 128), (128, 256), (256, 512), (512, 1024),
                                      (1024, 2048), (2048, 4096), (4096, 8192)]


def test_the_cover_cases_draw_rows_between_the_bands_magnitudes() -> None:
    """``r35_row_taylor`` (x/2 + x^2/4 for rows whose largest magnitude is under 1.0 in a [-8, 8] range) passed every
    verification of version 21: no row had a largest magnitude between the small band's (~0.16) and the range's. The
    cover cases' rows are scaled by 2**-u, u in [0, 7]: every run holds such rows; every value stays in the range and
    the first row of each input stays as drawn."""
    import numpy as np

    from runtime.opdir._inputs import generate_inputs

    od = load_op_dir(SILU2)
    for seed in range(5):
        scaled = [c for c in unseen_cases(od.spec, od.cases(), seed) if c.scaled]
        between = 0
        for c in scaled:
            (x,) = generate_inputs(od.spec, c)
            (plain,) = generate_inputs(od.spec, c.model_copy(update={"scaled": False}))
            amax = np.abs(x.astype(np.float32)).max(axis=-1)
            between += int(((amax > 0.25) & (amax < 1.0)).sum())
            assert np.abs(x.astype(np.float32)).max() <= 8.0
            assert np.array_equal(x[0].view(np.uint8), plain[0].view(np.uint8))
            assert x.shape[0] < 2 or not np.array_equal(x, plain)
            (again,) = generate_inputs(od.spec, c)
            assert np.array_equal(again.view(np.uint8), x.view(np.uint8))  # deterministic in the case
        assert between >= 5, (seed, between)
