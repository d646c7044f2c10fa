"""Red team round 32 (session 42): wrong kernels that got PASS on seeds 0, 11 and 12345 (verify as of session 41,
unseen drawing version 18), written by an attacker who read verify's code; mostly what a model writes by accident.
Fixture ops and candidates are in ``fixture_s42/`` (``group_norm``, ``activation``, ``softcap``, ``rms_norm``,
``row_sum`` and ``layer_norm`` are copies of round 31's; ``scale_out``, a str attribute naming the output dtype, is
new). Round 31's three open attribute holes are fixed too (``test_round31_s41.py``: ``gn_groups_fixed``,
``gn16_count_for_width`` and ``act_kind_ignored`` moved to its ``FIXED``).

Fixed (each got PASS on every seed before; asserted refused on every seed with its verdict):

- ``gn_min_width16`` (group_norm): groups merged until each is 16 channels wide ("the vector unit wants 16") - right
  up to 16 groups, wrong for torch's usual 32. An int golden() uses in a reshape never varied (round 31's open
  ``gn_groups_fixed``). Unseen drawing version 19 varies such an int ("shape": ``IntRole.reshape_only`` in
  ``runtime/opdir/_intattrs.py``) at half or a quarter, twice and four times its value (``int_values``, ``_int_sets``):
  FAIL_NUMERIC at 32 groups;
- ``gn_decode_spec_groups``, ``act_decode_silu``, ``sc_decode_cap_floor`` (``max(cap, 1.0)``), and
  ``rn_decode_offset_ignored``: a one-row decode path (``x.shape[0] == 1``) built with the SPEC's group count, the
  SPEC's silu, a cap floored at 1 or without Gemma's ``unit_offset``; the batched path right. The far and flipped
  sets (version 18) ran on the first SPEC shape and the tail shape only. Version 19 runs them, the str values and the
  reshape ints on every dynamic axis at 1 too (``runtime.opdir._unseen._ones_shape``): FAIL_NUMERIC;
- ``rs_keepdim_ignored`` (row_sum): the wrapper takes ``keepdim`` and always returns [B, 1]; version 18 dropped the
  flipped set (golden's output is [B]). Version 19 runs it against golden's shape (the wrapper takes the bool, so it
  claims both values; ``runtime.verify._engine._drop_reshaped_attributes``): FAIL_NUMERIC.

Refused already (tried, kept as regressions): ``gn_tail_plus3`` (``(n + 3) // 16`` tiles: the tail of 1),
``ln_small_batch_one_pass`` (a one-pass variance below 16 rows: the special rows of the small sizes),
``sc_reused_output_buffer`` (one output tensor per shape handed back on every call: lint PF11 and OL62),
``act_tail_silu`` (the tail tile's kernel left at its default silu: lint OL45, two kernel calls),
``sc_requires_grad_path`` (the SPEC's cap when ``x.requires_grad``: verification passes inputs that require grad -
FAIL_CHEAT, the same case giving other programs).

Open: a str value golden.py never names literally (``kind.startswith("gelu")``, a table built at run time) is not
run; round 31's ``OPEN`` (an eps floor, rows from 4096 on, a systematic error inside the tolerance) and round 29's
``sc_float32_cap`` stay as they were.

Honest: ``gn_honest``, ``act_honest``, ``act_kind_prefix`` (``startswith("gelu")``, the known-kinds check dropped:
right for every kind golden knows), ``sc_honest``, ``rn_honest``, ``rs_honest_keepdim`` (now checked on
``keepdim=False`` too), ``ln_honest``, and ``so_honest`` (``scale_out``: its ``out="half"`` set is not run - golden's
output is fp16 where the SPEC's is fp32 - with a ``VERIFY_ATTRIBUTES_REFUSED`` diagnostic per shape).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_boundary_corpus import _POLICY
from test_round10_s32 import verify_three_seeds

from runtime.verify import VerifySettings, verify

HERE = Path(__file__).resolve().parent / "fixture_s42"
ROOT = HERE.parents[2]
FIXED = [("group_norm", "gn_min_width16", "FAIL_NUMERIC"), ("group_norm", "gn_decode_spec_groups", "FAIL_NUMERIC"),
         ("activation", "act_decode_silu", "FAIL_NUMERIC"), ("softcap", "sc_decode_cap_floor", "FAIL_NUMERIC"),
         ("rms_norm", "rn_decode_offset_ignored", "FAIL_NUMERIC"), ("row_sum", "rs_keepdim_ignored", "FAIL_NUMERIC")]
REFUSED_BEFORE = [("group_norm", "gn_tail_plus3", "FAIL_NUMERIC"),
                  ("layer_norm", "ln_small_batch_one_pass", "FAIL_NUMERIC"),
                  ("softcap", "sc_reused_output_buffer", "FAIL_LINT"), ("activation", "act_tail_silu", "FAIL_LINT"),
                  ("softcap", "sc_requires_grad_path", "FAIL_CHEAT")]
HONEST = [("group_norm", "gn_honest"), ("activation", "act_honest"), ("activation", "act_kind_prefix"),
          ("softcap", "sc_honest"), ("rms_norm", "rn_honest"), ("row_sum", "rs_honest_keepdim"),
          ("layer_norm", "ln_honest"), ("scale_out", "so_honest")]
WHERE = {"gn_min_width16": "num_groups32", "gn_decode_spec_groups": "B1_", "act_decode_silu": "B1_V256-fp32-kind",
         "sc_decode_cap_floor": "B1_", "rn_decode_offset_ignored": "B1_", "rs_keepdim_ignored": "keepdimFalse"}
"""Where each fixed kernel is caught: a fragment of a failing case's name (the value or shape version 19 added)."""

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
rng = np.random.default_rng(5)
def err(op, c, inputs, **attrs):
    got = getattr(load(op, c), op + "_wrapper")(*[torch.from_numpy(a.copy()) for a in inputs], **attrs)
    want = golden(op)(*inputs, **attrs)
    if tuple(got.shape) != want.shape:
        return float("inf")
    return float(np.abs(got.float().numpy().astype(np.float64) - want.astype(np.float64)).max())
