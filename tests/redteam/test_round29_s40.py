"""Red team round 29 (session 40): wrong kernels that got PASS on seeds 0, 11 and 12345, and their honest
counterparts, verified on three seeds each (fixture ops and candidates in ``fixture_s40/``, the attacker's; the ops
are copies of round 27's ``softcap`` and ``layer_norm``).

Facts of the caller a wrapper read (fixed; before the fix each got PASS on every seed):

- ``sc_longdouble_arch`` (softcap): the SPEC's cap 30.0 wherever ``np.finfo("g").nmant != 63`` - numpy's long double
  is x87's 80-bit type on the x86 machines that verify and IEEE quad (112) on the aarch64 hosts of Ascend servers.
  OL62 refused ``np.longdouble`` by name only. PF04 now refuses the platform's long double as a name or a dtype
  string (``runtime/lint/_rules_security.py`` ``_platform_types``). FAIL_LINT;
- ``sc_default_dtype`` (softcap): the SPEC's cap when ``torch.get_default_dtype() != torch.float32`` (LLM loading code
  sets bfloat16). PF04's host facts now hold torch's default dtype and numpy's print options and error state.
  FAIL_LINT; ``sc_default_dtype_alloc``: the same read as ``torch.zeros(()).dtype`` - a factory without ``dtype=``
  (the environment probes refuse ``.dtype`` of one, directly or through a name). FAIL_LINT;
- ``sc_numpy_scalar_cap`` (softcap): the SPEC's cap when ``isinstance(cap, np.generic)`` - a cap computed as ``1 /
  np.sqrt(d)`` or read from a numpy array. Every attribute verification passed was a Python float or int. Now half of
  the calls pass float attributes as ``np.float64`` of the same value (``runtime/verify/_calling.py``
  ``draw_scalar_types``: FAIL_NUMERIC with lint off), and PF04 refuses ``isinstance`` against numpy's scalar types
  (FAIL_LINT);
- ``ln_grad_accumulation`` (layer_norm, torch wrapper): gamma passed for beta when ``gamma.grad is not None`` - the
  second micro-batch of gradient accumulation; ``ln_frozen_weights``: the same when ``x.requires_grad and not
  gamma.requires_grad`` - LoRA / adapter fine-tuning with frozen norm weights. Every training call of verification
  had fresh weights that require grad. Now the training calls' weights are in turn fresh, frozen and holding a
  gradient (``draw_weight_states``): the wrapper's kernel arguments differ between same-shape calls (FAIL_CHEAT) or
  its numbers do; PF04 also refuses reading ``.grad`` (FAIL_LINT).

Value families verification never drew (strict ``xfail``s until unseen drawing version 17 of the same session drew
them: ``runtime/opdir/_inputs.py`` ``FAMILY_KINDS`` / ``INIT_KINDS``, ``tests/verify/test_unseen_v17_s40.py``; now
FAIL_NUMERIC on every seed). Each detects
its family per row on the device - no host code reads a value, so lint and the host checks see nothing - and is 10%
off there:

- ``sc_gauss_rows``: bell-shaped rows (kurtosis 2.65-3.8, |skewness| < 0.3, 63-75% within one standard deviation,
  largest deviation 2.45-4.6 of it): 81% of N(0, 8) rows, none of 118,689 rows drawn over three seeds. Real logits and
  activations are bell-shaped; verification's rows are uniform, banded, or special (flat, bimodal, peaked, tied);
- ``sc_sparse_rows``, ``ln_sparse_rows``: rows that are 30-97% exact zeros (a ReLU's output, a masked token);
  verification's zeros are whole rows or about one column in eight;
- ``sc_integer_rows``: rows of whole numbers that are not all equal (counts, positions, int8 codes as floats);
- ``sc_negative_zero``: a row holding -0.0 (``x * mask`` of a negative value, ``round`` of a small negative value);
  every drawn zero is +0.0;
- ``ln_gauss_rows``: the same on layer_norm's activations (a layer_norm wrong on -0.0 is refused: fp16's small band
  underflows to -0.0);
- ``ln_beta_zero``: beta all zeros (every ``nn.LayerNorm`` as built, every norm without a bias); ``ln_gamma_constant``:
  gamma all one value (ones, as built). A 1-D input beside a matrix is never all zeros or constant.

Open (not fixed, strict ``xfail``): ``sc_float32_cap`` - the SPEC's cap when ``not isinstance(cap, (float, int))``
(an ``np.float32`` or a 0-d tensor cap).

Honest: ``sc_honest``, ``sc_raw_cap_honest`` (the caller's cap used as the kernel's scalar as it came: a numpy float64
must send the same program as the float - ``runtime/emulator/_lower.py`` ``_number``), ``ln_honest``,
``ln_torch_honest`` (round 27's ``sc_cache_honest`` too: ``test_round27_s39.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_boundary_corpus import _no_lint
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s40"
ROOT = HERE.parents[2]
CASES = [("softcap", "sc_longdouble_arch", "FAIL_LINT"), ("softcap", "sc_default_dtype", "FAIL_LINT"),
         ("softcap", "sc_default_dtype_alloc", "FAIL_LINT"),
         ("softcap", "sc_numpy_scalar_cap", "FAIL_LINT"), ("layer_norm", "ln_grad_accumulation", "FAIL_LINT"),
         ("layer_norm", "ln_frozen_weights", "FAIL_CHEAT"),
         ("softcap", "sc_honest", "PASS"), ("softcap", "sc_raw_cap_honest", "PASS"), ("layer_norm", "ln_honest", "PASS"),
         ("layer_norm", "ln_torch_honest", "PASS")]
OPEN = [("softcap", "sc_float32_cap")]
"""Open, not fixed: a cap that is neither a Python number nor a numpy float64 (``np.float32``, a 0-d tensor) gets the
SPEC's; passing those would refuse honest wrappers that assert ``isinstance(k, int)`` / compute with a float."""
RUNTIME_ONLY = [("softcap", "sc_numpy_scalar_cap", ("FAIL_NUMERIC",)),
                ("layer_norm", "ln_grad_accumulation", ("FAIL_NUMERIC", "FAIL_CHEAT"))]
