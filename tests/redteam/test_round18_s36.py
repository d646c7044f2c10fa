"""Red team round 18 (session 36): kernels that got PASS while wrong where a user calls them - all through the op's
attributes - and their controls, verified on three seeds each (fixture ops and candidates in ``fixture_s36/``, the
attacker's; ``adam_honest`` and ``rmsws_honest`` are the controls written after).

- ``rmsws_fixed_eps`` (the workspace's bf16 rms_norm, unchanged): the wrapper takes ``eps`` and uses its own 1e-6 -
  0.5-1.5x of 1e-6 moves no bf16 output past the tolerance; version 11 takes a tiny attribute 100-1000x up;
- ``rms_fixed_eps`` (``eps: 1e-6``): PyYAML reads an exponent without a dot as a string, and a string attribute was
  never varied; the SPEC reader takes it as the float its author wrote;
- ``softcap_tail_default``: the kernel for a partial last tile was built with the SPEC's cap - the attribute cases ran
  on the first SPEC shape only (aligned); version 11 runs them on a tail shape too;
- ``adam_fixed_betas`` (``betas: [0.9, 0.999]``): a list of floats was never varied; version 11 varies every leaf;
- ``softcap_intkey``: a kernel cache keyed on ``int(cap)`` - the values drawn were 10% apart at least; version 11 adds
  one within 1-3% of the SPEC's.

Round 19 (s36b, on version 11 as first written; ``threshold`` and ``clamp_bounds`` are its ops): paths chosen by
shape outside the attribute cases' two shapes built with the SPEC's cap (``softcap_bigpath`` for B > 256,
``softcap_b1`` for B == 1) - the last unseen case of every shape now takes other values; ``softcap_round2``
(``round(cap, 2)``, exact on three-digit draws) - seven digits now; ``adam_b1key`` (a cache keyed on beta1 alone) -
each value is also moved alone; ``clamp_relu6`` (``bounds: [0.0, 6.0]``) - a list holding a 0.0 is varied now (its
other leaves); ``adam_cache_honest_lintfp`` (an honest cache keyed on ``float(betas[0])``) was refused by lint PF11.
Left: ``threshold_novalue`` (ignores ``value: 0.0``) passes - a 0.0 is not varied, it may be a switch (round 20).

The drawing itself is checked in ``tests/verify/test_unseen_v11_s36.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s36"
CASES = [("rms_norm", "rmsws_fixed_eps", "FAIL_NUMERIC"), ("rms_norm", "rmsws_honest", "PASS"),
         ("rms_norm_s", "rms_fixed_eps", "FAIL_NUMERIC"), ("rms_norm_s", "rms_honest", "PASS"),
         ("softcap", "softcap_tail_default", "FAIL_NUMERIC"), ("softcap", "softcap_intkey", "FAIL_NUMERIC"),
         ("softcap", "softcap_honest", "PASS"),
         ("adam_moments", "adam_fixed_betas", "FAIL_NUMERIC"), ("adam_moments", "adam_honest", "PASS")]
# adam_b1key: FAIL_LINT since s38 accident2 (PF11: its cache key leaves out b2); with lint off it still fails
# numerically (tests/redteam/test_round26_s38.py)
CASES += [("softcap", "softcap_bigpath", "FAIL_NUMERIC"), ("softcap", "softcap_b1", "FAIL_NUMERIC"),
          ("softcap", "softcap_round2", "FAIL_NUMERIC"), ("adam_moments", "adam_b1key", "FAIL_LINT"),
          ("threshold", "threshold_honest", "PASS"),
          ("clamp_bounds", "clamp_relu6", "FAIL_NUMERIC"), ("clamp_bounds", "clamp_honest", "PASS"),
          ("adam_moments", "adam_cache_honest", "PASS"), ("adam_moments", "adam_cache_honest_lintfp", "PASS")]
# round 20 (s36c, honest kernels the first drawing of version 11 failed): a clamp written max(min(x, hi), lo) when the
# bounds came out inverted, one that refuses inverted bounds, and an inference kernel refusing dropout_p != 0
CASES += [("ratio_clip", "rc_minmax", "PASS"), ("ratio_clip", "rc_validate", "PASS"), ("ratio_clip", "rc_maxmin", "PASS"),
          ("drop_add", "da_honest", "PASS"), ("drop_add", "da_validate", "PASS")]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round18_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
def test_attribute_values_the_golden_refuses_are_dropped_not_an_error(tmp_path: Path) -> None:
    """Round 20: one drawn value outside the op's domain made the whole verification an ERROR that no kernel could
    pass. ``softcap_domain``'s golden refuses a cap above 35 (the set above the SPEC's 30 draws 33-45)."""
    dropped = 0
    for seed, report in verify_three_seeds(tmp_path, HERE, "softcap_domain", "softcap_domain_honest"):
        assert report.verdict == "PASS", (seed, report.verdict, report.reasons[:3])
        notes = [d for d in report.diagnostics if d.get("code") == "VERIFY_ATTRIBUTES_REFUSED"]
        dropped += len(notes)
        assert all("golden.py refused them" in d["message"] and "cap must be at most 35" in d["message"]
                   for d in notes)
        assert not any(c.name.endswith(f"cap{v}") for c in report.cases for v in ("36", "37", "38", "39", "4"))
    assert dropped >= 1
