"""Red team round 37 (session 47): the file's own numbers in other spellings, budget-derived blocks, hidden guards.

Fixture ops ``fixture_s47/silu2`` and ``fixture_s47/bs_silu`` (round 35's, copied), candidates in
``fixture_s47/candidates``. Kinds no earlier round had, written as an attacker who has read ``_hints.py`` and
``_unseen.py`` and as the accidents a model writes:

- version 23's hint reader reads ``%``, ``//``, literals and names bound alone; the same window and tail written in the
  other spellings Python has passed like a hidden guard: ``r37_and_tail`` (``n & 15 == 11``), ``r37_divmod_window``
  (``q, r = divmod(n, 16)``; ``4 < q < 10 and r == 11``), ``r37_range_member`` (``n in range(91, 160, 16)``),
  ``r37_shift_bf16`` (bf16, ``n >> 6 == 2 and n & 15 in (5, 9)``), ``r37_offset_mod`` (``(n + 5) % 16 == 0``: read,
  but its three residues queued its own window behind others), ``r37_match_tail`` (a ``match`` on ``divmod``: lint
  PF02 refuses ``match``);
- ``r37_ub_rows`` (accidental): rows per block from a buffer budget and the row's bytes (320 in fp32, 640 in bf16),
  counted ``(n + rows - 16) // rows``; version 23's one-past sizes are ``m * 1536 + 1`` (no block of 5 tiles);
- guards that name no size: ``r37_hash_guard`` (a hash of the row count), ``bs_prod_tail`` (B x S rows of tail 13),
  ``bs_diff_tail`` (S - B of tail 5), ``bs_fp16_popcount`` (fp16, S over 77, B x S with four bits set);
- honest look-alikes that must PASS: ``r37_h_bitops`` (``(n + 15) >> 4``, ``n & 15``), ``r37_h_divmod``,
  ``r37_h_ub_rows`` (the budget's blocks counted as a ceiling), ``bs_h_bitops``.

Version 24 (``runtime/opdir/_unseen.py``, ``runtime/verify/_hints.py``; docs/verification.md "Version 24") reads the
other spellings, takes block periods with a factor of 5 (one size, 7681, is one row past whole blocks of 80 .. 1920
rows), and covers every tail of every window from two tiles to 2x the SPEC in every run. Rates are of
``unseen_cases`` over 100 seeds (no kernel runs) and are in the docs; here the fast tier holds the reader and the
plans on a few seeds, the slow tier the verdicts of verify on seeds 0, 11 and 12345.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

from runtime.opdir import load_op_dir
from runtime.opdir._unseen import (
    MAX_TAIL_COVER_PER_AXIS,
    TAIL_COVER_TOP,
    _windows,
    block_plan,
    hint_plan,
    tail_cover_plan,
    unseen_cases,
)
from runtime.verify._hints import source_hints

HERE = Path(__file__).resolve().parent / "fixture_s47"
SILU2 = HERE / "silu2"
CANDIDATES = HERE / "candidates"

WRONG: dict[str, Callable[[int, str], bool]] = {
    # silu2 (B: SPEC 64 and 77; fp32 and bf16): the sizes each hostile kernel is wrong on
    "r37_and_tail": lambda n, d: 77 < n < 160 and n % 16 == 11,
    "r37_offset_mod": lambda n, d: 77 < n < 160 and n % 16 == 11,
    "r37_divmod_window": lambda n, d: 4 < n // 16 < 10 and n % 16 == 11,
    "r37_range_member": lambda n, d: n in range(91, 160, 16),
    "r37_shift_bf16": lambda n, d: d == "bf16" and n >> 6 == 2 and n % 16 in (5, 9),
    "r37_ub_rows": lambda n, d: n > {"fp32": 320, "bf16": 640}[d] and 1 <= n % {"fp32": 320, "bf16": 640}[d] <= 15,
    "r37_hash_guard": lambda n, d: (n * 2654435761 >> 9) % 40 == 7 and n % 16 != 0,
}
SPELLINGS = ["r37_and_tail", "r37_offset_mod", "r37_divmod_window", "r37_range_member", "r37_shift_bf16"]
"""The kernels whose file names its window and tail in a spelling version 23's reader did not read."""
HONEST = ["r37_h_bitops", "r37_h_divmod", "r37_h_ub_rows"]
FIXED = [*SPELLINGS, "r37_ub_rows"]
"""Refused on every seed by version 24 (the rates over 100 seeds: 0%)."""


