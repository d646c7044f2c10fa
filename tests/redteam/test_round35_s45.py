"""Red team round 35 (session 45): an attacker who has read ``_unseen.py`` picks what a run never or rarely draws.
Fixture ops ``fixture_s45/silu2`` (B dynamic, fp32 and bf16, SPEC B 64 and 77) and ``fixture_s45/bs_silu`` ([B, S, D],
B and S dynamic, three dtypes), candidates in ``fixture_s45/candidates``; each hostile one is the honest tiling plus
one path the wrapper picks by the shape or dtype, or (``r35_row_taylor``) by the values.

Rates are of ``runtime.opdir._unseen.unseen_cases`` over 200-300 seeds (no kernel runs; version 21 -> 22), verdicts of
verify on seeds 0, 11 and 12345 before the fix in brackets:

- ``s2_mid_window`` / ``s2_mid_even_tail`` (round 34, left open): 7% / 9.5% -> 0% / 0%;
- ``r35_odd_tails`` (tails 3, 5, 7 drop a row): 5.5% -> 0%;
- ``r35_below_window`` (33..63 rows, ``(n + 3) // 16``): 60% -> 0.5% [PASS on seed 11];
- ``r35_bf16_mid_window`` (bf16 only, 78..159 rows, ``(n + 2) // 16``): 10.5% -> 3.5% [PASS on seed 0];
- ``r35_tail13_off_spec`` (a tail of 13 wrong except at the SPEC's 77: the sweep's fresh tail skips the SPEC's tails):
  52.5% -> 0% [PASS on seed 11];
- ``r35_prefill_plus2`` (accidental: from 320 rows, ``(n + 2) // 16``): 14.5% -> 0%;
- ``r35_row_taylor`` (value range: rows whose largest magnitude is under 1.0 take x/2 + x^2/4, up to 2% off): no value
  band or special row has a largest magnitude between ~1% of the range and the whole range [PASS on every seed];
  version 22's cover cases draw every row at its own scale (``Case.scaled``);
- ``bs_fp16_s_mid`` (fp16 only, S 78..159): 38.5% -> 3.5% [PASS on seed 0];
- ``bs_b_mid_even_s`` (4 <= B <= 16 with S tails 10, 12, 14: a window of one axis and tails of the other):
  57.5% -> 29% [PASS on every seed] - still open, see LEFT;
- caught before and after: ``r35_upper_window`` (accidental, 160..319 rows), ``bs_joint_odd_b``, ``bs_b_big_s_tail``,
  ``bs_flat_plus9`` (accidental: B x S rows flattened, ``(n + 9) // 16``).

Evidence class (the lead's note of s44: a candidate rewriting verification evidence in its own process): what the
child sends the device is the kernel program and its argument descriptions; every argument is rebuilt from sealed
inputs, so the one route left is a program whose constants carry a host-computed answer, which only the same-shape
program comparison sees. ``r35_baked_single_calls`` bakes ``silu(x)`` into ``pypto.full`` constants for 9..15 rows -
sizes version 21's sweep and version 22's cover run once, without a partner - and runs the honest tiling elsewhere:
lint refuses it (OL62, host math), and with lint off it PASSes seed 0 (strict xfail below: open).

Left open (documented limits, strict xfails would be flaky: they are sampled): ``r35_mid_tail11`` (one tail in one
window: 86% -> 85% of runs pass), ``r35_fp32_tail_pairs`` (fp32 only, tails 2/4/6 of 32-row blocks: 30% -> 15%),
``bs_b_mid_even_s``. The honest look-alikes (other tiles on the same windows and tails, a Taylor path for rows under
0.01, a flattened B x S tiling, a batched path) PASS.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_boundary_corpus import _POLICY, _no_lint
from test_round10_s32 import verify_three_seeds

from runtime.verify import VerifySettings, verify

HERE = Path(__file__).resolve().parent / "fixture_s45"
FIXED = ["r35_below_window", "r35_bf16_mid_window", "r35_tail13_off_spec", "r35_row_taylor", "r35_odd_tails",
         "r35_prefill_plus2", "r35_upper_window"]
HONEST = ["s2_honest", "r35_h_mid_window32", "r35_h_odd_tails8", "r35_h_prefill64", "r35_h_row_taylor_tiny"]
BS_FIXED = ["bs_fp16_s_mid", "bs_joint_odd_b", "bs_flat_plus9"]
BS_HONEST = ["bs_honest", "bs_h_b_window", "bs_h_flat"]
LEFT = ["r35_mid_tail11", "r35_fp32_tail_pairs", "bs_b_mid_even_s"]


@pytest.mark.slow
@pytest.mark.parametrize("candidate", FIXED + HONEST)
def test_round35_silu2_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, candidate: str) -> None:
    verdict = "PASS" if candidate in HONEST else "FAIL_NUMERIC"
    for seed, report in verify_three_seeds(tmp_path, HERE, "silu2", candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
@pytest.mark.parametrize("candidate", BS_FIXED + BS_HONEST)
def test_round35_bs_silu_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, candidate: str) -> None:
    verdict = "PASS" if candidate in BS_HONEST else "FAIL_NUMERIC"
    for seed, report in verify_three_seeds(tmp_path, HERE, "bs_silu", candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


def _verify_seed0(tmp_path: Path, candidate: str, lint=None):
    import shutil

    work = tmp_path / "silu2"
    shutil.copytree(HERE / "silu2", work)
    impl = work / "silu2_impl.py"
    shutil.copyfile(HERE / "candidates" / f"{candidate}.py", impl)
    return verify(work, impl, settings=VerifySettings(sandbox=_POLICY, lint=lint), unseen_seed=0)


@pytest.mark.slow
def test_a_host_answer_baked_into_single_call_shapes_is_refused_by_lint(tmp_path: Path) -> None:
    assert _verify_seed0(tmp_path, "r35_baked_single_calls").verdict == "FAIL_LINT"


@pytest.mark.slow
def test_a_host_answer_baked_into_single_call_shapes_without_lint(tmp_path: Path) -> None:
    # (session 46, drawing version 23) every small single call of the sweep, the cover and the block plan gets a
    # same-shape partner (`runtime.opdir._unseen.single_partners`): the program comparison sees the baked constants
    # (open until version 22 - a strict xfail here)
    assert _verify_seed0(tmp_path, "r35_baked_single_calls", _no_lint).verdict == "FAIL_CHEAT"
