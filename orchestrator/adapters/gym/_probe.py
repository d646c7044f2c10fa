"""Child process of ``orchestrator import``: run a gym golden on its own ``_make_inputs`` and describe the result.

``python _probe.py <golden.py> <function name>`` prints one JSON object on stdout:
``{"params": [...], "cases": [{"name", "inputs": [...], "kwargs": {...}, "outputs": [...]}]}`` where every
tensor is described by shape, dtype and value range (never the values). Run in its own process because the
gym golden is the user's code and needs torch; the importer itself needs neither.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
import os
import sys
from typing import Any


def _describe(value: Any) -> dict[str, Any]:
    import torch

    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        info: dict[str, Any] = {"kind": "tensor", "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
        if t.numel():
            f = t.double() if t.dtype != torch.bool else t.to(torch.int8).double()
            info["min"], info["max"] = float(f.min()), float(f.max())
            info["integer"] = not (t.is_floating_point() or t.is_complex())
        return info
    if isinstance(value, bool | int | float | str) or value is None:
        if isinstance(value, float) and not math.isfinite(value):
            return {"kind": "other", "type": "float", "repr": repr(value)}
        return {"kind": "scalar", "value": value, "type": type(value).__name__}
    if isinstance(value, list | tuple) and all(isinstance(v, bool | int | float) for v in value):
        return {"kind": "scalar", "value": list(value), "type": "list"}
    return {"kind": "other", "type": type(value).__name__, "repr": repr(value)[:120]}


def _cases(made: Any) -> list[tuple[str, list, dict]]:
    """The gym's ``_make_inputs(device)`` forms: ``(args, kwargs)`` or ``[(name, args, kwargs), ...]``."""
    if isinstance(made, tuple) and len(made) == 2 and isinstance(made[0], list | tuple) and isinstance(made[1], dict):
        return [("case0", list(made[0]), dict(made[1]))]
    out = []
    for i, item in enumerate(made):
        if isinstance(item, tuple | list) and len(item) == 3 and isinstance(item[2], dict):
            out.append((str(item[0]), list(item[1]), dict(item[2])))
        elif isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[1], dict):
            out.append((f"case{i}", list(item[0]), dict(item[1])))
        else:
            raise TypeError(f"_make_inputs entry {i} is not (name, args, kwargs) or (args, kwargs)")
    return out


def main(golden_path: str, func_name: str, folder: str | None = None) -> int:
    folder = folder or os.path.dirname(os.path.abspath(golden_path))
    os.chdir(folder)  # the golden's own folder, as the gym test runs it (the runner starts us in a private dir)
    sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location("gym_golden_under_import", golden_path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import torch

    torch.manual_seed(42)
    fn = getattr(mod, func_name)
    params = []
    for p in inspect.signature(fn).parameters.values():
        entry: dict[str, Any] = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            entry["default"] = _describe(p.default)
        params.append(entry)
    maker = getattr(mod, "_make_inputs", None) or getattr(mod, "make_inputs", None)
    if maker is None:
        raise AttributeError(f"{os.path.basename(golden_path)} has no _make_inputs(device)")
    result: dict[str, Any] = {"params": params, "cases": []}
    for name, args, kwargs in _cases(maker("cpu")):
        out = fn(*args, **kwargs)
        leaves = list(out) if isinstance(out, tuple | list) else [out]
        result["cases"].append({"name": name, "inputs": [_describe(a) for a in args],
                                "kwargs": {k: _describe(v) for k, v in kwargs.items()},
                                "outputs": [_describe(o) for o in leaves]})
    print("GYM_PROBE " + json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
