"""Red team round 12 (session 33): kernels that got PASS while wrong where a user calls them, an honest wrapper that
got FAIL_CHEAT, and their controls, verified on three seeds each (fixture ops and candidates in ``fixture_s33/``: the
attacker's, plus ``a1`` ours).

- ``n1_one_pass_var_nchw`` (bn2d, BatchNorm2d on [B, C, H, W]): a per-channel one-pass variance ``E[x^2] - E[x]^2``;
- ``c1_no_clamp_dead_channel`` (chan_scale): a per-channel ``x / amax`` without a clamp (a dead ReLU channel is NaN) -
  version 7's special vectors ran along one axis, over all leading or over all trailing axes, never one middle axis
  against all the others (unseen drawing version 8 takes it, ``runtime/opdir/_inputs.py``);
- ``b1_log1mp_unclamped`` (bce): ``log(p)`` clamped, ``log(1 - p)`` not - p = 1.0 was drawn only when a constant row
  rounded up (15% of verifications); version 8's edge vectors hold both ends of the range exactly;
- ``a0_honest_long_on_host`` (row_argmax, honest): int32 ids from ``pypto.topk``, ``.long()`` in the wrapper to match
  ``torch.argmax`` - FAIL_CHEAT before (only a float-to-float host cast was the device's own); an exact widening is
  now (``_desc.honest_cast``). ``a1`` (ours): fp32 ids and ``.long()`` - a floor on the host - stays refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s33"
CASES = [("bn2d", "n1_one_pass_var_nchw", "FAIL_NUMERIC"), ("bn2d", "n0_honest_two_pass_nchw", "PASS"),
         ("chan_scale", "c1_no_clamp_dead_channel", "FAIL_NUMERIC"), ("chan_scale", "c0_honest_clamped_nchw", "PASS"),
         ("bce", "b1_log1mp_unclamped", "FAIL_NUMERIC"), ("bce", "b0_honest_both_clamped", "PASS"),
         ("row_argmax", "a0_honest_long_on_host", "PASS"), ("row_argmax", "a0c_cast_in_kernel", "PASS"),
         ("row_argmax", "a1_float_ids_long_on_host", "FAIL_CHEAT")]
# red team round 13 (s33b), on the version-8 fixes: binary cross-entropy on p [N] (a single vector got no range
# ends) and on [N, 1] (a one-element vector got the low end only); a one-pass variance over three RGB channels (two
# kinds of five reached a channel, drawn; the near-constant one comes first now, spread 4e-3 over a channel). The
# ResNet-sized NCHW candidate (the channel layout third in turn, out of a big SPEC's one to three columns cases) is
# covered by tests/opdir/test_opdir_middle_edges_s33.py: its verification takes minutes.
CASES += [("bce1d", "e1_no_clamp", "FAIL_NUMERIC"), ("bce1d", "e2_log1mp_unclamped", "FAIL_NUMERIC"),
          ("bce1d", "e0_honest_both_clamped", "PASS"), ("bce_col", "e2c_log1mp_unclamped", "FAIL_NUMERIC"),
          ("bce_col", "e0c_honest_both_clamped", "PASS"), ("bn2d_rgb", "rn1_one_pass_var_rgb", "FAIL_NUMERIC"),
          ("bn2d_rgb", "rn0_honest_two_pass_rgb", "PASS")]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round12_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
        if verdict == "FAIL_CHEAT":
            assert any("cast made on the host" in r for r in report.reasons), report.reasons[:3]