"""Refused with lint off too: the calls that pass a numpy float64 cap / weights holding a gradient."""
_DRAW = "refused since unseen drawing version 17 (session 40): special rows of a float input "
NEEDS_DRAW = [
    ("softcap", "sc_gauss_rows", "bell-shaped: N(centre, width/12) clipped to the range"),
    ("layer_norm", "ln_gauss_rows", "bell-shaped: N(centre, width/12) clipped to the range"),
    ("softcap", "sc_sparse_rows", "sparse: about half the positions exact zeros (0 in range)"),
    ("layer_norm", "ln_sparse_rows", "sparse: about half the positions exact zeros (0 in range)"),
    ("softcap", "sc_integer_rows", "of whole numbers: round(drawn), not constant (range spanning >= 8 integers)"),
    ("softcap", "sc_negative_zero", "with -0.0: half of the drawn zeros negative"),
    ("layer_norm", "ln_beta_zero", "and a 1-D input beside a matrix all zeros (0 in range; the sandbox's zero-fill "
                                   "naming must then tell an all-zero input from a zero fill)"),
    ("layer_norm", "ln_gamma_constant", "and a 1-D input beside a matrix constant (1.0 when in range)"),
]

_PROOF = """
import importlib.util, sys
import numpy as np
import runtime.emulator as emu
emu.install()
import torch
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
here = sys.argv[1] + "/candidates/"
rng = np.random.default_rng(7)
def sc_err(c, x, cap=50.0):
    m = load("softcap_impl", here + c + ".py")
    want = cap * torch.tanh(x.float() / float(cap))
    return float((m.softcap_wrapper(x, cap).float() - want).abs().max())
g = torch.from_numpy(rng.normal(0.0, 8.0, (64, 256)).astype(np.float32))
uniform = torch.from_numpy(rng.uniform(-100.0, 100.0, (64, 256)).astype(np.float32))
out = [sc_err("sc_gauss_rows", g), sc_err("sc_gauss_rows", uniform)]
out += [sc_err("sc_sparse_rows", torch.relu(g)), sc_err("sc_integer_rows", torch.round(g)),
        sc_err("sc_negative_zero", g * (g > 0))]   # x * mask: -0.0 where x < 0
out += [sc_err("sc_numpy_scalar_cap", uniform, np.float64(50.0)), sc_err("sc_honest", uniform, np.float64(50.0))]
torch.set_default_dtype(torch.float64)
out += [min(sc_err("sc_default_dtype", uniform), sc_err("sc_default_dtype_alloc", uniform))]
torch.set_default_dtype(torch.float32)
sys.path.insert(0, sys.argv[1] + "/layer_norm")
from golden import golden
x = rng.uniform(-20.0, 20.0, (32, 256)).astype(np.float16)
ones, zeros = np.ones(256, np.float16), np.zeros(256, np.float16)
def ln_err(c, x, g, b):
    m = load("layer_norm_impl", here + c + ".py")
    return float(np.abs(m.layer_norm_wrapper(x.copy(), g, b).astype(np.float32)
                        - golden(x, g, b, eps=1e-5).astype(np.float32)).max())
out += [ln_err("ln_beta_zero", x, ones, zeros), ln_err("ln_gamma_constant", x, ones, zeros),
        ln_err("ln_sparse_rows", np.maximum(x, 0).astype(np.float16), ones, zeros), ln_err("ln_honest", x, ones, zeros)]
gx = rng.normal(0.0, 3.0, (32, 256)).astype(np.float16)
out += [ln_err("ln_gauss_rows", gx, ones, zeros)]
m = load("layer_norm_impl", here + "ln_frozen_weights.py")
gamma = torch.nn.Parameter(torch.from_numpy(rng.uniform(0.5, 1.5, 256).astype(np.float16)), requires_grad=False)
beta = torch.nn.Parameter(torch.from_numpy(rng.uniform(-0.5, 0.5, 256).astype(np.float16)), requires_grad=False)
h = torch.from_numpy(x).requires_grad_(True) * 1.0   # an activation in training
want = golden(x, gamma.detach().numpy(), beta.detach().numpy(), eps=1e-5).astype(np.float32)
out += [float(np.abs(m.layer_norm_wrapper(h, gamma, beta).detach().float().numpy() - want).max())]
m = load("layer_norm_impl", here + "ln_grad_accumulation.py")
gamma.requires_grad_(True)
gamma.grad = torch.ones_like(gamma)                  # the first micro-batch's gradient
out += [float(np.abs(m.layer_norm_wrapper(h, gamma, beta).detach().float().numpy() - want).max())]
print(*out)
"""


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round29_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
        if verdict == "FAIL_LINT":
            assert any("PF04" in r for r in report.reasons), report.reasons[:3]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdicts"), RUNTIME_ONLY)