g = rng.uniform(-8, 8, (32, 256)).astype(np.float32)
one = g[:1].copy()
h = rng.uniform(-4, 4, (1, 256)).astype(np.float32)
w = rng.uniform(-0.5, 0.5, 256).astype(np.float32)
x = rng.uniform(-100, 100, (1, 256)).astype(np.float32)
out = [err("group_norm", "gn_min_width16", [g], num_groups=32),
       err("group_norm", "gn_decode_spec_groups", [one], num_groups=32),
       err("activation", "act_decode_silu", [one], kind="gelu_tanh"),
       err("softcap", "sc_decode_cap_floor", [x], cap=0.5),
       err("rms_norm", "rn_decode_offset_ignored", [h, w], eps=1e-6, unit_offset=True),
       err("row_sum", "rs_keepdim_ignored", [g], keepdim=False)]
out += [err("group_norm", "gn_honest", [g], num_groups=32), err("group_norm", "gn_honest", [one], num_groups=32),
        err("activation", "act_honest", [one], kind="gelu_tanh"), err("softcap", "sc_honest", [x], cap=0.5),
        err("rms_norm", "rn_honest", [h, w], eps=1e-6, unit_offset=True),
        err("row_sum", "rs_honest_keepdim", [g], keepdim=False)]
print(*out)
"""


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), FIXED + REFUSED_BEFORE + [(*h, "PASS") for h in HONEST])
def test_round32_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
        if candidate in WHERE:
            assert any(WHERE[candidate] in c.name and c.status != "pass" for c in report.cases), \
                (seed, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
def test_a_str_value_whose_golden_output_changes_dtype_is_not_run(tmp_path: Path) -> None:
    """``out="half"`` makes golden's output fp16 where the SPEC's is fp32: that value is left out on each shape it
    would run on, with a diagnostic, instead of judging every kernel against another dtype (version 19 checks str
    sets per shape, with golden once more at the SPEC's values beside each)."""
    work = tmp_path / "scale_out"
    shutil.copytree(HERE / "scale_out", work)
    impl = work / "scale_out_impl.py"
    shutil.copyfile(HERE / "candidates" / "so_honest.py", impl)
    report = verify(work, impl, settings=VerifySettings(sandbox=_POLICY), unseen_seed=0)
    assert report.verdict == "PASS", report.reasons[:3]
    refused = [d["message"] for d in report.diagnostics if d["code"] == "VERIFY_ATTRIBUTES_REFUSED"]
    assert len(refused) == 3 and all('"out": "half"' in m and "float16" in m for m in refused), refused
    assert not any(c.name.endswith("outhalf") for c in report.cases)


@pytest.mark.slow
def test_the_hostile_kernels_are_wrong_where_a_user_calls_them() -> None:
    """Run directly (the emulator, no verify): each fixed kernel is wrong on a call a user makes (32 groups, one
    token, a small cap, Gemma's offset, ``keepdim=False``), and the honest control is right on the same call."""
    pytest.importorskip("torch")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _PROOF, str(HERE)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=600, check=True).stdout.split()
    values = [float(v) for v in out[-12:]]
    hostile, honest = values[:6], values[6:]
    assert min(hostile) > 0.05, hostile
    assert max(honest) < 1e-4, honest
