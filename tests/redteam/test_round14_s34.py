"""Red team rounds 14 and 15 (session 34): kernels that got PASS while wrong where a user calls them, and their controls,
verified on three seeds each (fixture ops and candidates in ``fixture_s34/``, the attacker's).

Each is a size class the drawing promised for every verification and dropped when calls or bytes ran short (unseen
drawing version 9 keeps them, ``runtime/opdir/_unseen.py``; ``tests/verify/test_unseen_v9_s34.py`` checks the
drawing itself):

- ``t1_decode_step_tail`` (tok_rms, RMSNorm on [B, S, D], 3 dtypes, B and S dynamic): an ``S == 1`` decode-step
  kernel with a ``(n + 7) // 16`` tile count - S was never 1 (version 8 kept the first 21 pairs);
- ``q1_single_request_tail`` (qk_norm, [B, H, S, D], 2 dtypes, three dynamic axes): the same bad tile count when
  ``B == 1`` - no axis was ever 1, and a size 1 with the other axes of a P0 shape (tails 13 and 0) does not show it:
  version 9 also runs size 1 with every other axis at a tail of 1;
- ``w1_bf16_block_fast_path`` (gelu_wide, [B, 8192], 3 dtypes, ~9 MiB cases): a bf16-only 128-row block path with a
  slip in the second block's offset - the fp32 fill and power of two spent the byte budget, and a bf16 power of two
  ran in 4 of 40 verifications; version 9 plans the power of two before the fill and shrinks a pair to the budget.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s34"
CASES = [("tok_rms", "t1_decode_step_tail", "FAIL_NUMERIC"), ("tok_rms", "t0_honest", "PASS"),
         ("qk_norm", "q1_single_request_tail", "FAIL_NUMERIC"), ("qk_norm", "q0_honest", "PASS"),
         ("gelu_wide", "w1_bf16_block_fast_path", "FAIL_NUMERIC"), ("gelu_wide", "w0_honest", "PASS")]
# red team round 15 (s34b), on version 9 as first written: B = S = 1 at once (a one-token path folding the row into a
# [4, 16] tile), bf16-only 256-row block paths on a SPEC twice the size (B 256 / 269: the byte budget), and a
# `rows % 64` path unrolled by 128 rows (no size of valuation 64 was drawn)
CASES += [("tok_rms", "t2_one_token_fold", "FAIL_NUMERIC"),
          ("gelu_big", "g_w2_bf16_256_block_fast_path", "FAIL_NUMERIC"),
          ("gelu_big", "g_w3_bf16_slot_offset", "FAIL_NUMERIC"), ("gelu_big", "g_w0_honest", "PASS"),
          ("gelu_wide", "w4_unroll2_align64", "FAIL_NUMERIC")]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round14_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
