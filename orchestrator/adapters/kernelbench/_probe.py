"""Child process of the KernelBench task import: load a task file, describe it, run its ``Model.forward``.

``python _probe.py {channel_fd}`` reads one JSON request on stdin and writes one JSON answer to the result
channel. The task file is third-party code: it runs here, in a process started by
:func:`runtime.sandbox.run_process` with the environment allow-list, never in the importing CLI. This file
imports nothing from the project (only torch and the standard library), so it runs in any interpreter that
has torch.

Requests:

``{"mode": "describe", "task": path}``
    module-level ``FORMULA`` / ``DYNAMIC_AXIS``, ``forward``'s parameter names, ``get_init_inputs()`` (as JSON
    where it can), the model's parameters and buffers, and every ``get_inputs()`` tensor described by shape,
    dtype and value statistics (never the values).
``{"mode": "trace", "task": path, "cases": [{"inputs": [{shape, dtype, ...}], "params": {...}}]}``
    for each case: build inputs of the given shapes from the given statistics, run ``forward`` under a
    :class:`torch.overrides.TorchFunctionMode` that records every torch function it calls (name, tensor
    argument shapes, result shapes), and describe the outputs. A case ``{"seed": s, "run": bool}`` instead
    takes its inputs from ``get_inputs()`` itself with every global generator seeded with ``s`` (as a written
    ``make_inputs`` does: structured inputs such as offsets or block tables that random values cannot express),
    describes them (shape, dtype, range, a digest of the bytes) and runs ``forward`` only when ``run``.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
import os
import sys
import traceback
from typing import Any

_SEED = 0
"""Seed of torch's generator before ``Model(...)`` and ``get_inputs()`` (the golden uses the same)."""