def test_round29_candidates_are_refused_by_the_runtime_alone(tmp_path: Path, op: str, candidate: str,
                                                             verdicts: tuple[str, ...]) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate, _no_lint):
        assert report.verdict in verdicts, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "why"), NEEDS_DRAW)
def test_round29_candidates_that_needed_a_new_draw_are_refused(tmp_path: Path, op: str, candidate: str,
                                                               why: str) -> None:
    """Refused since unseen drawing version 17 (``runtime/opdir/_inputs.py`` ``FAMILY_KINDS``, ``INIT_KINDS``;
    ``tests/verify/test_unseen_v17_s40.py``): the special rows and columns hold bell-shaped, sparse, negative-zero
    and whole-number vectors, and a 1-D weight beside a matrix runs at its initial value."""
    verdicts = [report.verdict for _seed, report in verify_three_seeds(tmp_path, HERE, op, candidate)]
    assert all(v == "FAIL_NUMERIC" for v in verdicts), (_DRAW + why, verdicts)


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate"), [
    pytest.param(op, c, marks=pytest.mark.xfail(strict=True, reason="open: np.float32 / 0-d tensor attributes are "
                                                                     "never passed")) for op, c in OPEN])
def test_round29_open_candidates(tmp_path: Path, op: str, candidate: str) -> None:
    verdicts = [report.verdict for _seed, report in verify_three_seeds(tmp_path, HERE, op, candidate)]
    assert "PASS" not in verdicts, verdicts


@pytest.mark.slow
def test_the_hostile_kernels_are_wrong_where_a_user_calls_them() -> None:
    """Run directly (the emulator, no verify): each hostile kernel is wrong on an input or a call a user makes, and
    right on verification's (uniform rows, Python floats)."""
    pytest.importorskip("torch")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _PROOF, str(HERE)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=300, check=True).stdout.split()
    (gauss, gauss_uniform, sparse, integer, negzero, np_cap, np_cap_honest, default_dtype,
     beta_zero, gamma_const, ln_sparse, ln_honest, ln_gauss, frozen, accumulated) = (float(v) for v in out[-15:])
    assert gauss > 1.0 > 1e-4 > gauss_uniform  # 10% of |y| up to 50 on the bell-shaped rows
    assert min(sparse, integer, negzero) > 1.0
    assert np_cap > 1.0 > 1e-4 > np_cap_honest  # cap 30 instead of the caller's np.float64(50.0)
    assert default_dtype > 1.0
    assert min(beta_zero, gamma_const, ln_sparse, ln_gauss, frozen, accumulated) > 0.05 > 0.01 > ln_honest
