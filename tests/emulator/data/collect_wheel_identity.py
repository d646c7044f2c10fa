"""Print, as JSON, what the installed ``pypto`` says about the identity of its public functions and classes.

For every top-level name and every ``Tensor`` method that is a Python function or class: its ``__module__`` and
``__qualname__`` (what ``str()``/``repr()``/``__name__`` show). The emulator gives its own objects these
(`runtime.emulator._wheel_identity`), so that a kernel cannot tell which of the two it runs on from ``str(pypto.Tensor)``
or ``pypto.min.__name__``. Names only - no vendor code. Regenerate with the wheel installed: ``python
tests/emulator/data/collect_wheel_identity.py`` and paste the output into ``IDENTITY`` there.
"""

import json
import types

import pypto


def ident(obj: object) -> list[str] | None:
    if isinstance(obj, type) or isinstance(obj, types.FunctionType):
        mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if isinstance(mod, str) and isinstance(qual, str):
            return [mod, qual]
    return None


out: dict[str, list[str]] = {}
for n in sorted(dir(pypto)):
    if not n.startswith("_") and (i := ident(getattr(pypto, n, None))) is not None:
        out[n] = i
for n in sorted(dir(pypto.Tensor)):
    if not n.startswith("_") and (i := ident(getattr(pypto.Tensor, n, None))) is not None:
        out["Tensor." + n] = i
print(json.dumps(out, indent=0, sort_keys=True))
