"""A sixth gym corpus (s36, written blind: 6 of 18 named; ``bench/bisect_gym_corpus.md``) - the two rules it led to
that need no run.

- ``call_sites``: sum_lstm defines its jit kernel inside a factory (``def sum_lstm(run_mode): @jit def kernel``); the
  factory was taken for a helper, no call was visited, and a helper op never got the call site that made it - the
  helper's arguments swapped at the call (``h_out, c_out``) was blamed inside the helper;
- ``_scalar._constant``: only elements above ``atol`` carried the constant; Adam's second moment is ~1e-6 against
  atol 1e-4, so a wrapper's bias correction ``beta2 ** (step + 1)`` was never traced to its line."""

from __future__ import annotations

import numpy as np

from runtime.bisect._claims import call_sites
from runtime.bisect._records import Rec
from runtime.bisect._scalar import _constant

FACTORY = '''\
import pypto


def compute(x, out):
    t = pypto.exp(x)
    pypto.assemble(t, [0, 0], out)


def make(run_mode="npu"):
    @pypto.frontend.jit(runtime_options={"run_mode": run_mode})
    def kernel(x, out):
        compute(x, out)
    return kernel
'''


def test_a_kernel_defined_inside_a_factory_gives_its_helper_ops_their_call_site() -> None:
    rec = Rec(seq=3, node=None, op="exp", file="k.py", line=5, iteration={})
    assert call_sites(FACTORY, "k.py", [rec]) == {3: 12}


def test_a_constant_is_found_on_values_all_under_atol() -> None:
    x = np.random.default_rng(0).uniform(1e-7, 2e-6, 256)
    c = 0.999 ** 3
    assert _constant("div", x, x / c, atol=1e-4, rtol=1e-4) is not None
    assert abs(_constant("div", x, x / c, atol=1e-4, rtol=1e-4) - c) < 1e-9
    # another constant does not fit at that scale (before, any constant "fit" values 100x under atol)
    assert _constant("div", x, np.where(np.arange(256) % 2 == 0, x / c, x / 0.5), atol=1e-4, rtol=1e-4) is None
