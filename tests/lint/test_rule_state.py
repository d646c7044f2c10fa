"""PF11: no state across calls (held-out attack A4). Each way to remember a call is refused; honest patterns pass.

The class, not one candidate: a wrapper that can count its calls can be right for the verifier's calls and wrong
after, so every place a value can outlive a call is a case here (module globals, ``global``/``nonlocal``,
function and class attributes, mutable defaults, closures, iterators, generators, caches, library-global state).
"""

from __future__ import annotations

import pytest

from runtime.lint import lint_source

HEAD = '''import functools
from dataclasses import dataclass

import numpy as np
import pypto

D = 64


@pypto.frontend.jit
def k(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, D)
    for i in pypto.loop(pypto.ceildiv(x.shape[0], 16), name="r", idx_name="i", unroll_list=UNROLL):
        xt = pypto.view(x, [16, D], [i * 16, 0], valid_shape=[(x.shape[0] - i * 16).min(16), D])
        pypto.assemble(pypto.exp(xt), [i * 16, 0], y)


UNROLL = [1]
'''

WRAPPER = '''

def k_wrapper(x):
    y = np.empty_like(x)
    BODY
    k(x, y)
    return y
'''


def pf11(source: str) -> list[str]:
    return [f.message for f in lint_source(source, "k_impl.py", stage="final")
            if f.rule_id == "PF11" and f.status != "PASS"]


def src(body: str = "pass", extra: str = "") -> str:
    return HEAD + extra + WRAPPER.replace("BODY", body)


