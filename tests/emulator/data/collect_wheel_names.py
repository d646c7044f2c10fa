"""Print the public names of the installed ``pypto`` as JSON (run with the real 0.2.0 wheel, or the emulator).

The inventory `test_wheel_api.py` holds the emulated module to: the top-level names, those of ``pypto.frontend`` and
``pypto.experimental``, the ``Tensor`` methods, the members of the enums with their values, and of every function
and method the parameters a call must give and how many it may give by position. Names only - no vendor code. Regenerate: ``python tests/emulator/data/collect_wheel_names.py > tests/emulator/data/wheel_0_2_0_names.json``
with the wheel installed (``pip install -e '.[toolchain]'``).
"""

import inspect
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


def signature(f: object, method: bool) -> dict[str, object] | None:
    """The parameters a call must give, and how many it may give by position (None: any number)."""
    try:
        params = list(inspect.signature(f).parameters.values())  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if method and params:
        params = params[1:]
    if any(p.kind is p.VAR_KEYWORD for p in params) and any(p.kind is p.VAR_POSITIONAL for p in params):
        return None  # a forwarding wrapper says nothing
    positional = (p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return {"required": [p.name for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL,
                                                                                          p.VAR_KEYWORD)],
            "positional": None if any(p.kind is p.VAR_POSITIONAL for p in params) else len(list(positional))}


def signatures() -> dict[str, object]:
    out: dict[str, object] = {}
    for owner, prefix in ((pypto, ""), (pypto.Tensor, "Tensor.")):
        for n in public(owner):
            f = getattr(owner, n, None)  # None: pypto.torch where torch is not installed (the emulator's case)
            if callable(f) and not isinstance(f, type) and (sig := signature(f, bool(prefix))) is not None:
                out[prefix + n] = sig
    return out


json.dump({"signatures": signatures(), "pypto": public(pypto), "frontend": public(pypto.frontend), "experimental": public(pypto.experimental),
           "Tensor": public(pypto.Tensor), "enums": {e: members(getattr(pypto, e)) for e in ENUMS}},
          sys.stdout, indent=0, sort_keys=True)
