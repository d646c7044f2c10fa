"""Red team round 21 (session 37): wrong kernels that got PASS on every seed, and the honest ones verify or lint
refused, verified on three seeds each (fixture ops and candidates in ``fixture_s37/``, the attacker's):

- ``sc_int_cap``: the SPEC's ``cap: 30.0`` used whenever the caller passes ``cap`` as a Python int - every value
  verification drew was a float; version 12 passes whole-number attributes as ints (``cap=50``);
- ``mul2_alias_square``: a "square" path taken when both inputs are one tensor (``len({x, r}) == 1``), written
  ``x * |x|`` - every call passed separate arrays; version 12 passes one tensor for two inputs of the same shape and
  dtype in one case per dtype;
- ``lsm_lazy_norescale``: an online softmax with a lazily rescaled running max that forgets to rescale the sum when
  the max jumps - exact on i.i.d. rows (the first chunk holds the max); version 12's special cases hold rows whose
  peak comes late over a low background;
- honest: ``mul2_honest`` (also on the aliased case: its kernel arguments differ from a same-shape case's only in
  that both are one tensor - not a cheat), ``lsm_honest``, ``sc_plain`` (a kernel cache keyed on the ``cap``
  attribute itself was refused by lint PF11) and ``sc_pad_fpad`` (rows padded with ``torch.nn.functional.pad`` in
  constant mode were refused by lint OL62 while the same padding through ``torch.cat`` passed).

Round 22 (s37b, on version 12 as first written): ints only 10-50% above the SPEC's value (``sc_int50``: a branch for
``cap >= 48``, the value the SPEC's prose names; ``sc_int_low``: one for ints up to 30) - the SPEC's own value, one
below and one far above are passed now; the aliased case on the first SPEC shape only (``mul2_alias_shape``: B !=
64) and in an offset band that held one sign only, one pair per dtype (``fma3_bc``: the second and third of three
inputs) and equal ranges only (``mulr_alias``: ``mulr(p, p)``, x in [-1, 1] and r in [0, 1]) - every group, the SPEC
shapes in turn, values of both signs where the ranges overlap; late peaks only (``lsm_rev``: the chunks walked back to
front) - early peaks and descending rows too; ``sc_objkey`` (the input under the attribute's name, ``cap, c = x,
float(cap)``) - lint follows every form of binding now.

Round 23 (s37c, accidental bugs): ``rms_decode8`` (the workspace's rms_norm with a one-row decode path guarded by
``n <= 8``: only size 1 and, rarely, a drawn tail were under 16 - 95% of verifications passed) and ``rms_block512`` (a
``n % 256 == 0`` path walking 512-row blocks, dropping an odd 256-row block: 80% passed) - version 12 draws a second
small size (2..8) in every dtype and a size of valuation 256.

The drawing itself is checked in ``tests/verify/test_unseen_v12_s37.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s37"
CASES = [("softcap", "sc_int_cap", "FAIL_NUMERIC"), ("softcap", "sc_plain", "PASS"),
         ("softcap", "sc_pad_fpad", "PASS"),
         ("mul2", "mul2_alias_square", "FAIL_NUMERIC"), ("mul2", "mul2_honest", "PASS"),
         ("lsoftmax", "lsm_lazy_norescale", "FAIL_NUMERIC"), ("lsoftmax", "lsm_honest", "PASS")]
CASES += [("softcap", "sc_int50", "FAIL_NUMERIC"), ("softcap", "sc_int_low", "FAIL_NUMERIC"),
          ("mul2", "mul2_alias_shape", "FAIL_NUMERIC"), ("fma3", "fma3_bc", "FAIL_NUMERIC"),
          ("fma3", "fma3_honest", "PASS"), ("mulr", "mulr_alias", "FAIL_NUMERIC"), ("mulr", "mulr_honest", "PASS"),
          ("lsoftmax", "lsm_rev", "FAIL_NUMERIC"), ("softcap", "sc_objkey", "FAIL_LINT")]
CASES += [("rms_norm", "rms_decode8", "FAIL_NUMERIC"), ("rms_norm", "rms_block512", "FAIL_NUMERIC"),
          ("rms_norm", "rms_honest", "PASS")]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round21_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
