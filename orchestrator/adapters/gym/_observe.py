"""Child of the gym import: run a gym test as its user runs it, on the emulator, and record what it calls.

``python -s -B _observe.py {channel_fd}`` with a JSON request on stdin::

    {"root": <the gym operator's folder>, "cwd": <where to run>, "argv": [<what follows `python`>],
     "flags": [<runner switches>], "observe_dir": <folder for the events of child processes>}

The test runs exactly as under ``python -m runtime.emulator`` (this process calls the runner's ``main``), with
three recorders:

* every module-level function of a module under ``root`` (the impl under ``src/``, goldens and helpers under
  ``tests/``) and of the test script itself is wrapped: each call made from outside the operator's own code is
  an event with its arguments and result described (tensors by shape, dtype, value range, identity and a
  checksum, so that the importer can tell which tensors the test handed to both the impl and the golden, and
  which arguments the impl wrote);
* calls of ``@pypto.frontend.jit`` kernels (for entries that return a kernel, e.g. ``sum_lstm("npu")``);
* the tolerances of the comparisons the test makes (``numpy.testing.assert_allclose``, ``torch.allclose`` ...).

Python processes the test starts (a gym test that re-runs itself per case) record into ``observe_dir`` through
the runner's child hook. The result goes back on the channel as one JSON object. Values are never sent, only
descriptions: the importer needs shapes, dtypes, ranges and identities.
"""

from __future__ import annotations

import ast
import atexit
import functools
import importlib.abc
import importlib.machinery
import inspect
import json
import math
import os
import sys
import threading
import types
import zlib
from typing import Any

# the checkout this observer belongs to first on sys.path before the first `runtime` import (as the sandbox runner
# does, runtime/sandbox/_runner.py): an editable install of another checkout maps `runtime` there, which the
# sandbox does not mount - a clone run with another checkout's venv failed every gym import with "No module named
# 'runtime'" (s40), and without the sandbox would have observed with the other checkout's emulator
if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))))

from runtime import pyast  # noqa: E402 - after the checkout is on sys.path

_STATE: dict[str, Any] = {"events": [], "comparisons": [], "kernels": [], "root": "", "seq": 0}
_LOCAL = threading.local()
_ENV = "PTO_FORGE_GYM_OBSERVE"


# ------------------------------------------------------------------------------------------------ describing


def _is_tensor(x: Any) -> bool:
    return type(x).__module__.split(".")[0] in ("torch", "numpy") and hasattr(x, "shape") and hasattr(x, "dtype")


_SAMPLE = 1 << 16  # elements the spread is estimated from (min/max look at every element)


