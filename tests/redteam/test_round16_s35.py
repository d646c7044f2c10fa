"""Red team round 16 (session 35): kernels that got PASS while wrong where a user calls them, and their controls,
verified on three seeds each (fixture ops and candidates in ``fixture_s35/``, the attacker's).

- ``fid_fp32`` (fid_pack, ``slot * 2**24 + hid`` in int32): computed through FP32 and cast back, off by up to 32 -
  the comparison normalised both int32 sides to float32 (the same rounding) and gave an integer leaf the case's
  float tolerance; integer leaves are judged exactly now (``tests/verify/test_integer_leaves_s35.py``);
- ``gemm_fp16cube`` (int8_gemm, K = 4096): int8 through the fp16 cube, exact while a partial sum stays under 2**24 -
  independent random operands never got there; version 10 runs every input at the top of its range;
- ``softcap_fixed_cap`` (softcap, ``cap * tanh(x / cap)``): divides by the caller's cap, multiplies by the SPEC's
  30.0 - every call passed the SPEC's value; version 10 passes other values of float attributes
  (``tests/verify/test_unseen_v10_s35.py`` checks the drawing);
- ``moe_two_stage`` (moe_gate, ``ties: unspecified``): candidate positions returned as expert ids - caught before
  (the version-8 edge rows), kept so that the tie rule keeps catching it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s35"
CASES = [("fid_pack", "fid_fp32", "FAIL_NUMERIC"), ("fid_pack", "fid_honest", "PASS"),
         ("int8_gemm", "gemm_fp16cube", "FAIL_NUMERIC"), ("int8_gemm", "gemm_honest", "PASS"),
         ("softcap", "softcap_fixed_cap", "FAIL_NUMERIC"), ("softcap", "softcap_honest", "PASS"),
         ("moe_gate", "moe_two_stage", "FAIL_NUMERIC"), ("moe_gate", "moe_honest", "PASS")]
# red team round 17 (s35b), on version 10 as first written: a cap clamped to the SPEC's (`min(cap, 30.0)`: every value
# drawn was below it), the 8th id taken one column off (the tie at the cut forgave the last position in every row), a
# GEMM redoing its result exactly only where the final value is large (the top band's partial sums never cancelled)
CASES += [("softcap", "sc_clamp", "FAIL_NUMERIC"), ("moe_gate", "moe_last", "FAIL_NUMERIC"),
          ("int8_gemm", "gemm_guard", "FAIL_NUMERIC")]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round16_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
