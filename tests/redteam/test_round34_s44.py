"""Red team round 34 (session 44): row tilings wrong only on a size class the unseen cases ran rarely or in one dtype.
Fixture op ``fixture_s44/silu2`` (y = x * sigmoid(x), B dynamic, fp32 and bf16, SPEC B 64 and 77) and its candidates.

Each hostile kernel is the honest one (``s2_honest``) plus one path the wrapper picks by the row count, wrong on:

- ``s2_partial_tile8``: 9..15 rows (a decode path written for at most 8) - passed 90% of version 20's runs;
- ``s2_two_tiles_off1``: 18..31 rows (the second tile's valid rows n - 17) - 77%;
- ``s2_bf16_small2`` / ``s2_fp32_small2``: 2..8 rows in one dtype - 46% / 50%;
- ``s2_bf16_tile_minus1``: a tail of 15 in bf16 - 45%;
- ``s2_bf16_a32`` / ``s2_bf16_a64_unroll`` / ``s2_fp32_aligned_pair``: odd multiples of 32 / 64 / 16 (n >= 32) in one
  dtype - 46% / 52% / 58%;
- ``s2_a256_half``: odd multiples of 256 above 256 (``n % 512 == 256`` walking 512-row blocks) - every run: the 2-adic
  sizes stopped at 4x the SPEC's 77 rows;
- sampled, left open (within the documented limit of a run's random tails): ``s2_mid_window`` (78..159 rows, tails
  1..13: 15% -> 8%), ``s2_bf16_big_tail`` (bf16 above 154 rows, tails 2..12: 28% -> 8%), ``s2_mid_even_tail`` (tails
  10, 12, 14: 30% -> 6%). The rates are of ``runtime.opdir._unseen.unseen_cases`` over 300 seeds (no kernel runs:
  ``tests/verify/test_unseen_v21_s44.py`` asserts the nine are drawn in every one of 40 seeds).

Version 21 of the unseen drawing (``sweep_plan``) closes the nine; the honest look-alikes (a decode path in 8-row
views, a bf16 64-row block path, a tile plus a partial one, a 256-row block path) PASS.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s44"
FIXED = ["s2_partial_tile8", "s2_two_tiles_off1", "s2_bf16_small2", "s2_fp32_small2", "s2_bf16_tile_minus1",
         "s2_bf16_a32", "s2_bf16_a64_unroll", "s2_fp32_aligned_pair", "s2_a256_half"]
HONEST = ["s2_honest", "s2_h_decode8_loop", "s2_h_bf16_step64", "s2_h_two_tiles", "s2_h_blk256"]


@pytest.mark.slow
@pytest.mark.parametrize("candidate", FIXED + HONEST)
def test_round34_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, candidate: str) -> None:
    verdict = "PASS" if candidate in HONEST else "FAIL_NUMERIC"
    for seed, report in verify_three_seeds(tmp_path, HERE, "silu2", candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
