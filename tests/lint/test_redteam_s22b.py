"""Red team s22b: lint blind spots that let a wrong GELU pass every verification (the attack kernels are
``tests/verify/kernels/s22b_*.py``; each PASSed on seeds 0, 1, 2 with the production lint before the fix).

- PF02: modules re-exported by an allowed module's namespace. ``pypto.config.enum.bltns`` is ``builtins`` (the
  ``enum`` module imports it under that name; the wheel's namespace holds ``pypto.config.enum``), so
  ``bltns.eval(...)``/``bltns.getattr(...)`` ran code lint never read (the sandbox's PID, ``sys.modules``: right only
  under verification). ``typing.functools``, ``dataclasses.functools`` and ``pypto.re.functools`` reached
  ``lru_cache`` past PF11's memoizing-decorator rule (a cached list counted the calls: wrong from the 41st).
- PF11: a lambda in a def's default argument (``def w(x, _log=lambda seen=[]: seen)``) is made once, with the def;
  its own mutable default was never checked, and kept a call counter.
Each has honest counterparts that must keep passing."""

from __future__ import annotations

import dataclasses
import types
from pathlib import Path

import pytest
from test_redteam_s20 import blocking, src

from runtime.lint import lint_source
from runtime.lint._rules_security import _PYPTO_FOREIGN

KERNELS = Path(__file__).resolve().parents[1] / "verify" / "kernels"

ATTACKS = {
    "s22b_lambda_default_counter.py": "PF11",
    "s22b_typing_lru_cache_counter.py": "PF02",
    "s22b_pypto_re_functools_cache.py": "PF02",
    "s22b_bltns_eval_pid_tell.py": "PF02",
    "s22b_bltns_getattr_modules_tell.py": "PF02",
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_attack_kernels_fail_lint(name: str) -> None:
    found = {f.rule_id for f in lint_source((KERNELS / name).read_text(), "gelu_impl.py", stage="final")
             if f.is_blocking}
    assert ATTACKS[name] in found, (name, found)


BAD = {
    "builtins through pypto.config.enum": ("n = pypto.config.enum.bltns.eval('1')", ""),
    "builtins alias, getattr": ("b = pypto.config.enum.bltns\n    n = b.getattr(x, 'shape')", ""),
    "functools through typing": ("assert _h(1)", "import typing\n\n\n@typing.functools.lru_cache(maxsize=None)\n"
                                 "def _h(a):\n    return a\n"),
    "functools through dataclasses": ("assert _h(1)", "\n\n@dataclasses.functools.lru_cache(maxsize=None)\n"
                                      "def _h(a):\n    return a\n"),
    "functools through pypto.re": ("assert _h(1)", "\n\n@pypto.re.functools.cache\ndef _h(a):\n    return a\n"),
    "from typing import functools": ("assert functools", "from typing import functools\n"),
    "types through typing": ("s = typing.types.SimpleNamespace()", "import typing\n"),
    "pypto.struct": ("n = pypto.struct.pack('f', 1.0)", ""),
    "lambda default of a def's default": ("seen = _log()\n    seen.append(1)", "\n\ndef _unused(_log=lambda s=[]: s):\n"
                                          "    return _log\n"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_reexported_modules_and_lambda_defaults_are_refused(name: str) -> None:
    if name == "functools through dataclasses" and not hasattr(dataclasses, "functools"):
        # lint reads the re-exports of the interpreter that also runs the candidate
        pytest.skip("this Python's dataclasses does not import functools (3.13 on): the attack is an AttributeError")
    body, extra = BAD[name]
    assert blocking(src(body, extra)), name


def test_honest_counterparts_pass() -> None:
    honest = {
        "functools.reduce by its own name": ("n = functools.reduce(max, [1, 2])", "import functools\n"),
        "typing names": ("n: typing.Optional[int] = None", "import typing\n"),
        "a dataclass field": ("assert _C().rows == 16", "\n\n@dataclasses.dataclass(frozen=True)\nclass _C:\n"
                                                      "    rows: int = dataclasses.field(default=16)\n"),
        "a lambda with a constant default": ("f = lambda a, b=2: (a, b)\n    assert f(1)", ""),
        "a lambda default with a constant default": ("assert _h()", "\n\ndef _h(g=lambda r=16: r):\n    return g()\n"),
        "pypto API": ("assert pypto.DT_FP32 is not None", ""),
    }
    for name, (body, extra) in honest.items():
        assert blocking(src(body, extra)) == {}, name


def test_the_foreign_list_is_the_emulated_namespace() -> None:
    import runtime.emulator as emu
    from runtime.emulator import API_SURFACE

    emu.install()
    import pypto

    foreign = set()
    for name in API_SURFACE:
        obj: object = pypto
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if isinstance(obj, types.ModuleType) and not obj.__name__.startswith("pypto"):
            foreign.add(name)
    assert foreign <= _PYPTO_FOREIGN, sorted(foreign - _PYPTO_FOREIGN)