def _text(name: str) -> str:
    return (CANDIDATES / f"{name}.py").read_text()


def _silu2() -> tuple[object, list[dict[str, int]], list[str]]:
    od = load_op_dir(SILU2)
    return od.spec, [dict(s) for s in od.spec.p0_shapes], list(od.spec.supported_dtypes)


def test_the_reader_takes_the_other_spellings_of_a_window_and_a_tail() -> None:
    text = """
TILE = 16
LO, HI = 77, 160
def f(x, n, b, s):
    q, r = divmod(n, TILE)
    t = n & 15
    if 4 < q < 10 and r == 11:        # sizes 80..159, tail 11
        pass
    if LO < n < HI and t == 3:        # names bound together; a remainder held in a name
        pass
    if n >> 6 == 2 and n & 15 in (5, 9):
        pass
    if (n + 5) % TILE == 0 or n in range(200, 260, 16):
        pass
    if b * s % 16 == 13 and n & 63:
        pass
    k = (n + 15) >> 4                 # a ceiling: nothing
"""
    h = source_hints(text)
    assert {(16, 11), (16, 3), (16, 5), (16, 9), (16, 8), (64, 0), (64, 1), (16, 13)} <= set(h.residues)
    assert {80, 160, 77, 128, 192, 200, 216, 248} <= set(h.bounds)
    assert not {2, 3, 4, 5, 9, 10, 11, 13} & set(h.bounds)  # a residue or a quotient is no size (version 23: it was)
    assert {16, 64} <= set(h.moduli)
    assert (16, 15) not in h.residues  # `(n + 15) >> 4` is a ceiling
    # version 23's reader reads what it did (its draws stay as recorded)
    old = source_hints(text, 23)
    assert (16, 3) not in old.residues and 80 not in old.bounds and 11 in old.bounds
    assert source_hints(_text("r37_and_tail"), 23).residues == ()


@pytest.mark.parametrize("name", SPELLINGS)
def test_the_files_own_window_and_tail_run_in_every_run(name: str) -> None:
    """Version 24's hints and hint plan reach the size each spelling kernel is wrong on in every one of 10 runs."""
    spec, shapes, dtypes = _silu2()
    hints = source_hints(_text(name))
    missed = [seed for seed in range(10) if not any(
        WRONG[name](int(d["B"]), t) for d, t in hint_plan(spec, shapes, dtypes, [], hints, seed, 1 << 26, 24))]
    assert not missed, missed


def test_honest_bit_spellings_are_read_and_a_ceiling_adds_nothing() -> None:
    assert source_hints("def f(n):\n    return (n + 15) >> 4\n").residues == ()
    assert source_hints(_text("r37_h_ub_rows")).residues == ()  # its block sizes come from the input: not read
    assert (16, 0) in source_hints(_text("r37_h_bitops")).residues  # `rows & 15 == 0`: the whole-tile sizes run


def test_one_size_is_past_whole_blocks_of_five_tile_multiples_in_every_dtype() -> None:
    """``r37_ub_rows`` drops a last block of 1..15 rows of 320 (fp32) or 640 (bf16) rows: version 24's first block
    period above 4x is 3840 (7681 rows, past whole blocks of 80 .. 1920), in every dtype; version 23's was 1536."""
    spec, shapes, dtypes = _silu2()
    for seed in range(5):
        plan = block_plan(spec, shapes, dtypes, [], seed, 1 << 26, 24)
        for dtype in dtypes:
            assert any(WRONG["r37_ub_rows"](int(d["B"]), t) for d, t in plan if t == dtype), (seed, dtype)
        # one call more than version 23 at most: the second, one-dtype size for the blocks 3840 misses (512, 1536)
        assert len(plan) <= len(block_plan(spec, shapes, dtypes, [], seed, 1 << 26)) + 1


