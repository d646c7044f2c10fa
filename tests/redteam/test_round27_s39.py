"""Red team round 27 (session 39): wrong kernels that got PASS on seeds 0, 11 and 12345, and their honest
counterparts, verified on three seeds each (fixture ops and candidates in ``fixture_s39/``, the attacker's; the ops
are copies of round 16's ``moe_gate``, round 21's ``softcap`` and the workspace's ``layer_norm``).

- ``moe_tied_foreign_ids`` (moe_gate, ``ties: unspecified``): exact weights, and wherever two neighbouring picked
  probabilities are within 0.2% the first id sent back negated - an expert that does not exist, about one id in six.
  The tie rule looked only at the golden's *value* where an id departed (does it tie with another value of the
  row?), never at the id: any distinct id passed there. Fixed in ``runtime/verify/_engine.py`` ``_ties_explain``: a
  departing id must be one of the golden's ids whose value ties (directly or through a chain of near-equal values)
  with the value at its position, or - at a position tied with the row's last value - an id the golden left out
  (a tie at the cut, at most 5% of rows as before). Now FAIL_NUMERIC on every seed;
- ``sc_cache_stores_spec_cap`` (softcap): a kernel cache keyed on (dtype, cap, rows) that, on a miss, returns the
  kernel for the caller's cap and stores under the key one built with the SPEC's 30.0 - right on the first call of a
  (shape, cap), wrong on every later one with another float cap (a model calls it with its own cap every step).
  Verification calls a shape with a non-SPEC attribute value once; only its one random repeat can land there (it did
  for an int cap on one seed, so the kernel stores the right kernel for ints). PF11 looked at the cache's key and
  lookups, not at what the function hands out after storing: it now refuses, after ``T[key] = k``, binding ``k``
  again, or returning or calling another kernel than ``k`` or the cache's entry (``runtime/lint/_rules_state.py``
  ``_cache_returns_what_it_stores``; ``tests/lint/test_redteam_s39.py``). FAIL_LINT on every seed;
- ``ln_decode_one_pass`` (layer_norm): a decode branch (one token, ``B == 1``) whose one-row kernel computes the
  variance in one pass, ``E[x^2] - mean^2`` - off by 3x the tolerance on a token whose activations sit near a large
  constant. A single-row input gets only ties and the range's two ends among the special values (the other kinds
  go to rows after the first, version 13's whole-vector kinds only where the SPEC's own shapes are vectors), so a
  B == 1 row is never near-constant, zero, constant, tiny or peaked: PASS on every seed. **Needs a new draw** (the
  drawing belongs to another helper): in the size-1 cases of a dynamic axis (B == 1, every dtype), the special
  case's single row holding version 13's whole-vector kinds (``runtime.opdir._inputs.VECTOR_KINDS``: near-constant,
  peak, ascending, constant, early, descending, tiny) in turn, as ``vector_plan`` gives them to a SPEC shape that is
  one vector. Refused since drawing version 15 (``decode_vector_plan``): FAIL_NUMERIC on every seed.
- ``sc_seven_digits`` (softcap): a cap with more than seven significant digits (``50 / 3``, ``1 / math.sqrt(d)``:
  any value a program computes) is replaced by the SPEC's 30.0 - every varied attribute value is rounded to seven
  significant digits (``runtime/opdir/_unseen.py``, version 11: against s36b's ``round(cap, 2)``), so
  ``c != float(f"{c:.7g}")`` is never true in verification: PASS on every seed. **Needs a new draw**: varied float
  attributes at full float64 precision (the SPEC value times a drawn factor, unrounded; the case name can keep the
  seven digits). Lint cannot list every test of a number's digits. Refused since drawing version 15 (varied float
  attributes keep every float64 digit): FAIL_NUMERIC on every seed.
- honest: ``moe_honest`` (round 16's control), ``sc_cache_honest`` (the ``.get`` / build / store / return memo),
  ``ln_decode_honest`` (the same decode branch, two passes in both kernels).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s39"
ROOT = HERE.parents[2]
CASES = [("moe_gate", "moe_tied_foreign_ids", "FAIL_NUMERIC"), ("moe_gate", "moe_honest", "PASS"),
         ("softcap", "sc_cache_stores_spec_cap", "FAIL_LINT"), ("softcap", "sc_cache_honest", "PASS"),
         ("layer_norm", "ln_decode_honest", "PASS")]
NEEDS_DRAW = [("layer_norm", "ln_decode_one_pass"), ("softcap", "sc_seven_digits")]
"""Refused since unseen drawing version 15 (``runtime/opdir/_unseen.py``): ``decode_vector_plan`` (the size-1 case's
one row near-constant, ...) and full-precision attribute values (``_digits``)."""

_PROOF = """
import importlib.util, sys
import numpy as np
import ml_dtypes
import runtime.emulator as emu
emu.install()
import torch
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
here = sys.argv[1]
rng = np.random.default_rng(3)
m = load("moe_gate_impl", here + "/candidates/moe_tied_foreign_ids.py")
x = torch.from_numpy(rng.uniform(-4.0, 4.0, (77, 256)).astype(np.float32)).to(torch.bfloat16)
w, ids = m.moe_gate_wrapper(x)
print(int((ids.numpy() < 0).sum()))  # experts that do not exist
sc = load("softcap_impl", here + "/candidates/sc_cache_stores_spec_cap.py")
x = torch.from_numpy(rng.uniform(-100.0, 100.0, (64, 256)).astype(np.float32))
want = 50.0 * torch.tanh(x / 50.0)
first = float((sc.softcap_wrapper(x, 50.0) - want).abs().max())
second = float((sc.softcap_wrapper(x, 50.0) - want).abs().max())  # a model's next step, same shape and cap
print(first, second)
s7 = load("softcap_impl", here + "/candidates/sc_seven_digits.py")
cap = 50.0 / 3.0  # a cap a program computes: more than seven significant digits
print(float((s7.softcap_wrapper(x, cap) - cap * torch.tanh(x / cap)).abs().max()),
      float((s7.softcap_wrapper(x, 16.66667) - 16.66667 * torch.tanh(x / 16.66667)).abs().max()))
