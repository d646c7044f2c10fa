"""Red team round 24 (session 38): wrong kernels that got PASS on every seed, and their honest counterparts, verified
on three seeds each (fixture ops and candidates in ``fixture_s38/``, the attacker's; ``mul2`` is round 21's op).

- ``vsm_lazy_norescale`` (vsoftmax, a softmax over one [V] vector of logits): s37's online softmax whose lazily
  rescaled running max forgets to rescale the sum when the max jumps - closed for rows by version 12's peaked rows,
  open for an input that *is* one vector: the special kinds went to the rows of an input, and a one-row input got
  only ties and the range's two ends; ``hsm_lazy_norescale`` (hsoftmax, the same on four [V] rows - multi-token
  prediction heads): with too few rows for every kind the rows after the first were near-constant, never peaked;
- ``vn_one_pass_var`` (vnorm, standardizing one [N] vector - a batch's advantages, a clip): the one-pass variance
  ``E[x^2] - E[x]^2``, off by 100x the tolerance on a near-constant vector that was never drawn (idem) - version 13
  gives such inputs (and each row of a few-row input) the kinds as whole vectors, one kind per vector case
  (``runtime/opdir/_unseen.py`` ``vector_plan``);
- ``mul2_restride`` (mul2): the inputs re-strided as dense rows (``x.as_strided(x.shape, (D, 1))``: "no copy") - the
  identity on the C-contiguous inputs verification passes, the wrong rows of a caller's ``qkv[:, :D]``. It reads no
  layout, so PF04's layout reads missed it; PF04 refuses re-striding calls now (``as_strided``, ``resize_``).
- honest: ``vsm_honest``, ``hsm_honest``, ``vn_honest`` (two passes), ``mul2_honest`` (``.contiguous()``).

The drawing itself is checked in ``tests/verify/test_unseen_v13_s38.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s38"
ROOT = HERE.parents[2]
CASES = [("vsoftmax", "vsm_lazy_norescale", "FAIL_NUMERIC"), ("vsoftmax", "vsm_honest", "PASS"),
         ("hsoftmax", "hsm_lazy_norescale", "FAIL_NUMERIC"), ("hsoftmax", "hsm_honest", "PASS"),
         ("vnorm", "vn_one_pass_var", "FAIL_NUMERIC"), ("vnorm", "vn_honest", "PASS"),
         ("mul2", "mul2_restride", "FAIL_LINT"), ("mul2", "mul2_honest", "PASS")]

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
here = sys.argv[1]
rng = np.random.default_rng(1)
sys.path.insert(0, here + "/vsoftmax")
from golden import golden as vsoftmax_golden
x = rng.uniform(-3.0, 3.0, 512).astype(np.float32)
x[400] = 29.0  # a late peak: the largest logit in the last chunk
vsm = load("vsoftmax_impl", here + "/candidates/vsm_lazy_norescale.py")
print(float(np.abs(vsm.vsoftmax_wrapper(torch.from_numpy(x.copy())).numpy() - vsoftmax_golden(x)).max()))
x4 = rng.uniform(-3.0, 3.0, (4, 512)).astype(np.float32)
x4[2, 300] = 29.0  # a late peak in one head's row
hsm = load("hsoftmax_impl", here + "/candidates/hsm_lazy_norescale.py")
want = np.stack([vsoftmax_golden(r) for r in x4])
print(float(np.abs(hsm.hsoftmax_wrapper(torch.from_numpy(x4.copy())).numpy() - want).max()))
sys.path[0] = here + "/vnorm"
del sys.modules["golden"]
from golden import golden as vnorm_golden
x = (18.0 + rng.uniform(-0.04, 0.04, 1000)).astype(np.float32)  # near-constant advantages
vn = load("vnorm_impl", here + "/candidates/vn_one_pass_var.py")
print(float(np.abs(vn.vnorm_wrapper(torch.from_numpy(x.copy())).numpy() - vnorm_golden(x)).max()))
h = torch.from_numpy(rng.uniform(-1.0, 1.0, (64, 768)).astype(np.float32))
q, k = h[:, :256], h[:, 256:512]  # a caller's chunks of a fused projection: row stride 768
m2 = load("mul2_impl", here + "/candidates/mul2_restride.py")
print(float((m2.mul2_wrapper(q, k) - q * k).abs().max()))
print(float((m2.mul2_wrapper(q.contiguous(), k.contiguous()) - q * k).abs().max()))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round24_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
        if verdict == "FAIL_LINT":
            assert any("PF04" in r and "strides of its own" in r for r in report.reasons), report.reasons[:3]


@pytest.mark.slow
def test_the_hostile_kernels_are_wrong_where_a_user_calls_them() -> None:
    """Run directly (the emulator, no verify): each is wrong on the input the drawing never made, and the re-strided
    mul2 is right on contiguous inputs - the only ones verification passes."""
    pytest.importorskip("torch")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _PROOF, str(HERE)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=300, check=True).stdout.split()
    late_peak, late_peak_rows, near_constant, chunks, contiguous = (float(v) for v in out[-5:])
    assert late_peak > 0.5 and late_peak_rows > 0.5  # the softmax of the peak: ~0.01 instead of ~1
    assert near_constant > 1e-3  # 10x the SPEC's atol + rtol
    assert chunks > 0.5 and contiguous == 0.0
