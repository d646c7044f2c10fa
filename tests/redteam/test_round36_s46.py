"""Red team round 36 (session 46): block paths, another axis's tails, and state across calls.

Fixture ops ``fixture_s46/silu2`` and ``fixture_s46/bs_silu`` (round 35's, copied), candidates in
``fixture_s46/candidates``. Kinds no earlier round had, written as an attacker who has read ``_unseen.py`` and as the
accidents a model writes:

- ``r36_prefill_blk64_plus60`` (accidental): from 128 rows, 64-row blocks counted ``(n + 60) // 64``;
- ``r36_blk48_plus40`` (accidental): from 96 rows, 48-row blocks (three tiles) counted ``(n + 40) // 48``;
- ``r36_fp32_blk128_tail``: fp32 only, 128-row blocks dropping a row when ``n % 128`` is 97..111;
- ``r36_pair_odd_tile`` (accidental): tiles in pairs; a leftover tile with a tail of 4 or 5 loses a row;
- ``bs_fp16_b_tail``: fp16 only, B over a tile with a tail of 9..14 skips the last batch row;
- ``bs_s_mid_b_tail``: S in 78..154 with B tails 3 or 5 (B over a tile);
- ``bs_same_tails``: B and S over a tile with the same tail;
- state across calls: ``r36_tile_count_cache`` (accidental: a kernel cache keyed by the tile count, holding the first
  row count), ``r36_call_count_bomb`` (wrong after 400 calls, a mutable default), ``r36_rng_flaky`` (one call in 50
  by torch's global generator).

Rates are of ``runtime.opdir._unseen.unseen_cases`` over 100-200 seeds (no kernel runs); verdicts of verify on
seeds 0, 11 and 12345 (docs/verification.md, "Version 23"). Version 22 gave PASS in 5 of these 21 verifications of the
seven hostile ones (``r36_blk48_plus40`` seed 0, ``r36_fp32_blk128_tail`` 11, ``bs_s_mid_b_tail`` 11 and 12345,
``bs_same_tails`` 12345); version 23 in 1 (``bs_s_mid_b_tail`` seed 11: its guard is two axes' window and tails, 21%
of runs). Version 23's hint plan reads the file's own bounds and residues, so round 35's left-open
``r35_mid_tail11`` (85% of version 22's runs) and ``r35_fp32_tail_pairs`` (15.5%) are refused on every seed too.
The state kernels are lint's (PF11, OL45): refused with lint on; with lint off verify refuses the tile-count cache
and the random path, and the call counter (wrong from call 401) passes - measured, not pinned.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_boundary_corpus import _POLICY
from test_round10_s32 import verify_three_seeds

from runtime.verify import VerifySettings, verify

HERE = Path(__file__).resolve().parent / "fixture_s46"
FIXED = ["r36_prefill_blk64_plus60", "r36_blk48_plus40", "r36_fp32_blk128_tail", "r36_pair_odd_tile"]
ROUND35_NOW_FIXED = ["r35_mid_tail11", "r35_fp32_tail_pairs"]
"""Round 35's left-open kernels (``fixture_s45``), refused since version 23's hint plan."""
HONEST = ["r36_h_blk64", "r36_h_blk48", "r36_h_blk128_fp32"]
BS_FIXED = ["bs_fp16_b_tail"]
BS_HONEST = ["bs_h_big_b"]
STATE = ["r36_tile_count_cache", "r36_call_count_bomb", "r36_rng_flaky"]


@pytest.mark.slow
@pytest.mark.parametrize("candidate", FIXED + HONEST)
def test_round36_silu2_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, candidate: str) -> None:
    verdict = "PASS" if candidate in HONEST else "FAIL_NUMERIC"
    for seed, report in verify_three_seeds(tmp_path, HERE, "silu2", candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
@pytest.mark.parametrize("candidate", ROUND35_NOW_FIXED)
def test_round35_left_open_kernels_are_refused_on_three_seeds(tmp_path: Path, candidate: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE.parent / "fixture_s45", "silu2", candidate):
        assert report.verdict == "FAIL_NUMERIC", (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
@pytest.mark.parametrize("candidate", BS_FIXED + BS_HONEST)
def test_round36_bs_silu_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, candidate: str) -> None:
    verdict = "PASS" if candidate in BS_HONEST else "FAIL_NUMERIC"
    for seed, report in verify_three_seeds(tmp_path, HERE, "bs_silu", candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
@pytest.mark.parametrize("candidate", STATE)
def test_round36_state_across_calls_is_refused_by_lint(tmp_path: Path, candidate: str) -> None:
    work = tmp_path / "silu2"
    shutil.copytree(HERE / "silu2", work)
    impl = work / "silu2_impl.py"
    shutil.copyfile(HERE / "candidates" / f"{candidate}.py", impl)
    assert verify(work, impl, settings=VerifySettings(sandbox=_POLICY), unseen_seed=0).verdict == "FAIL_LINT"


def test_round36_state_kernels_are_refused_by_lint_without_running() -> None:
    """The fast-tier half of the above: lint alone (no kernel runs) blocks each state-across-calls candidate."""
    from runtime.lint import lint_paths

    for candidate in STATE:
        findings = lint_paths([HERE / "candidates" / f"{candidate}.py"])
        assert any(f.is_blocking for f in findings), candidate
    assert not any(f.is_blocking for f in lint_paths([HERE / "candidates" / "r36_h_blk64.py"]))