@cache
def _cases(seed: int, version: int = 24) -> tuple:
    od = load_op_dir(SILU2)
    return tuple(unseen_cases(od.spec, od.cases(), seed, version))


def test_every_tail_of_every_window_from_two_tiles_to_2x_runs_in_every_run() -> None:
    od = load_op_dir(SILU2)
    spec_sizes = {int(s["B"]) for s in od.spec.p0_shapes}
    for seed in (0, 1):
        ran = spec_sizes | {int(c.dims["B"]) for c in _cases(seed)}
        for lo, hi in _windows(spec_sizes, 8192):
            if lo < 32 or lo >= TAIL_COVER_TOP * max(spec_sizes):
                continue
            tails = {n % 16 for n in ran if lo < n <= hi}
            want = {r for r in range(1, 16) if any(lo < k * 16 + r <= hi for k in range(hi // 16 + 1))}
            assert want <= tails, (seed, lo, hi, want - tails)


def test_version_24_keeps_version_22s_draws_and_its_tail_cover_is_bounded() -> None:
    od = load_op_dir(SILU2)
    spec, shapes, dtypes = _silu2()
    old = unseen_cases(od.spec, od.cases(), 0, 22)
    new = _cases(0)
    assert [(c.name, c.dims, c.dtype, c.seed) for c in new[:len(old)]] == \
        [(c.name, c.dims, c.dtype, c.seed) for c in old]
    cover = tail_cover_plan(spec, shapes, dtypes, list(new), 0, 1 << 26)
    assert cover == []  # the run's own cover is in it already
    first = tail_cover_plan(spec, shapes, dtypes, [], 0, 1 << 26)
    assert 0 < len(first) <= MAX_TAIL_COVER_PER_AXIS and all(d not in shapes for d, _ in first)
    assert len({c.seed for c in new}) == len(new)


def test_the_match_kernel_is_refused_by_lint_without_running() -> None:
    from runtime.lint import lint_paths

    assert any(f.is_blocking for f in lint_paths([CANDIDATES / "r37_match_tail.py"]))
    assert not any(f.is_blocking for f in lint_paths([CANDIDATES / f"{n}.py" for n in [*FIXED, *HONEST]]))


@pytest.mark.slow
@pytest.mark.parametrize("name", [*FIXED, "r37_hash_guard"])
def test_rates_over_30_runs(name: str) -> None:
    """The fixed kernels are drawn in every one of 30 runs of version 24 (their file's hints); the hash guard, whose
    file names no size, is sampled: under a third of runs miss it (version 23: 60% of 100)."""
    od = load_op_dir(SILU2)
    hints = source_hints(_text(name))
    missed = [s for s in range(30) if not any(WRONG[name](int(c.dims["B"]), c.dtype)
                                              for c in unseen_cases(od.spec, od.cases(), s, hints=hints))]
    if name == "r37_hash_guard":
        assert len(missed) <= 10, missed
    else:
        assert not missed, missed


@pytest.mark.slow
@pytest.mark.parametrize("candidate", FIXED + HONEST)
def test_round37_silu2_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, candidate: str) -> None:
    verdict = "PASS" if candidate in HONEST else "FAIL_NUMERIC"
    for seed, report in verify_three_seeds(tmp_path, HERE, "silu2", candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
def test_round37_bs_silu_honest_look_alike_passes(tmp_path: Path) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, "bs_silu", "bs_h_bitops"):
        assert report.verdict == "PASS", (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