BAD = {
    "module list appended": ("_SEEN.append(1)", "_SEEN = []\n"),
    "module dict setdefault": ("_C.setdefault('n', 0)", "_C = {}\n"),
    "module dict item written": ("_C['n'] = len(x)", "_C = {}\n"),
    "global counter": ("global _N\n    _N = len(x)", "_N = 0\n"),
    "module array written": ("_BUF[0] = 1", "_BUF = np.zeros(1)\n"),
    "module array through copyto": ("np.copyto(_BUF, x[:1, :1])", "_BUF = np.zeros((1, 1), np.float32)\n"),
    "module array as out=": ("np.add(x[:1, :1], 0, out=_BUF)", "_BUF = np.zeros((1, 1), np.float32)\n"),
    "iterator made at import": ("next(_IT, None)", "_IT = iter(range(100))\n"),
    "generator made at import": ("_R.integers(0, 2)", "_R = np.random.default_rng(0)\n"),
    "legacy numpy random state": ("np.random.rand()", ""),
    "torch seed state": ("torch.manual_seed(1)", "import torch\n"),
    "function attribute written in the call": ("k_wrapper.n = len(x)", ""),
    "function attribute set at import": ("pass", "def _f():\n    pass\n\n\n_f.calls = []\n"),
    "jit object's internals read": ("assert k.cache is not None", ""),
    "class attribute counter": ("_Count.n += 1", "class _Count:\n    n = 0\n\n\n"),
    "class attribute list": ("pass", "class _Hits:\n    seen = []\n\n\n"),
    "type(self) attribute": ("_Obj().tick()", "class _Obj:\n    def tick(self):\n        type(self).n = 1\n\n\n"),
    "instance made at import": ("_S.tick()", "class _St:\n    def tick(self):\n        pass\n\n\n_S = _St()\n"),
    "table aliased then changed": ("t = _T\n    t.append(1)", "_T = [1]\n"),
    "table passed to a helper": ("_grow(_T)", "_T = [1]\n\n\ndef _grow(t):\n    t.append(1)\n\n\n"),
    "kernel cache sized": ("assert len(_KERNELS) < 9",
                           "_KERNELS = {}\n\n\ndef _kern(n):\n    if n not in _KERNELS:\n        _KERNELS[n] = k\n"
                           "    return _KERNELS[n]\n\n\n"),
    # session 16's c17: the cache probed with keys other than the one stored counts the shapes seen
    "kernel cache probed with other keys": (
        "_kern(x.dtype.name, x.shape[0])",
        "_KERNELS = {}\n\n\ndef _kern(n, r):\n    if (n, r) in _KERNELS:\n        return _KERNELS[(n, r)]\n"
        "    late = sum(1 for q in range(4096) if (n, q) in _KERNELS) >= 12\n    _KERNELS[(n, r)] = k\n"
        "    return k if late else k\n\n\n"),
    "kernel cache probed in a loop": (
        "_kern(x.dtype.name)",
        "_KERNELS = {}\n\n\ndef _kern(n):\n    seen = 0\n    for _ in range(3):\n        seen += n in _KERNELS\n"
        "    _KERNELS[n] = k\n    return k\n\n\n"),
    "kernel cache key rebound between probes": (
        "_kern(x.dtype.name)",
        "_KERNELS = {}\n\n\ndef _kern(n):\n    key = (n, 1)\n    a = key in _KERNELS\n    key = (n, 2)\n"
        "    b = key in _KERNELS\n    _KERNELS[key] = k\n    return k if a or b else k\n\n\n"),
    "kernel cache looked up where it is not filled": (
        "assert ('float32', 7) not in _KERNELS\n    _kern(x.dtype.name)",
        "_KERNELS = {}\n\n\ndef _kern(n):\n    if n in _KERNELS:\n        return _KERNELS[n]\n"
        "    _KERNELS[n] = k\n    return k\n\n\n"),
    "memoizing decorator": ("_shape(1)", "@functools.lru_cache(maxsize=None)\ndef _shape(n):\n    return n\n\n\n"),
    "functools.cache": ("_shape(1)", "@functools.cache\ndef _shape(n):\n    return n\n\n\n"),
    "partial made at import": ("_P()", "_P = functools.partial(print, 1)\n"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_each_way_to_keep_state_is_refused(name: str) -> None:
    body, extra = BAD[name]
    assert pf11(src(body, extra)), name


def test_mutable_default_arguments_are_refused() -> None:
    for default in ("[]", "{}", "set()", "np.zeros(1)", "[0]"):
        source = src().replace("def k_wrapper(x):", f"def k_wrapper(x, _s={default}):")
        assert any("default argument" in m for m in pf11(source)), default
    assert pf11(src().replace("def k_wrapper(x):", "def k_wrapper(x, _s=(), _t=None, _d=D * 2):")) == []


def test_closures_over_mutated_cells_are_refused() -> None:
    factory = '''

def _make():
    calls = []

    def w(x):
        calls.append(1)
        y = np.empty_like(x)
        k(x, y)
        return y

    return w


k_wrapper = _make()
'''
    found = pf11(HEAD + factory)
    assert any("calls.append" in m for m in found) and any("module-level `k_wrapper`" in m for m in found)
    nonlocal_counter = factory.replace("calls = []", "calls = 0").replace("calls.append(1)",
                                                                         "nonlocal calls\n        calls = 1")
    assert any("nonlocal calls" in m for m in pf11(HEAD + nonlocal_counter))


def test_a_module_level_lambda_cannot_write_module_state() -> None:
    assert pf11(src("_bump(1)", "_SEEN = []\n_bump = lambda v: _SEEN.append(v)\n"))


def test_honest_state_free_patterns_pass() -> None:
    honest = {
        "kernel table dispatch": ("assert x.dtype.name in _KERNELS\n    _KERNELS[x.dtype.name]",
                                  "_KERNELS = {'float32': k}\n"),
        "kernel cache per dtype": ("_kern(x.dtype.name)",
                                   "_KERNELS = {}\n\n\ndef _kern(n):\n    if n in _KERNELS:\n        return _KERNELS[n]\n"
                                   "    _KERNELS[n] = k\n    return k\n\n\n"),
        "kernel cache per dtype and row count, key in a variable": (
            "_kern(x.dtype.name, x.shape[0])",
            "_KERNELS = {}\n\n\ndef _kern(n, r):\n    key = (n, r)\n    hit = _KERNELS.get(key)\n"
            "    if hit is not None:\n        return hit\n    _KERNELS[key] = k\n    return k\n\n\n"),
        "frozen config dataclass": ("assert _CFG.rows == 16",
                                    "@dataclass(frozen=True)\nclass _Cfg:\n    rows: int = 16\n\n\n_CFG = _Cfg()\n"),
        "table passed to the API": ("np.zeros(_SHAPE)", "_SHAPE = [1, D]\n"),
        "table read by len and iteration": ("assert len(_T) == sum(1 for _ in _T)", "_T = (1, 2)\n"),
        "constants and dtypes": ("assert x.dtype == _DT and _B", "_DT = np.float32\n_B = pypto.frontend.dynamic('B')\n"),
        "local containers": ("acc = []\n    acc.append(x.shape[0])\n    acc.sort()", ""),
        "local generator": ("np.random.default_rng(0).integers(0, 2)", ""),
    }
    for name, (body, extra) in honest.items():
        assert pf11(src(body, extra)) == [], name


def test_the_rule_leaves_the_fixture_kernels_alone() -> None:
    assert pf11(src()) == []


def test_a_module_object_no_function_reads_is_not_state() -> None:
    """Vendor code makes objects at import that nothing calls into (gym: a build directory from the environment);
    they cannot carry a call's state. One that wraps a function of the file may be the entry point: refused."""
    assert pf11(src(extra="_BUILD = np.dtype('f4').str.upper()\n_DIR = np.zeros(3).sum()\n")) == []
    assert pf11(src(extra="_ENTRY = functools.partial(k_wrapper)\n"))
