"""Print the public names of the installed ``pypto`` as JSON (run with the real 0.2.0 wheel, or the emulator).

The inventory `test_wheel_api.py` holds the emulated module to: the top-level names, those of ``pypto.frontend`` and
``pypto.experimental``, the ``Tensor`` methods and the members of the enums with their values. Names only - no
vendor code. Regenerate: ``python tests/emulator/data/collect_wheel_names.py > tests/emulator/data/wheel_0_2_0_names.json``
with the wheel installed (``pip install -e '.[toolchain]'``).
"""

import json
import sys

import pypto

ENUMS = ("DataType", "TileOpFormat", "CastMode", "SaturationMode", "OpType", "OutType", "ReLuType", "TransMode",
         "ScatterMode", "ReduceMode", "AtomicType", "CachePolicy", "StatusType", "RunMode", "CompStage", "PassConfigKey")


def public(obj: object) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def members(e: type) -> dict[str, object]:
    out: dict[str, object] = {}
    for n in public(e):
        v = getattr(e, n)
        if n in ("name", "value") or not hasattr(v, "value") or callable(v) and not isinstance(v, e):
            continue
        out[n] = v.value if isinstance(v.value, str) else int(v.value)
    return out


json.dump({"pypto": public(pypto), "frontend": public(pypto.frontend), "experimental": public(pypto.experimental),
           "Tensor": public(pypto.Tensor), "enums": {e: members(getattr(pypto, e)) for e in ENUMS}},
          sys.stdout, indent=0, sort_keys=True)
