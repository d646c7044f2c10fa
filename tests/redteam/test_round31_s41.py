"""Red team round 31 (session 41): wrong kernels that got PASS on seeds 0, 11 and 12345 (verify as of session 40,
unseen drawing version 17), written by an attacker who read verify's code; mostly what a model writes by accident.
Fixture ops and candidates are in ``fixture_s41/`` (``softcap`` and ``layer_norm`` are copies of round 29's; ``rms_norm``
(with Gemma's ``unit_offset`` bool), ``group_norm`` / ``group_norm16`` (an int ``num_groups``), ``activation`` (a
string ``kind``) are new).

Fixed (each got PASS on every seed before; asserted refused on every seed with its verdict):

- ``rn_unit_offset_ignored`` (rms_norm): the wrapper takes ``unit_offset`` (its signature copies golden's) and never
  uses it; ``rn_unit_offset_bf16_only``: the offset added on the bf16 path only. A bool attribute stayed at the SPEC's
  value in every call. Unseen drawing version 18 runs each bool attribute both the wrapper and golden() take flipped
  (``runtime.opdir._unseen.flipped_bools``; a flipped set whose golden outputs change shape is not run):
  FAIL_NUMERIC;
- ``sc_cap_floor_one`` (softcap): ``max(cap, 1.0)`` "so the division cannot blow up"; ``sc_large_cap_linear``: y = x
  for a cap >= 100 ("never bites"). Attribute values were drawn 0.5-3x the SPEC's. Version 18 adds, for an attribute
  of magnitude 1 or more, a far-below set (below 1) and a far-above set (4-10x) (``_far_sets``): FAIL_NUMERIC
  (``sc_large_cap_linear`` FAIL_CHEAT: at a cap of 120-300 its y is x, "an output equal to an input where golden's is
  not");
- ``sc_row_aligned_view`` (deliberate): the SPEC's cap when ``x.storage_offset()`` is a positive multiple of 16 rows
  - a caller's ``h[k:]`` starts on a row, verification's views after any number of elements. Lint PF04 now refuses
  reading ``storage_offset`` (FAIL_LINT), and half of the view calls start on a whole row, ``2**j * odd`` rows in
  (``runtime.verify._calling.draw_layouts``): FAIL_NUMERIC with lint off.

Refused already (tried, kept as regressions): ``ln_fp16_mean`` (the mean summed in fp16), ``qz_round_half_away``
(CAST_ROUND where the op rounds halves to even: the whole-number rows make exact halves), ``sc_inplace_overwrites_input``
(the kernel writes y over the caller's x: "the wrapper modified its input"), ``sc_subclass_detach`` (a torch.Tensor
subclass whose ``detach()`` hands the verifier other bytes: a subclass is not a torch output).

Open (strict ``xfail``, reasons in ``OPEN``): ``rn_eps_floor`` (``max(eps, 1e-7)``: an eps far below the SPEC's
refused an honest rewrite of the gym's sum_lstm in a first form of version 18, so it is not drawn), ``sc_tiles_capped_256`` (rows from 4096 on unwritten: above the drawing's
4x bound), ``ln_unbiased_var`` and ``sc_bf16_truncating_cast`` (a systematic error inside the SPEC's tolerance),
``gn_groups_fixed`` and ``gn16_count_for_width`` (an int that golden uses in a reshape is never varied),
``act_kind_ignored`` (a string attribute is never varied) - these three fixed in round 32 (unseen drawing version 19,
``test_round32_s42.py``; now in ``FIXED``). Round 29's ``sc_float32_cap`` stays open
(``test_round29_s40.py``): passing an ``np.float32`` cap is safe only for a whole case at once (golden given the same
``np.float32``): in one call of a same-shape pair, or in one of a case's two repeated calls, an honest wrapper computing
``1.0 / cap`` bakes a float32-rounded constant into its kernel where the Python-float call bakes a double, and the
same-programs check calls that FAIL_CHEAT; the per-call scalar types (``draw_scalar_types``) would need a per-case
mode.

Honest: ``sc_honest``, ``rn_honest``, ``gn_honest``, ``gn16_honest``, ``act_honest``, ``qz_honest``, ``ln_honest``, and
``rs_honest_keepdim`` (``row_sum``: a ``keepdim`` bool flipped changes golden's output shape - that set was not run in
version 18; version 19 runs it against golden's shape).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_boundary_corpus import _POLICY, _no_lint
from test_round10_s32 import verify_three_seeds

from runtime.verify import VerifySettings, verify

HERE = Path(__file__).resolve().parent / "fixture_s41"
ROOT = HERE.parents[2]
FIXED = [("rms_norm", "rn_unit_offset_ignored", "FAIL_NUMERIC"), ("rms_norm", "rn_unit_offset_bf16_only", "FAIL_NUMERIC"),
         ("softcap", "sc_cap_floor_one", "FAIL_NUMERIC"), ("softcap", "sc_large_cap_linear", "FAIL_CHEAT"),
         ("softcap", "sc_row_aligned_view", "FAIL_LINT"),
         # (round 32, unseen drawing version 19: tests/redteam/test_round32_s42.py) a reshape's int and a str vary
         ("group_norm", "gn_groups_fixed", "FAIL_NUMERIC"), ("group_norm16", "gn16_count_for_width", "FAIL_NUMERIC"),
         ("activation", "act_kind_ignored", "FAIL_NUMERIC")]
REFUSED_BEFORE = [("layer_norm", "ln_fp16_mean", "FAIL_NUMERIC"), ("quantize", "qz_round_half_away", "FAIL_NUMERIC"),
                  ("softcap", "sc_inplace_overwrites_input", "FAIL_CHEAT"),
                  ("softcap", "sc_subclass_detach", "FAIL_NUMERIC")]
HONEST = [("softcap", "sc_honest"), ("rms_norm", "rn_honest"), ("group_norm", "gn_honest"),
          ("group_norm16", "gn16_honest"), ("activation", "act_honest"), ("quantize", "qz_honest"),
          ("layer_norm", "ln_honest"), ("row_sum", "rs_honest_keepdim")]
RUNTIME_ONLY = [("softcap", "sc_row_aligned_view", ("FAIL_NUMERIC", "FAIL_CHEAT"))]
"""Refused with lint off too: row-aligned view calls (``draw_layouts``) meet the calls with another cap (FAIL_NUMERIC),
or a repeated call of one case meets a row-aligned layout once (FAIL_CHEAT: same case, other outputs)."""
OPEN = [
    ("rms_norm", "rn_eps_floor", "max(eps, 1e-7): an eps far below the SPEC's is not drawn - taken to 3e-8, the gym's "
                                 "sum_lstm left an honest rewrite's fp16 tolerance (sl_h_mean_after_sum)"),
    ("softcap", "sc_tiles_capped_256", "rows from 4096 on: the unseen sizes stop at 4x the SPEC's largest (308 rows "
                                       "here) and the byte cap; the documented bound"),
    ("layer_norm", "ln_unbiased_var", "var / (D - 1): 0.2% low at D = 256, inside the fp16 tolerance - a systematic "
                                      "error no per-element tolerance sees (a bias check is a decision)"),
    ("softcap", "sc_bf16_truncating_cast", "bf16 output rounded towards zero: within one bf16 step of the golden, "
                                           "all in one direction (a bias check is a decision)"),
]

_PROOF = """
import importlib.util, sys
import numpy as np
import runtime.emulator as emu
emu.install()
import torch
here = sys.argv[1]
def load(op, c):
    spec = importlib.util.spec_from_file_location(op + "_impl", here + "/candidates/" + c + ".py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
def golden(op):
    spec = importlib.util.spec_from_file_location("golden_" + op, here + "/" + op + "/golden.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.golden
rng = np.random.default_rng(3)
def err(op, c, inputs, **attrs):
    got = getattr(load(op, c), op + "_wrapper")(*[torch.from_numpy(a.copy()) for a in inputs], **attrs)
    want = golden(op)(*inputs, **attrs)
    return float(np.abs(got.float().numpy().astype(np.float64) - want.astype(np.float64)).max())
x = rng.uniform(-100, 100, (32, 256)).astype(np.float32)
out = [err("softcap", "sc_cap_floor_one", [x], cap=0.5), err("softcap", "sc_large_cap_linear", [x], cap=100.0),
       err("softcap", "sc_honest", [x], cap=0.5)]
big = rng.uniform(-100, 100, (4100, 256)).astype(np.float32)
out += [err("softcap", "sc_tiles_capped_256", [big], cap=30.0)]
h = rng.uniform(-4, 4, (32, 256)).astype(np.float32)
w = rng.uniform(-0.5, 0.5, 256).astype(np.float32)
small = (h * 1e-4).astype(np.float32)
out += [err("rms_norm", "rn_unit_offset_ignored", [h, w], eps=1e-6, unit_offset=True),
        err("rms_norm", "rn_unit_offset_bf16_only", [h, w], eps=1e-6, unit_offset=True),
        err("rms_norm", "rn_eps_floor", [small, w], eps=1e-12, unit_offset=False),
        err("rms_norm", "rn_honest", [small, w], eps=1e-12, unit_offset=True)]
g = rng.uniform(-8, 8, (32, 256)).astype(np.float32)
out += [err("group_norm", "gn_groups_fixed", [g], num_groups=32), err("group_norm", "gn_honest", [g], num_groups=32),
        err("group_norm16", "gn16_count_for_width", [g], num_groups=8)]
out += [err("activation", "act_kind_ignored", [g], kind="gelu_tanh"), err("activation", "act_honest", [g], kind="gelu_tanh")]
# a caller's row slice: the second micro-batch of a [64, 256] batch
m = load("softcap", "sc_row_aligned_view")
batch = torch.from_numpy(x.copy()).repeat(2, 1)
second = batch[32:]
out += [float((m.softcap_wrapper(second, 50.0) - 50.0 * torch.tanh(second / 50.0)).abs().max())]
print(*out)
"""


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), FIXED + REFUSED_BEFORE + [(*h, "PASS") for h in HONEST])
def test_round31_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
        if verdict == "FAIL_LINT":
            assert any("PF04" in r and "storage_offset" in r for r in report.reasons), report.reasons[:3]


@pytest.mark.slow
def test_a_flipped_bool_that_changes_the_output_shape_runs_against_golden_s_shape(tmp_path: Path) -> None:
    """``keepdim`` flipped makes golden's output [B], not the SPEC's [B, 1]. Version 18 dropped that set with a
    diagnostic; version 19 (round 32: ``rs_keepdim_ignored``, a wrapper returning [B, 1] for ``keepdim=False``, passed
    every seed) runs it against golden's shape - the wrapper takes ``keepdim``, so it claims both values. The honest
    wrapper honouring both PASSes, with no set left out."""
    work = tmp_path / "row_sum"
    shutil.copytree(HERE / "row_sum", work)
    impl = work / "row_sum_impl.py"
    shutil.copyfile(HERE / "candidates" / "rs_honest_keepdim.py", impl)
    report = verify(work, impl, settings=VerifySettings(sandbox=_POLICY), unseen_seed=0)
    assert report.verdict == "PASS", report.reasons[:3]
    assert not any(d["code"] == "VERIFY_ATTRIBUTES_REFUSED" for d in report.diagnostics), report.diagnostics
    assert any(c.name.endswith("keepdimFalse") and c.status == "pass" for c in report.cases), \
        [(c.name, c.status) for c in report.cases if "keepdim" in c.name]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdicts"), RUNTIME_ONLY)
def test_round31_candidates_are_refused_by_the_runtime_alone(tmp_path: Path, op: str, candidate: str,
                                                             verdicts: tuple[str, ...]) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate, _no_lint):
        assert report.verdict in verdicts, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate"), [
    pytest.param(op, c, id=c, marks=pytest.mark.xfail(strict=True, reason=why)) for op, c, why in OPEN])
def test_round31_open_candidates(tmp_path: Path, op: str, candidate: str) -> None:
    verdicts = [report.verdict for _seed, report in verify_three_seeds(tmp_path, HERE, op, candidate)]
    assert "PASS" not in verdicts, verdicts


@pytest.mark.slow
def test_the_hostile_kernels_are_wrong_where_a_user_calls_them() -> None:
    """Run directly (the emulator, no verify): each hostile kernel is wrong on a call a user makes, and the honest
    control is right on the same call."""
    pytest.importorskip("torch")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _PROOF, str(HERE)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=600, check=True).stdout.split()
    (floor_one, large_cap, sc_honest, capped, offset, offset_bf16, eps_floor, rn_honest, groups, gn_honest, swapped,
     kind, act_honest, row_view) = (float(v) for v in out[-14:])
    assert floor_one > 0.4 and min(large_cap, capped, row_view) > 1.0 > 1e-4 > sc_honest  # |y| <= cap = 0.5
    assert min(offset, offset_bf16, groups, swapped, kind) > 0.05
    assert eps_floor > 1e-3 > 1e-5 > max(rn_honest, gn_honest, act_honest)
