"""Red team s25: lint blind spots that let a wrong or call-counting kernel get PASS from the full verifier (each
attack below PASSed ``python -m runtime.verify`` with the sandbox on before the fix, and was shown wrong outside it).

- PF11 took every name a function binds as its own: ``seen = functools.__all__; seen.append(0)`` (a library's
  module-level list through a local alias), ``def w(x, _seen=typing.__all__)`` (through a default) and an
  ``import`` inside the function kept a call counter - right for the verifier's ~35 calls, wrong from the 41st.
- PF01 allowed ``from functools import *`` / ``from torch import *``: every rule keyed on dotted names then missed
  a bare ``@lru_cache`` counter and a bare ``get_num_threads()`` tell (the sandbox runs one thread).
- PF02 read attribute nodes only: ``"{0.__globals__[sys].modules}".format(typing.cast)`` walked into the runner's
  modules inside a string (right only under verification), ``"{0.__code__.co_filename}"`` of a pypto function
  told the emulator from the wheel.
- PF04: ``x.grad_fn is not None`` (verification passed leaf tensors only), ``x.base.ndim > 2`` (its views always
  viewed a 1-D allocation), ``"WRITEABLE : False" in str(gamma.flags)`` (read-only weights from an mmap).
Each has honest counterparts that must keep passing."""

from __future__ import annotations

import pytest
from test_redteam_s20 import blocking, src

BAD = {
    "__all__ of a module through a local": ("PF11", "seen = functools.__all__\n    seen.append(1)", "import functools\n"),
    "a module's dict through a local": ("PF11", "seen = np.typecodes\n    seen['k'] = 1", ""),
    "a module's dict through a walrus": ("PF11", "(seen := np.typecodes).update(k=1)", ""),
    "a module's dict directly": ("PF11", "np.typecodes.update(k=1)", ""),
    "a module's dict through next(iter(..))": ("PF11", "seen = next(iter([np.typecodes]))\n    seen['k'] = 1", ""),
    "a module's dict through tuple unpacking": ("PF11", "seen, = (np.typecodes,)\n    seen['k'] = 1", ""),
    "a module's dict through a for loop": ("PF11", "for seen in (np.typecodes,):\n        seen['k'] = 1", ""),
    "a module's dict through a local import": ("PF11", "import numpy\n    numpy.typecodes['k'] = 1", ""),
    "a module's dict through a conditional": ("PF11", "seen = np.typecodes if x.ndim else {}\n    seen.clear()", ""),
    "a default argument": ("PF11", "", "\n\ndef _h(a, _seen=np.typecodes):\n    _seen['k'] = a\n"),
    "__all__ as a value": ("PF02", "n = len(np.__all__)", ""),
    "import * (functools)": ("PF01", "", "from functools import *\n"),
    "import * (numpy)": ("PF01", "", "from numpy import *\n"),
    "format field walking attributes": ("PF02", "t = '{0.__code__.co_filename}'.format(pypto.cast)", ""),
    "format field walking items": ("PF02", "t = '{0[a]}'.format({'a': 1})", ""),
    "format field in a nested spec": ("PF02", "t = '{0:{1.real}}'.format(1, 2)", ""),
    "format_map": ("PF02", "t = '{a}'.format_map({'a': 1})", ""),
    "str.format with the template as an argument": ("PF02", "t = str.format('{0.real}', 1)", ""),
    "format of a template held in a name": ("PF02", "tpl = '{0.real}'\n    t = tpl.format(1)", ""),
    "grad_fn": ("PF04", "assert x.grad_fn is None", ""),
    "is_leaf": ("PF04", "assert x.is_leaf", ""),
    ".base of an input": ("PF04", "assert x.base is None", ""),
    "flags as text": ("PF04", "assert 'WRITEABLE : False' not in str(x.flags)", ""),
    "flags owndata": ("PF04", "assert x.flags.owndata", ""),
    "flags['OWNDATA']": ("PF04", "assert x.flags['OWNDATA']", ""),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_red_team_s25_lint_holes_are_refused(name: str) -> None:
    rule, body, extra = BAD[name]
    found = blocking(src(body or "pass", extra))
    assert rule in found, (name, found)


def test_honest_counterparts_pass() -> None:
    honest = {
        "a fresh list through a local": ("outs = []\n    outs.append(y)", ""),
        "a fresh dict grown in a loop": ("d = {}\n    for i in range(3):\n        d[i] = i", ""),
        "a local alias of an input written": ("z = y\n    z[...] = 0", ""),
        "an array from a call with a module dtype": ("t = np.zeros(x.shape, dtype=np.float32)\n    t[...] = 1", ""),
        "a dtype default": ("pass", "\n\ndef _h(a, dt=np.float32):\n    return a.astype(dt)\n"),
        "None default filled in": ("pass", "\n\ndef _h(a, out=None):\n    if out is None:\n"
                                           "        out = np.empty_like(a)\n    out[...] = 0\n    return out\n"),
        "a pypto API call named like a mutator": ("pass", "\n\ndef _h(a, b):\n    import pypto\n"
                                                          "    return pypto.add(a, b)\n"),
        "plain format fields": ("t = '{} {name} {0:>8}'.format(1, name=2)", ""),
        "an f-string": ("t = f'{x.shape[0]:>8}'", ""),
        "contiguity flags": ("assert x.flags.c_contiguous and x.flags['C_CONTIGUOUS']", ""),
        "a file's own __all__": ("pass", "__all__ = ['k_wrapper']\n"),
        "enumerate over a parameter": ("for i, r in enumerate(zip(x, y)):\n        assert r", ""),
    }
    for name, (body, extra) in honest.items():
        assert blocking(src(body, extra)) == {}, (name, blocking(src(body, extra)))
