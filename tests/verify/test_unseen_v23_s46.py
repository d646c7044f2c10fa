"""Unseen drawing version 23 (red team round 36, session 46): one row past whole blocks, and tails of another axis.

Round 36 (``tests/redteam/test_round36_s46.py``, fixture ``fixture_s46/``) wrote kernels whose path walks blocks of
more than one tile - 48 or 64 rows from some size on, a block count ``(n + c) // block`` - and [B, S, D] kernels wrong
on a window of one axis with some tails of the other. Version 22's tails are remainders of 16: a size one to three
rows past whole 64-row blocks came in about half of its runs. Version 23 (``runtime.opdir._unseen.block_plan``) adds,
after every other case, a size ``m * L + 1`` in every window above two tiles in every dtype, and per window of each
axis (up to 4x) one call per dtype with the other axes at tails no earlier call of the plan gave them. Here, without
running a kernel: the size each closed kernel is wrong on is drawn in every one of 30 runs, version 22 missed them,
version 22's cases keep their draws, and the calls added stay bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from runtime.opdir import load_op_dir
from runtime.opdir._unseen import (
    BLOCK_PERIODS,
    MAX_BLOCK_PER_DTYPE_AXIS,
    UNSEEN_VERSION,
    _one_past,
    _windows,
    unseen_cases,
)

ROOT = Path(__file__).resolve().parents[2]
SILU2 = ROOT / "tests" / "redteam" / "fixture_s46" / "silu2"
BS = ROOT / "tests" / "redteam" / "fixture_s46" / "bs_silu"

WRONG: dict[str, Callable[[int, str], bool]] = {
    # where each silu2 kernel of round 36 is wrong (B 64 and 77, fp32 and bf16); version 22's pass rate over 200 runs
    "r36_prefill_blk64_plus60": lambda n, d: n >= 128 and 1 <= n % 64 <= 3,   # 49%
    "r36_blk48_plus40": lambda n, d: n >= 96 and 1 <= n % 48 <= 7,            # 18.5%
    "r35_bf16_mid_window": lambda n, d: d == "bf16" and 77 < n < 160 and 1 <= n % 16 <= 13,  # 3.5% (round 35)
}
SEEDS = range(30)


@cache
def _sizes(seed: int, version: int = UNSEEN_VERSION) -> frozenset[tuple[int, str]]:
    od = load_op_dir(SILU2)
    return frozenset((int(c.dims["B"]), c.dtype) for c in unseen_cases(od.spec, od.cases(), seed, version))


def test_version_23_is_current() -> None:
    assert UNSEEN_VERSION >= 23


@pytest.mark.parametrize("name", sorted(WRONG))
def test_every_run_draws_a_size_round_36s_block_kernels_are_wrong_on(name: str) -> None:
    wrong = WRONG[name]
    missed = [seed for seed in SEEDS if not any(wrong(n, d) for n, d in _sizes(seed))]
    assert not missed, missed


def test_version_22_missed_the_block_kernels() -> None:
    runs = [_sizes(seed, 22) for seed in SEEDS]
    for name in ("r36_prefill_blk64_plus60", "r36_blk48_plus40"):
        assert any(not any(WRONG[name](n, d) for n, d in sizes) for sizes in runs), name


def test_every_window_above_two_tiles_holds_one_past_whole_blocks_in_every_dtype() -> None:
    """Each window that holds a size one past two or more 32-row blocks gets one in every dtype; above 4x (308..8192)
    it is one past whole 1536-row blocks (so past whole blocks of every size of BLOCK_SIZES at once)."""
    od = load_op_dir(SILU2)
    for seed in range(5):
        sizes = _sizes(seed)
        for lo, hi in _windows({64, 77}, 8192):
            if not any(lo < m * 32 + 1 <= hi for m in range(2, hi // 32 + 1)):
                continue
            for dtype in od.spec.supported_dtypes:
                assert any(lo < n <= hi and n % 32 == 1 and n > 64 for n, d in sizes if d == dtype), (seed, lo, hi)
        for dtype in od.spec.supported_dtypes:
            assert any(n > 308 and n % 1536 == 1 for n, d in sizes if d == dtype), seed


def test_one_past_prefers_the_period_of_most_blocks_and_stays_in_its_window() -> None:
    rng = np.random.default_rng(0)
    for lo, hi in [(77, 154), (154, 308), (308, 8192), (64, 77), (2048, 4096)]:
        got = _one_past(lo, hi, {64, 77}, rng, set())
        if got is None:
            assert not any(lo < m * p + 1 <= hi for p in BLOCK_PERIODS for m in range(2, hi // p + 1)), (lo, hi)
            continue
        size, period = got
        assert lo < size <= hi and size % period == 1 and size >= 2 * period + 1
        assert not any(lo < m * p + 1 <= hi for p in BLOCK_PERIODS[:BLOCK_PERIODS.index(period)]
                       for m in range(2, hi // p + 1))
    assert _one_past(308, 8192, set(), rng, set())[1] == 1536  # one size is past whole blocks of every block size


@cache
def _bs_cells(seed: int, version: int = UNSEEN_VERSION) -> frozenset[tuple[int, int, str]]:
    od = load_op_dir(BS)
    return frozenset((int(c.dims["B"]), int(c.dims["S"]), c.dtype)
                     for c in unseen_cases(od.spec, od.cases(), seed, version))


def test_windows_of_one_axis_meet_tails_of_the_other() -> None:
    """``bs_b_mid_even_s`` (4 <= B <= 16 with S tails 10/12/14) passed 29% of version 22's runs and ``bs_fp16_b_tail``
    (fp16, B over a tile with a tail of 9..14) 15%; over 20 runs of version 23 each is missed at most twice and once,
    and every window of B up to 4x meets at least two distinct S tails of 2..14 in every run."""
    b_mid = [s for s in range(20) if not any(4 <= b <= 16 and s_ % 16 in (10, 12, 14) for b, s_, _ in _bs_cells(s))]
    fp16 = [s for s in range(20) if not any(d == "fp16" and b > 16 and 9 <= b % 16 <= 14 for b, _, d in _bs_cells(s))]
    assert len(b_mid) <= 2 and len(fp16) <= 1, (b_mid, fp16)
    for seed in range(3):
        cells = _bs_cells(seed)
        for lo, hi in _windows({2, 3}, 12):
            tails = {s % 16 for b, s, _ in cells if lo < b <= hi and s not in (64, 77) and 2 <= s % 16 <= 14}
            assert len(tails) >= 2, (seed, lo, hi, tails)


@pytest.mark.parametrize("op", [SILU2, BS, ROOT / "workspace" / "rms_norm", ROOT / "workspace" / "flash_attention"])
def test_version_22_cases_keep_their_draws_and_the_new_ones_are_bounded(op: Path) -> None:
    """Every case of version 22 first, as it was; the block cases after it are unseen, not SPEC shapes, within the
    case cap, with seeds of their own, at most MAX_BLOCK_PER_DTYPE_AXIS calls per dtype and dynamic axis."""
    from runtime.opdir._memory import case_bytes
    from runtime.opdir._unseen import case_cap

    od = load_op_dir(op)
    cap = case_cap(od.spec, od.cases())
    for seed in (0, 11):
        old = unseen_cases(od.spec, od.cases(), seed, 22)
        new = unseen_cases(od.spec, od.cases(), seed, 23)
        assert [(c.name, c.dims, c.dtype, c.seed, c.band) for c in new[:len(old)]] == \
            [(c.name, c.dims, c.dtype, c.seed, c.band) for c in old]
        added = new[len(old):]
        blocks = [c for c in added if not c.special]
        partners = added[len(blocks):]  # the block cases, then the partners of the single calls
        assert all(c.scaled and not c.special for c in blocks) and all(c.special and not c.scaled for c in partners)
        bound = MAX_BLOCK_PER_DTYPE_AXIS * len(od.spec.supported_dtypes) * max(1, len(od.spec.dynamic_axes))
        assert len(blocks) <= bound, (op.name, seed)
        earlier = [(c.dims, c.dtype) for c in new[:len(new) - len(partners)]]
        assert all(earlier.count((c.dims, c.dtype)) == 1 for c in partners)  # each pairs a single call
        spec_dims = [dict(s) for s in od.spec.p0_shapes]
        assert all(c.dims not in spec_dims and c.unseen for c in added)
        assert all(case_bytes(od.spec, c) <= cap for c in added)
        seeds = [c.seed for c in new]
        assert len(set(seeds)) == len(seeds)
        assert new == unseen_cases(od.spec, od.cases(), seed, 23)


def test_every_small_single_call_of_the_sweep_cover_and_block_plan_gets_a_same_shape_partner() -> None:
    """``r35_baked_single_calls`` baked a host ``silu(x)`` into ``pypto.full`` constants for 9..15 rows - sizes the
    sweep (version 21) and the cover (version 22) ran once - and passed with lint off: the device's program comparison
    compares calls of one shape and dtype. Version 23 gives every such call up to PAIR_BYTES a partner with other
    (special) values; version 22 left them single."""
    from collections import Counter

    from runtime.opdir._unseen import PAIR_BYTES, _bytes

    od = load_op_dir(SILU2)
    for seed in range(5):
        for version, paired in ((22, False), (23, True)):
            cases = unseen_cases(od.spec, od.cases(), seed, version)
            counts = Counter((tuple(sorted(c.dims.items())), c.dtype) for c in [*od.cases(), *cases])
            small = [c for c in cases if c.scaled and _bytes(od.spec, c.dims, c.dtype) <= PAIR_BYTES]
            assert small, seed
            single = [c.name for c in small if counts[(tuple(sorted(c.dims.items())), c.dtype)] == 1]
            assert (not single) == paired, (seed, version, single)
        sizes9_15 = [c for c in cases if 9 <= c.dims["B"] <= 15]
        assert sizes9_15 and all(counts[(tuple(sorted(c.dims.items())), c.dtype)] >= 2 for c in sizes9_15), seed
