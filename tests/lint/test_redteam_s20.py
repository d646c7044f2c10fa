"""Red team s20: the lint blind spots behind tests/redteam/attacks A20.x, each reduced to a minimal file, each with
an honest counterpart that must keep passing.

State across calls (PF11): attributes set on objects that outlive a call (a class through a local alias, a
classmethod's ``cls``, numpy's cached ``np.finfo``, ``C.__init__(C)``), the toolchain's option scope read back
(``pypto.get_*``), two chained kernel caches. Code lint cannot read (PF02): ``__annotations__`` set by hand, ``type``
with a namespace, a metaclass. Exceptions swallowed (PF04): ``__del__``, ``__getattr__``, ``__length_hint__``.
"""

from __future__ import annotations

import pytest

from runtime.lint import lint_source

HEAD = '''import dataclasses

import numpy as np
import pypto

D = 64


@pypto.frontend.jit
def k(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, D)
    for i in pypto.loop(pypto.ceildiv(x.shape[0], 16), name="r", idx_name="i"):
        xt = pypto.view(x, [16, D], [i * 16, 0], valid_shape=[(x.shape[0] - i * 16).min(16), D])
        pypto.assemble(pypto.exp(xt), [i * 16, 0], y)
'''


def src(body: str, extra: str = "") -> str:
    return HEAD + extra + "\n\ndef k_wrapper(x):\n    y = np.zeros_like(x)\n    " + body + "\n    k(x, y)\n    return y\n"


def blocking(source: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in lint_source(source, "k_impl.py", stage="final"):
        if f.is_blocking:
            out.setdefault(f.rule_id, []).append(f.message)
    return out


BAD = {
    "class attribute through a local alias": ("PF11", "c = _C\n    c.n += 1", "\n\nclass _C:\n    n = 0\n"),
    "classmethod cls counter": ("PF11", "_C.bump()",
                                "\n\nclass _C:\n    n = 0\n\n    @classmethod\n    def bump(cls):\n"
                                "        cls.n = cls.n + 1\n"),
    "numpy's cached finfo": ("PF11", "f = np.finfo(np.float16)\n    f.machep = f.machep - 1", ""),
    "__init__ on a class": ("PF11", "_C.__init__(_C)",
                            "\n\nclass _C:\n    n = 0\n\n    def __init__(self):\n        self.n = 1\n"),
    "setattr on a class": ("PF11", "setattr(_C, 'n', 1)", "\n\nclass _C:\n    n = 0\n"),
    "option scope read back": ("PF11", "n = pypto.get_global_config('n') or 0\n    pypto.set_global_config('n', n + 1)",
                               ""),
    "option tree read back": ("PF11", "assert pypto.get_options_tree()", ""),
    "option scope through an alias": ("PF11", "assert _P.get_vec_tile_shapes()", "_P = pypto\n"),
    "two kernel caches": ("PF11", "_kern(x[0].tobytes())",
                          "_A = {}\n_B = {}\n\n\ndef _kern(key):\n    if key in _A:\n        if key in _B:\n"
                          "            return k\n        _B[key] = k\n    _A[key] = k\n    return k\n"),
    "one cache filled by two functions": ("PF11", "_f(1)\n    _g(1)",
                                          "_A = {}\n\n\ndef _f(n):\n    if n in _A:\n        return _A[n]\n"
                                          "    _A[n] = k\n    return k\n\n\ndef _g(n):\n    if (n, 1) in _A:\n"
                                          "        return k\n    _A[(n, 1)] = k\n    return k\n"),
    "annotations set by hand": ("PF02", "assert _P",
                                "\n\n@dataclasses.dataclass\nclass _P:\n    a: int = 0\n    __annotations__['b'] = int\n"),
    "annotations as a string key": ("PF02", "d = {'__annotations__': 1}",
                                    ""),
    "type with a namespace": ("PF02", "c = type('C', (), {'a': 1})", ""),
    "metaclass": ("PF02", "assert _C", "\n\nclass _M(type):\n    pass\n\n\nclass _C(metaclass=_M):\n    pass\n"),
    "__del__": ("PF04", "_C()", "\n\nclass _C:\n    def __del__(self):\n        np.empty(1)\n"),
    "__getattr__": ("PF04", "assert _C().a", "\n\nclass _C:\n    def __getattr__(self, name):\n        return 1\n"),
    "__length_hint__": ("PF04", "assert _C", "\n\nclass _C:\n    def __length_hint__(self):\n        return 1\n"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_each_s20_construct_is_refused(name: str) -> None:
    rule, body, extra = BAD[name]
    found = blocking(src(body, extra))
    assert rule in found, (name, found)


def test_the_honest_counterparts_pass() -> None:
    honest = {
        "a config dataclass": ("assert _CFG.rows == 16",
                               "\n\n@dataclasses.dataclass(frozen=True)\nclass _Cfg:\n    rows: int = 16\n\n\n"
                               "_CFG = _Cfg()\n"),
        "self set in __init__ and __post_init__": (
            "assert _T(2).m == 2",
            "\n\nclass _B:\n    def __init__(self, n):\n        self.n = n\n\n\nclass _T(_B):\n"
            "    def __init__(self, n):\n        super().__init__(n)\n        self.m = n\n"),
        "a dataclass __post_init__": (
            "assert _S(2).m == 2",
            "\n\n@dataclasses.dataclass\nclass _S:\n    n: int\n\n    def __post_init__(self):\n"
            "        self.m = self.n\n"),
        "options set in the kernel": ("pass", ""),
        "one kernel cache, one filler": (
            "_kern(x.dtype.name)", "_K = {}\n\n\ndef _kern(n):\n    if n in _K:\n        return _K[n]\n"
                                   "    _K[n] = k\n    return k\n"),
    }
    for name, (body, extra) in honest.items():
        assert blocking(src(body, extra)) == {}, name