sys.path.insert(0, here + "/layer_norm")
from golden import golden
tok = (18.0 + rng.uniform(-0.04, 0.04, (1, 256))).astype(np.float16)  # one token near a large constant
g = rng.uniform(0.5, 1.5, 256).astype(np.float16)
b = rng.uniform(-0.5, 0.5, 256).astype(np.float16)
want = golden(tok, g, b, eps=1e-5).astype(np.float32)
for c in ("ln_decode_one_pass", "ln_decode_honest"):
    ln = load("layer_norm_impl", here + "/candidates/" + c + ".py")
    print(float(np.abs(ln.layer_norm_wrapper(tok.copy(), g, b).astype(np.float32) - want).max()))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round27_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
        if verdict == "FAIL_LINT":
            assert any("PF11" in r and "after storing" in r for r in report.reasons), report.reasons[:3]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate"), NEEDS_DRAW)
def test_round27_candidates_that_need_a_new_draw_are_refused(tmp_path: Path, op: str, candidate: str) -> None:
    verdicts = [report.verdict for _seed, report in verify_three_seeds(tmp_path, HERE, op, candidate)]
    assert all(v == "FAIL_NUMERIC" for v in verdicts), verdicts


@pytest.mark.slow
def test_the_hostile_kernels_are_wrong_where_a_user_calls_them() -> None:
    """Run directly (the emulator, no verify): each hostile kernel is wrong on a call a user makes."""
    pytest.importorskip("torch")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _PROOF, str(HERE)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=300, check=True).stdout.split()
    negated, first, second, computed, drawn, one_pass, two_pass = (float(v) for v in out[-7:])
    assert negated > 20  # of 616 ids
    assert first < 1e-4 < 1.0 < second  # right on the first call with cap 50, the SPEC's 30 from the second
    assert drawn < 1e-4 < 1.0 < computed  # 16.66667 (seven digits, as drawn) is right, 50 / 3 gets the SPEC's 30
    assert one_pass > 0.03 > 0.015 > two_pass  # the SPEC's fp16 atol + rtol * |y| is under 0.015 here