def _load(path: str) -> Any:
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location("kernelbench_task", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tensor(t: Any, *, stats: bool = True) -> dict[str, Any]:
    import torch

    t = t.detach().cpu()
    info: dict[str, Any] = {"kind": "tensor", "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
    if not stats or t.numel() == 0:
        return info
    integer = not (t.is_floating_point() or t.is_complex())
    f = (t.to(torch.int8) if t.dtype == torch.bool else t).double().flatten()
    info["integer"] = integer
    info["min"], info["max"] = float(f.min()), float(f.max())
    info["mean"] = float(f.mean())
    info["std"] = float(f.std()) if f.numel() > 1 else 0.0
    info["finite"] = bool(torch.isfinite(f).all())
    if info["std"] > 0:
        info["within_1sd"] = float(((f - info["mean"]).abs() <= info["std"]).double().mean())
    distinct = torch.unique(f[: 1 << 16])
    info["distinct"] = [float(v) for v in distinct[:3]] if distinct.numel() <= 2 else None
    if integer and f.dim() == 1 and f.numel() >= 3:
        diffs = f[1:] - f[:-1]
        info["sorted"] = bool((diffs >= 0).all()) and bool((diffs > 0).any())
    return info


def _value(v: Any) -> dict[str, Any]:
    import torch

    if isinstance(v, torch.Tensor):
        return _tensor(v)
    if isinstance(v, bool | int | float | str) or v is None:
        if isinstance(v, float) and not math.isfinite(v):
            return {"kind": "other", "type": "float", "repr": repr(v)}
        return {"kind": "scalar", "value": v, "type": type(v).__name__}
    if isinstance(v, list | tuple) and all(isinstance(x, bool | int | float) for x in v):
        return {"kind": "scalar", "value": list(v), "type": "list"}
    return {"kind": "other", "type": type(v).__name__, "repr": repr(v)[:120]}


def _model(mod: Any) -> tuple[Any, list[Any]]:
    import torch

    torch.manual_seed(_SEED)
    init = list(mod.get_init_inputs()) if hasattr(mod, "get_init_inputs") else []
    return mod.Model(*init), init


def describe(path: str) -> dict[str, Any]:
    import torch

    mod = _load(path)
    for name in ("Model", "get_inputs"):
        if not hasattr(mod, name):
            raise AttributeError(f"the task file defines no {name}")
    model, init = _model(mod)
    sig = inspect.signature(model.forward)
    params = [{"name": p.name, "kind": p.kind.name} for p in sig.parameters.values()]
    torch.manual_seed(_SEED)
    inputs = list(mod.get_inputs())
    dropout = [{"module": n, "p": float(m.p)} for n, m in model.named_modules()
               if isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0 and m.training]
    return {
        "formula": getattr(mod, "FORMULA", None) if isinstance(getattr(mod, "FORMULA", None), str) else None,
        "dynamic_axis": [str(a) for a in getattr(mod, "DYNAMIC_AXIS", None) or []],
        "forward_params": params,
        "init": [_value(v) for v in init],
        "inputs": [_value(v) for v in inputs],
        "parameters": [{"name": n, **_tensor(p)} for n, p in model.named_parameters()],
        "buffers": [{"name": n, **_tensor(b, stats=False)} for n, b in model.named_buffers()],
        "dropout": dropout,
        "torch": torch.__version__,
    }


def seed_all(seed: int) -> None:
    """Seed every global generator a ``get_inputs()`` may draw from (torch, numpy, Python's ``random``).

    golden.py's ``make_inputs`` does the same (inside a saved/restored generator state), so what the import
    checks here is what verification gets.
    """
    import random

    import numpy
    import torch

    torch.manual_seed(seed)
    random.seed(seed)
    numpy.random.seed(seed)


def _given(mod: Any, seed: int) -> tuple[list[Any], list[dict[str, Any]]]:
    """``get_inputs()`` under :func:`seed_all`, and each value described with a digest of its bytes."""
    import hashlib

    import torch

    seed_all(seed)
    values = list(mod.get_inputs())
    info = []
    for v in values:
        d = _value(v)
        if isinstance(v, torch.Tensor):
            t = v.detach().cpu().contiguous()
            raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
            d["digest"] = hashlib.sha256(raw).hexdigest()
        info.append(d)
    return values, info


def _make(desc: dict[str, Any], gen: Any) -> Any:
    """A tensor of ``desc``'s shape and dtype whose values follow its statistics (normal or uniform)."""
    import torch

    dtype = getattr(torch, desc["dtype"])
    shape = desc["shape"]
    if desc["dtype"] == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    lo, hi = desc.get("min", -1.0), desc.get("max", 1.0)
    if desc.get("integer"):
        return torch.randint(int(lo), int(hi) + 1, shape, generator=gen, dtype=torch.int64).to(dtype)
    if desc.get("distinct") and len(desc["distinct"]) == 2:
        a, b = desc["distinct"]
        return torch.where(torch.rand(shape, generator=gen) < 0.5, a, b).to(dtype)
    if desc.get("normal"):
        return (torch.randn(shape, generator=gen, dtype=torch.float64) * desc["std"] + desc["mean"]).to(dtype)
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


def _op_name(func: Any) -> str:
    name = getattr(func, "__name__", None) or repr(func)
    if name in ("__get__", "__set__"):
        owner = getattr(func, "__self__", None)
        name = getattr(owner, "__name__", name)
    return str(name)


def trace(path: str, cases: list[dict[str, Any]]) -> dict[str, Any]:
    import torch
    from torch.func import functional_call
    from torch.overrides import TorchFunctionMode

    mod = _load(path)
    model, _ = _model(mod)
    calls: list[dict[str, Any]] = []

    def shapes(obj: Any) -> list[list[int]]:
        if isinstance(obj, torch.Tensor):
            return [list(obj.shape)]
        if isinstance(obj, list | tuple):
            return [s for o in obj for s in shapes(o)]
        return []

    class Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
            out = func(*args, **(kwargs or {}))
            entry: dict[str, Any] = {"op": _op_name(func), "in": shapes(list(args)), "out": shapes(out)}
            if entry["op"] == "dropout":
                p = kwargs.get("p") if kwargs else (args[1] if len(args) > 1 else 0.5)
                training = kwargs.get("training") if kwargs else (args[2] if len(args) > 2 else True)
                entry["p"], entry["training"] = float(p or 0.0), bool(training)
            calls.append(entry)
            return out

    results = []
    for k, case in enumerate(cases):
        result: dict[str, Any] = {}
        if "seed" in case:
            args, result["inputs"] = _given(mod, int(case["seed"]))
            overrides: dict[str, Any] = {}
            if not case.get("run", True):
                results.append(result)
                continue
        else:
            gen = torch.Generator().manual_seed(1000 + k)
            args = [_make(d, gen) for d in case["inputs"]]
            overrides = {n: _make(d, gen) for n, d in case.get("params", {}).items()}
        calls.clear()
        with torch.no_grad(), Recorder():
            out = functional_call(model, overrides, tuple(args)) if overrides else model(*args)
        leaves = list(out) if isinstance(out, tuple | list) else [out]
        results.append({**result, "outputs": [_value(o) for o in leaves], "calls": list(calls)})
    return {"cases": results}


def main(argv: list[str]) -> int:
    channel = os.fdopen(int(argv[1]), "w", encoding="utf-8")
    request = json.loads(sys.stdin.read())
    try:
        if request["mode"] == "describe":
            answer: dict[str, Any] = {"ok": True, **describe(request["task"])}
        else:
            answer = {"ok": True, **trace(request["task"], request["cases"])}
    except BaseException as exc:  # noqa: BLE001 - every failure of vendor code is reported, one line
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == os.path.abspath(request["task"])]
        where = f" (line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:300] if str(exc) else type(exc).__name__
        answer = {"ok": False, "error": text + where}
    channel.write(json.dumps(answer))
    channel.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