def _tensor(x: Any, checksum: bool) -> dict[str, Any]:
    """Shape, dtype, value range and spread, storage address and a checksum of one tensor, without copying it
    (gym caches are GBs: a float copy per recorded call is what made a run peak at 24 GB)."""
    import numpy as np

    info: dict[str, Any] = {"t": "tensor", "id": id(x), "shape": [int(d) for d in x.shape],
                            "dtype": str(x.dtype).replace("torch.", "")}
    try:  # storage address: a detached view or a .cpu() of a CPU tensor is another object on the same bytes
        info["ptr"] = int(x.data_ptr()) if hasattr(x, "data_ptr") else int(x.__array_interface__["data"][0])
    except Exception:  # noqa: BLE001 - no address: identity and checksum still tell
        pass
    if type(x).__module__.startswith("torch"):
        import torch

        t = x.detach()
        floating = bool(t.is_floating_point())
        n = t.numel()
        if n:
            flat = t.reshape(-1)
            if floating and t.element_size() == 1:  # float8: no min/max kernels on CPU
                flat = flat.float()
            info["min"], info["max"] = float(flat.min()), float(flat.max())
            if floating and not (math.isfinite(info["min"]) and math.isfinite(info["max"])):
                finite = flat[torch.isfinite(flat)]
                info["min"], info["max"] = (float(finite.min()), float(finite.max())) if finite.numel() else (0.0, 0.0)
            sample = flat[:: max(1, n // _SAMPLE)].double()
            info["std"] = float(sample.std()) if floating and sample.numel() > 1 else 0.0
        raw = t.contiguous().reshape(-1).view(torch.uint8).numpy() if checksum and n else None
    else:
        arr = np.asarray(x)
        floating = arr.dtype.kind == "f" or arr.dtype.name == "bfloat16" or "float8" in arr.dtype.name
        if arr.size:
            flat = arr.reshape(-1)
            info["min"], info["max"] = float(np.nanmin(flat).astype(np.float64)), float(np.nanmax(flat).astype(
                np.float64))
            sample = flat[:: max(1, flat.size // _SAMPLE)].astype(np.float64)
            info["std"] = float(sample.std()) if floating else 0.0
        raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8) if checksum and arr.size else None
    info["integer"] = not floating
    if checksum:
        info["crc"] = zlib.crc32(memoryview(raw)) if raw is not None else 0
    return info


def _crc(x: Any) -> int:
    """The checksum of a tensor's bytes (did a call write it?)."""
    import numpy as np

    if type(x).__module__.startswith("torch"):
        import torch

        t = x.detach()
        return zlib.crc32(memoryview(t.contiguous().reshape(-1).view(torch.uint8).numpy())) if t.numel() else 0
    arr = np.asarray(x)
    return zlib.crc32(memoryview(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))) if arr.size else 0


def describe(x: Any, checksum: bool = True, module: types.ModuleType | None = None) -> dict[str, Any]:
    """What the importer needs to know about one argument or result (never its values)."""
    if _is_tensor(x):
        return _tensor(x, checksum)
    if x is None or isinstance(x, bool | int | str):
        return {"t": "scalar", "v": x}
    if isinstance(x, float):
        return {"t": "scalar", "v": x} if math.isfinite(x) else {"t": "object", "type": "float", "repr": repr(x),
                                                                 "evaluable": False}
    if isinstance(x, list | tuple):
        if all(isinstance(v, bool | int | float | str) or v is None for v in x):
            return {"t": "scalar", "v": list(x)}
        return {"t": "seq", "items": [describe(v, checksum, module) for v in x]}
    fields = getattr(x, "__dict__", None)
    if isinstance(fields, dict) and not isinstance(x, type) and any(_is_tensor(v) for v in fields.values()):
        try:  # a bundle of tensors (a golden taking `AttentionGradInputs(q, k, ...)`): its fields and __init__
            init = [p for p in inspect.signature(type(x).__init__).parameters if p != "self"]
        except (TypeError, ValueError):
            init = []
        local = module is not None and getattr(module, type(x).__name__, None) is type(x)
        return {"t": "struct", "type": type(x).__qualname__, "init": init, "local": local,
                "fields": {k: describe(v, checksum, module) for k, v in fields.items() if not k.startswith("_")}}
    if type(x).__name__ == "JitFunction":
        return {"t": "kernel", "id": id(x), "name": getattr(x, "__name__", "")}
    if callable(x):
        return {"t": "callable", "id": id(x), "name": getattr(x, "__name__", type(x).__name__)}
    text = repr(x)
    evaluable = False
    if module is not None:
        for candidate in (text, _rebuilt(x, module)):
            if candidate is None:
                continue
            try:  # can the wrapper write this object as a literal of the impl module?
                evaluable = bool(eval(candidate, vars(module)) == x)  # noqa: S307 - our own text, in the child
            except Exception:  # noqa: BLE001 - not evaluable: the importer reports it
                evaluable = False
            if evaluable:
                text = candidate
                break
    return {"t": "object", "type": type(x).__qualname__, "repr": text[:2000], "evaluable": evaluable}


def _rebuilt(x: Any, module: types.ModuleType, depth: int = 0) -> str | None:
    """``x`` as an expression of the impl module when its repr is not one: a dataclass the module reaches by
    name, rebuilt from its init fields (a config holding ``pypto.DT_FP8E4M3``, whose repr ``DataType.DT_FP8E4M3``
    names nothing in the module), each field a literal or a value the module reaches as ``<module>.<name>``."""
    import dataclasses
    import enum

    if isinstance(x, enum.Enum):  # first: an IntEnum is an int whose repr names its class
        for alias, mod in vars(module).items():
            if isinstance(mod, types.ModuleType):
                name = next((k for k, v in vars(mod).items() if v is x and not k.startswith("_")), None)
                if name is not None:
                    return f"{alias}.{name}"
        return None
    if x is None or isinstance(x, bool | int | float | str):
        return repr(x) if not isinstance(x, float) or math.isfinite(x) else None
    if isinstance(x, list | tuple):
        items = [_rebuilt(v, module, depth + 1) for v in x]
        if any(i is None for i in items):
            return None
        return ("[{}]" if isinstance(x, list) else "({},)").format(", ".join(items))  # type: ignore[arg-type]
    if depth > 3 or not dataclasses.is_dataclass(x) or isinstance(x, type):
        return None
    cls = type(x)
    if getattr(module, cls.__name__, None) is not cls:
        return None
    parts = []
    for f in dataclasses.fields(x):
        if not f.init:
            continue
        e = _rebuilt(getattr(x, f.name), module, depth + 1)
        if e is None:
            return None
        parts.append(f"{f.name}={e}")
    return f"{cls.__name__}({', '.join(parts)})"


# ------------------------------------------------------------------------------------------------ recording


def _kind(path: str) -> str:
    root = _STATE["root"]
    rel = os.path.relpath(path, root) if root and path.startswith(root) else ""
    if not rel:
        return "other"
    if rel.startswith("src" + os.sep):
        return "impl"
    return "golden" if "golden" in os.path.basename(path) else "test"


def _record(fn: Any, kind: str, module: types.ModuleType | None) -> Any:
    """``fn`` wrapped: a call made from outside the operator's code is an event; inner calls just run."""
    if getattr(fn, "__pto_forge_observed__", False):
        return fn

    @functools.wraps(fn)
    def observed(*args: Any, **kwargs: Any) -> Any:
        depth = getattr(_LOCAL, "depth", 0)
        if depth > 0 and kind != "test":  # a helper called by the operator's own code
            return fn(*args, **kwargs)
        _STATE["seq"] += 1
        stack = getattr(_LOCAL, "stack", None)
        if stack is None:
            stack = _LOCAL.stack = []
        event: dict[str, Any] = {"seq": _STATE["seq"], "fn": fn.__name__, "module": getattr(module, "__name__", ""),
                                 "file": fn.__code__.co_filename, "kind": kind, "pid": os.getpid(),
                                 "parents": list(stack)}
        try:
            event["params"] = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            event["params"] = []
        before = {i: describe(a, module=module) for i, a in enumerate(args)}
        before_kw = {k: describe(v, module=module) for k, v in kwargs.items()}
        event["args"], event["kwargs"] = list(before.values()), before_kw
        _STATE["events"].append(event)
        _LOCAL.depth = depth + (0 if kind == "test" else 1)
        stack.append(event["seq"])
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            event["error"] = f"{type(exc).__name__}: {exc}"[:300]
            raise
        finally:
            _LOCAL.depth = depth
            stack.pop()
        event["result"] = describe(result, module=module)
        event["mutated"] = [i for i, a in enumerate(args) if _is_tensor(a) and _crc(a) != before[i].get("crc")]
        event["mutated_kw"] = [k for k, v in kwargs.items() if _is_tensor(v) and _crc(v) != before_kw[k].get("crc")]
        return result

    observed.__pto_forge_observed__ = True  # type: ignore[attr-defined]
    return observed


def _wrap_module(module: types.ModuleType, kind: str) -> None:
    for name, value in list(vars(module).items()):
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__ and not name.startswith("__"):
            if kind == "test" and (name.startswith("test_") or name.startswith("pytest_")):
                continue
            setattr(module, name, _record(value, kind, module))


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any, kind: str) -> None:
        self.inner, self.kind = inner, kind

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self.inner.exec_module(module)
        _wrap_module(module, self.kind)


class _Finder(importlib.abc.MetaPathFinder):
    """Modules whose file lies under the operator's folder get their functions recorded."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        origin = getattr(spec, "origin", None) if spec is not None else None
        if spec is None or spec.loader is None or not origin or not origin.endswith(".py"):
            return None
        if not os.path.realpath(origin).startswith(_STATE["root"] + os.sep):
            return None
        if os.path.basename(origin) == "conftest.py":
            return None  # pytest loads conftest itself
        spec.loader = _Loader(spec.loader, _kind(os.path.realpath(origin)))
        return spec


def _instrument_script(path: str, source: bytes) -> Any:
    """Compile the test script with every top-level function recorded (a decorator added in the AST only)."""
    tree = pyast.parse(source, filename=path)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith(("test_", "pytest_")):
            deco = ast.Call(func=ast.Name(id="__pto_forge_observe__", ctx=ast.Load()),
                            args=[ast.Constant(_kind(os.path.realpath(path)))], keywords=[])
            node.decorator_list.insert(0, ast.copy_location(deco, node))
    ast.fix_missing_locations(tree)
    import builtins

    builtins.__pto_forge_observe__ = lambda kind: (lambda f: _record(f, kind, None))  # type: ignore[attr-defined]
    return pyast.compile_tree(tree, path, "exec", dont_inherit=True)


def _patch_comparisons() -> None:
    """Record the rtol/atol of the test's comparisons (they become the op dir's tolerance)."""
    import numpy as np
    import numpy.testing as npt

    def wrap(owner: Any, name: str, defaults: tuple[float, float]) -> None:
        original = getattr(owner, name, None)
        if original is None or getattr(original, "__pto_forge_observed__", False):
            return

        @functools.wraps(original)
        def compare(*args: Any, **kwargs: Any) -> Any:
            rtol = kwargs.get("rtol", args[2] if len(args) > 2 and isinstance(args[2], float) else defaults[0])
            atol = kwargs.get("atol", args[3] if len(args) > 3 and isinstance(args[3], float) else defaults[1])
            _STATE["comparisons"].append({"seq": _STATE["seq"], "fn": name, "rtol": rtol, "atol": atol,
                                          "pid": os.getpid()})
            return original(*args, **kwargs)

        compare.__pto_forge_observed__ = True  # type: ignore[attr-defined]
        setattr(owner, name, compare)

    wrap(npt, "assert_allclose", (1e-7, 0.0))
    wrap(np, "allclose", (1e-5, 1e-8))
    wrap(np, "isclose", (1e-5, 1e-8))
    try:
        import torch
    except ImportError:
        return
    wrap(torch, "allclose", (1e-5, 1e-8))
    wrap(torch, "isclose", (1e-5, 1e-8))
    wrap(torch.testing, "assert_close", (float("nan"), float("nan")))


def _patch_kernels() -> None:
    from runtime.emulator._frontend import JitFunction

    original = JitFunction.__call__
    if getattr(original, "__pto_forge_observed__", False):
        return

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        module = sys.modules.get(getattr(self.func, "__module__", ""))  # config objects: evaluable there?
        entry = {"seq": _STATE["seq"], "id": id(self), "name": self.__name__, "pid": os.getpid(),
                 "args": [describe(a, module=module) for a in args],
                 "kwargs": {k: describe(v, module=module) for k, v in kwargs.items()}}
        _STATE["kernels"].append(entry)
        result = original(self, *args, **kwargs)
        entry["mutated"] = [i for i, a in enumerate(args) if _is_tensor(a) and _crc(a) != entry["args"][i].get("crc")]
        return result

    call.__pto_forge_observed__ = True  # type: ignore[attr-defined]
    JitFunction.__call__ = call  # type: ignore[method-assign]


def _install(root: str) -> None:
    _STATE["root"] = os.path.realpath(root)
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    _patch_comparisons()
    _patch_kernels()


def _dump() -> dict[str, Any]:
    return {"events": _STATE["events"], "comparisons": _STATE["comparisons"], "kernels": _STATE["kernels"]}


def child_init() -> None:
    """Run by the emulator's child processes (the runner's child hook): record into the observe folder."""
    target = os.environ.get(_ENV)
    if not target:
        return
    info = json.loads(target)
    _install(info["root"])

    def write() -> None:
        with open(os.path.join(info["dir"], f"{os.getpid()}.json"), "w", encoding="utf-8") as fh:
            json.dump(_dump(), fh)

    atexit.register(write)


def main(argv: list[str]) -> int:
    fd = int(argv[1])
    request = json.loads(sys.stdin.read())
    os.chdir(request["cwd"])
    os.environ[_ENV] = json.dumps({"root": request["root"], "dir": request["observe_dir"]})
    from runtime.emulator import __main__ as runner

    runner.setup({"torch_npu": True})
    _install(request["root"])
    runner.SOURCE_HOOK = _instrument_script
    runner.CHILD_INIT = "orchestrator.adapters.gym._observe:child_init"
    rc = runner.main([*request.get("flags", []), *request["argv"]])
    children = []
    for name in sorted(os.listdir(request["observe_dir"])):
        try:
            with open(os.path.join(request["observe_dir"], name), encoding="utf-8") as fh:
                children.append(json.load(fh))
        except (OSError, ValueError):
            continue
    out = {"rc": rc, **_dump(), "children": children}
    data = json.dumps(out).encode()
    with os.fdopen(fd, "wb") as ch:
        ch.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
