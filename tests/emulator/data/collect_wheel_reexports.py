"""Print, as Python, the names each submodule of the installed ``pypto`` shares with the top level.

A wheel module holds more than the functions it defines: ``pypto.enum`` re-exports ``DataType`` and the ``DT_*``
constants of the C++ extension, ``pypto.tensor`` the enums and ``SymbolicScalar`` ... A script may import any of
them from there (``from pypto.enum import DataType, DT_FP32``). The emulator's stand-ins for those modules hold the
root's objects of these names (`runtime.emulator._module.wheel_aliases`). Names only - no vendor code. Regenerate
with the wheel installed: ``python tests/emulator/data/collect_wheel_reexports.py`` and paste the output into
``REEXPORTS`` in `runtime.emulator._wheel_identity`.
"""

import sys
import types

import pypto

LIBRARY = ("typing", "dataclasses", "functools", "collections.abc")  # not the wheel's names

for name in sorted(k for k in sys.modules if k.startswith("pypto.") and k != "pypto.pypto_impl"
                   and not k.startswith("pypto.frontend")):
    mod = sys.modules[name]
    same = sorted(n for n, v in vars(mod).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)
                  and getattr(pypto, n, None) is v and getattr(v, "__module__", "") not in LIBRARY)
    if same:
        print(f"    {name!r}: {' '.join(same)!r},".replace("'", '"'))
