"""Unseen drawing version 21 (red team round 34, session 44): the sizes a kernel could count on never meeting.

Round 34 (``tests/redteam/test_round34_s44.py``, fixture ``fixture_s44/``) wrote twelve silu kernels whose row tiling
is wrong only on a size class version 20 ran rarely or in one dtype: nine passed 45-100% of version 20's
verifications. Version 21 (``runtime.opdir._unseen.sweep_plan``) adds, after every other case, one call of each
one-dtype class in every other dtype, a partial single tile (9..15) and a tile plus a partial one (18..30) in every
dtype, a size with a tail the run has not drawn, an odd multiple of the tile past one, and odd multiples of 256 and
512 above 4x on a kept axis. Here, without running a kernel: the size and dtype each of the nine kernels is wrong on is
drawn in every run, the cases of version 20 keep their draws, and the calls added stay bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from runtime.opdir import load_op_dir
from runtime.opdir._unseen import MAX_SWEEP_PER_DTYPE, UNSEEN_VERSION, unseen_cases

ROOT = Path(__file__).resolve().parents[2]
SILU2 = ROOT / "tests" / "redteam" / "fixture_s44" / "silu2"

WRONG: dict[str, Callable[[int, str], bool]] = {
    # where each of round 34's kernels is wrong (SPEC: B 64 and 77, fp32 and bf16; 16-row tiles)
    "s2_partial_tile8": lambda n, d: 8 < n < 16,
    "s2_bf16_a64_unroll": lambda n, d: d == "bf16" and n % 128 == 64 and n >= 128,
    "s2_bf16_small2": lambda n, d: d == "bf16" and 2 <= n <= 8,
    "s2_fp32_aligned_pair": lambda n, d: d == "fp32" and n % 32 == 16 and n >= 32,
    "s2_two_tiles_off1": lambda n, d: 17 < n < 32,
    "s2_a256_half": lambda n, d: n % 512 == 256 and n > 256,
    "s2_bf16_tile_minus1": lambda n, d: d == "bf16" and n % 16 == 15,
    "s2_fp32_small2": lambda n, d: d == "fp32" and 2 <= n <= 8,
    "s2_bf16_a32": lambda n, d: d == "bf16" and n % 64 == 32,
}
SEEDS = range(40)


@cache
def _sizes(seed: int, version: int = UNSEEN_VERSION) -> frozenset[tuple[int, str]]:
    od = load_op_dir(SILU2)
    return frozenset((int(c.dims["B"]), c.dtype) for c in unseen_cases(od.spec, od.cases(), seed, version))


def test_version_21_is_current() -> None:
    assert UNSEEN_VERSION >= 21


@pytest.mark.parametrize("name", sorted(WRONG))
def test_every_run_draws_a_size_round_34s_kernel_is_wrong_on(name: str) -> None:
    wrong = WRONG[name]
    missed = [seed for seed in SEEDS if not any(wrong(n, d) for n, d in _sizes(seed))]
    assert not missed, missed


def test_version_20_missed_them() -> None:
    """The same seeds under version 20: each of the nine kernels passed some (the reason for version 21)."""
    runs = [_sizes(seed, 20) for seed in SEEDS]
    for name, wrong in WRONG.items():
        assert any(not any(wrong(n, d) for n, d in sizes) for sizes in runs), name


@pytest.mark.parametrize("op", [SILU2, ROOT / "workspace" / "rms_norm", ROOT / "workspace" / "flash_attention",
                                ROOT / "tests" / "redteam" / "fixture_s43" / "group_norm"])
def test_version_20_cases_keep_their_draws_and_the_new_ones_are_bounded(op: Path) -> None:
    od = load_op_dir(op)
    for seed in (0, 11, 12345):
        old = unseen_cases(od.spec, od.cases(), seed, 20)
        new = unseen_cases(od.spec, od.cases(), seed, 21)
        assert [(c.name, c.dims, c.dtype, c.seed, c.band) for c in new[:len(old)]] == \
            [(c.name, c.dims, c.dtype, c.seed, c.band) for c in old]
        added = new[len(old):]
        # one call per case, at most MAX_SWEEP_PER_DTYPE per dtype
        bound = MAX_SWEEP_PER_DTYPE * len(od.spec.supported_dtypes)
        assert len(added) <= bound, (op.name, seed, len(added))
        spec_dims = [dict(s) for s in od.spec.p0_shapes]
        assert all(c.dims not in spec_dims and c.unseen for c in added)


BS = ROOT / "tests" / "redteam" / "fixture_s44" / "bs_silu"
WRONG_BS: dict[str, Callable[[int, int, str], bool]] = {
    # [B, S, D], B and S dynamic, three dtypes (SPEC: B 2 / S 64 and B 3 / S 77)
    "fp16 path wrong on S 9..15": lambda b, s, d: d == "fp16" and 8 < s < 16,       # version 20: 90% passed
    "fp16 path wrong on a tail of 15 of S": lambda b, s, d: d == "fp16" and s % 16 == 15,  # 65%
    "second tile of S off by one": lambda b, s, d: 17 < s < 32,                      # 87%
    "S % 512 == 256 in 512-row blocks": lambda b, s, d: s % 512 == 256 and s > 256,  # 100%
    "batched path (B > 4) wrong on S tails 2..12": lambda b, s, d: b > 4 and 2 <= s % 16 <= 12,  # 63%
}


def test_two_axes_three_dtypes_draw_the_new_sizes_in_every_run() -> None:
    od = load_op_dir(BS)
    for seed in range(25):
        drawn = unseen_cases(od.spec, od.cases(), seed)
        shapes = {(int(c.dims["B"]), int(c.dims["S"]), c.dtype) for c in drawn}
        for name, wrong in WRONG_BS.items():
            assert any(wrong(*x) for x in shapes), (seed, name)


@pytest.mark.parametrize("op", [SILU2, BS])
def test_the_sweep_cases_are_ordinary_unseen_cases(op: Path) -> None:
    """Deterministic in the seed, named like every unseen case (nothing says "sweep"), seeds of their own, within the
    case cap."""
    from runtime.opdir._memory import case_bytes
    from runtime.opdir._unseen import case_cap

    od = load_op_dir(op)
    cap = case_cap(od.spec, od.cases())
    for seed in (0, 5, 99):
        # version 22: version 23's partners of single calls after them hold special values (test_unseen_v23_s46.py)
        drawn = unseen_cases(od.spec, od.cases(), seed, 22)
        assert drawn == unseen_cases(od.spec, od.cases(), seed, 22)
        added = drawn[len(unseen_cases(od.spec, od.cases(), seed, 20)):]
        assert added
        seeds = [c.seed for c in drawn]
        assert len(set(seeds)) == len(seeds) and not set(seeds) & {c.seed for c in od.cases()}
        for c in added:
            assert c.name.split("-")[0] == f"unseen{drawn.index(c) + 1}" and len(c.name.split("-")) == 3
            assert case_bytes(od.spec, c) <= cap and not c.special
