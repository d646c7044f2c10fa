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
import re
import sys
import traceback
from typing import Any

_SEED = 0
"""Seed of torch's generator before ``Model(...)`` and ``get_inputs()`` (the golden uses the same)."""
DESCRIBE_ELEMENTS = 1 << 27
"""``describe`` runs ``get_inputs()`` at the task's sizes only when its tensors hold at most this many elements in
all (counted first on the meta device, which allocates nothing). KernelBench's GPU timing sizes reach 4096 x
393216 (6.4 GB a tensor): above this, the value statistics come from a run whose large tensor factories are cut
down (:func:`_reduced_inputs`), and the shapes from the meta run."""
SAMPLE_ELEMENTS = 1 << 22
"""A factory call of a reduced run makes at most this many elements (its leading axes are cut first)."""
STATS_ELEMENTS = 1 << 24
"""Mean / sigma / shape statistics of a larger tensor are read from an evenly strided sample of this many."""
_FACTORIES = frozenset({"randn", "rand", "randint", "zeros", "ones", "empty", "full", "normal"})


CPU_ONLY = """import torch as _pto_forge_torch  # KernelBench tasks move tensors with .cuda(); here every device is the CPU
_pto_forge_torch.Tensor.cuda = lambda self, *args, **kwargs: self
_pto_forge_torch.nn.Module.cuda = lambda self, *args, **kwargs: self
"""
"""Run before the task's code (here and at the top of a written golden.py): ``x.cuda()`` / ``model.cuda()`` give
the object itself, as on a GPU host where the harness already placed it. No other device call is touched."""

CUDA_DEVICES = """from torch.overrides import TorchFunctionMode as _PtoForgeMode  # the task names CUDA devices


class _PtoForgeCpuDevices(_PtoForgeMode):
    # torch.randn(..., device="cuda"), x.to("cuda"), torch.zeros(n, device=torch.device("cuda:0")): the CPU here
    def __init__(self, drop=False):
        super().__init__()
        self.drop = drop  # leave such a device out (a surrounding torch.device context then picks one)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        def cuda(v):
            return (isinstance(v, str) and (v == "cuda" or v.startswith("cuda:"))) or (
                isinstance(v, _pto_forge_torch.device) and v.type == "cuda")
        cpu = _pto_forge_torch.device("cpu")
        args = [cpu if cuda(a) else a for a in args if not (self.drop and cuda(a))]
        kwargs = {k: cpu if cuda(v) else v for k, v in (kwargs or {}).items() if not (self.drop and cuda(v))}
        return func(*args, **kwargs)


_pto_forge_devices = _PtoForgeCpuDevices()
_pto_forge_devices.__enter__()
"""
"""Run after :data:`CPU_ONLY` when the task's text names a CUDA device (:func:`names_cuda`): KernelBench files build
inputs with ``torch.randn(..., device="cuda")`` and move tensors with ``.to("cuda")``, which a CPU-only torch refuses
("Torch not compiled with CUDA enabled"). A torch function mode, entered for the rest of the process, gives every
such call the CPU instead (strings ``"cuda"`` / ``"cuda:N"`` and ``torch.device("cuda")`` among a call's
arguments); nothing else changes. The probe and golden.py enter it the same way."""

_CUDA_NAME = re.compile(r"""["']cuda(:\d+)?["']""")


def names_cuda(source: str) -> bool:
    """Whether a task's text names a CUDA device as a string (``device="cuda"``, ``.to('cuda:0')``)."""
    return bool(_CUDA_NAME.search(source))


_DEVICES: dict[str, Any] = {}
"""The namespace :data:`CUDA_DEVICES` ran in (its mode class), when the task names CUDA devices."""


def _load(path: str) -> Any:
    exec(CPU_ONLY, {})  # noqa: S102 - a fixed text of this file, not the task's
    with open(path, encoding="utf-8") as fh:
        if names_cuda(fh.read()) and not _DEVICES:
            exec(CPU_ONLY + CUDA_DEVICES, _DEVICES)  # noqa: S102 - a fixed text of this file, not the task's
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
    flat = (t.to(torch.int8) if t.dtype == torch.bool else t).flatten()
    info["integer"] = integer
    info["min"], info["max"] = float(flat.min()), float(flat.max())
    info["finite"] = bool(torch.isfinite(flat).all())
    step = -(-flat.numel() // STATS_ELEMENTS)  # a strided sample: a float64 copy of 1e9 elements is 8 GB
    f = (flat[::step] if step > 1 else flat).double()
    info["mean"] = float(f.mean())
    info["std"] = float(f.std()) if f.numel() > 1 else 0.0
    if info["std"] > 0:
        info["within_1sd"] = float(((f - info["mean"]).abs() <= info["std"]).double().mean())
    if not integer and t.dim() >= 2 and t.shape[-1] == t.shape[-2] > 1 and info["std"] > 0:
        info["structure"] = _structure(t)
    distinct = torch.unique(f[: 1 << 16])
    info["distinct"] = [float(v) for v in distinct[:3]] if distinct.numel() <= 2 else None
    if integer and f.dim() == 1 and f.numel() >= 3:
        diffs = f[1:] - f[:-1]
        info["sorted"] = bool((diffs >= 0).all()) and bool((diffs > 0).any())
    if integer and 3 <= t.numel() <= 1 << 22:  # a permutation or unique slots (randperm): no value repeats
        info["unique"] = int(torch.unique(flat).numel()) == t.numel()
    return info


def _structure(t: Any) -> str | None:
    """What every square matrix of ``t`` (its last two axes) is, if anything: ``symmetric``, ``upper triangular``,
    ``lower triangular`` or ``diagonal`` (KernelBench's ``13_Matmul_for_symmetric_matrices`` and its triangular
    and diagonal siblings build such inputs in get_inputs())."""
    import torch

    upper, lower = torch.equal(t, t.triu()), torch.equal(t, t.tril())
    if upper and lower:
        return "diagonal"
    if upper or lower:
        return "upper triangular" if upper else "lower triangular"
    return "symmetric" if torch.equal(t, t.mT) else None


def _return_names(model: Any) -> list[str | None] | None:
    """The variable each element of ``forward``'s one ``return`` statement is made of (``return y, x.to(dt)`` ->
    ``["y", "x"]``; an element that is not a variable or a method chain on one -> None); None when ``forward``
    has no single return statement or its source cannot be read."""
    import ast
    import textwrap
    import types

    try:
        # this child is one thread and imports nothing from the project: runtime.pyast's lock is not needed here
        tree = compile(textwrap.dedent(inspect.getsource(type(model).forward)), "<forward>", "exec",
                       ast.PyCF_ONLY_AST)
        assert isinstance(tree, ast.Module)
    except (OSError, TypeError, SyntaxError):
        return None
    rets = [n for n in ast.walk(tree.body[0]) if isinstance(n, ast.Return) and n.value is not None]
    if len(rets) != 1:
        return None
    value = rets[0].value
    elts = value.elts if isinstance(value, ast.Tuple | ast.List) else [value]

    def root(e: ast.expr | None) -> str | None:
        while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):  # x.to(...).float()
            e = e.func.value
        while isinstance(e, ast.Attribute) and e.attr in ("T", "mT", "data"):
            e = e.value
        if not isinstance(e, ast.Name) or e.id == "self" or isinstance(scope.get(e.id), types.ModuleType):
            return None  # torch.cat(...), F.silu(...): a module's function, not a variable
        return e.id

    scope = getattr(type(model).forward, "__globals__", {})
    return [root(e) for e in elts]


def _reassigned(model: Any) -> list[str]:
    """Local names ``forward`` assigns more than once (``s = exp(x - m); s = s / t``): a returned one means its last
    value, while a FORMULA that uses the same name may describe an earlier one (round 4: the outputs were named
    ``s, m, t`` after ``return s, m, t`` while FORMULA's ``s`` was the unnormalised exp)."""
    import ast
    import textwrap

    try:
        tree = compile(textwrap.dedent(inspect.getsource(type(model).forward)), "<forward>", "exec",
                       ast.PyCF_ONLY_AST)
    except (OSError, TypeError, SyntaxError):
        return []
    counts: dict[str, int] = {}

    def names(t: ast.expr) -> list[str]:
        if isinstance(t, ast.Name):
            return [t.id]
        if isinstance(t, ast.Tuple | ast.List):
            return [n for e in t.elts for n in names(e)]
        if isinstance(t, ast.Starred):
            return names(t.value)
        return []

    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) or isinstance(node, ast.For | ast.NamedExpr):
            targets = [node.target]
        for t in targets:
            for n in names(t):
                counts[n] = counts.get(n, 0) + (2 if isinstance(node, ast.AugAssign | ast.For) else 1)
    return sorted(n for n, c in counts.items() if c > 1)


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


def _model(mod: Any) -> tuple[Any, list[Any] | dict[str, Any]]:
    """``Model(*get_init_inputs())``, or ``Model(**get_init_inputs())`` when it returns a dict (keyword arguments:
    unpacked with ``*``, a dict would hand the model its keys). golden.py builds the model the same way."""
    import torch

    torch.manual_seed(_SEED)
    raw = mod.get_init_inputs() if hasattr(mod, "get_init_inputs") else []
    if isinstance(raw, dict):
        return mod.Model(**raw), dict(raw)
    init = list(raw)
    return mod.Model(*init), init


def _tensor_attributes(model: Any) -> dict[str, Any]:
    """The model's plain tensor attributes (``self.hidden = torch.randn(...)``): neither parameters nor buffers, so
    ``functional_call`` cannot hand them in and a kernel never sees them (dotted names, submodules included)."""
    import torch

    return {f"{prefix}{'.' if prefix else ''}{k}": v for prefix, m in model.named_modules()
            for k, v in vars(m).items() if isinstance(v, torch.Tensor) and not k.startswith("_")}


def _fingerprint(t: Any) -> tuple[int, str]:
    import hashlib

    import torch

    c = t.detach().cpu().contiguous()
    raw = (c.view(torch.int16) if c.dtype == torch.bfloat16 else c).numpy().tobytes()
    return id(t), hashlib.sha256(raw).hexdigest()


def _rebuilt(mod: Any) -> Any:
    """``Model(...)`` built again under another seed: what changes with it was drawn at random in ``__init__``.

    The task's own seeding is switched off during this build: an ``__init__`` that seeds itself and then draws a
    buffer (a random-features projection, ``torch.manual_seed(0); self.register_buffer("omega", torch.randn(d, m))``)
    gave the same values under every seed, so the buffer passed for a constant (a causal mask, a RoPE cache) and
    stayed inside the golden, where no kernel can know it: a kernel cannot reproduce torch's generator. Seeded or not,
    values drawn at random are the kernel's inputs. Switched off: ``torch.manual_seed`` (also inside
    ``torch.random.fork_rng``), numpy's and ``random``'s global seeding, a seeded ``torch.Generator`` handed to a
    draw (``torch.randn(d, m, generator=torch.Generator().manual_seed(42))``: its ``generator=`` is dropped, so the
    draw takes the global one) and a seeded numpy generator (``np.random.default_rng(0)``, ``RandomState(0)``: built
    unseeded). A constant (``torch.arange``, ``torch.tril(torch.ones(...))``) draws nothing and stays the same."""
    import random

    import torch
    from torch.overrides import TorchFunctionMode

    class Unseeded(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
            kwargs = dict(kwargs or {})
            if isinstance(kwargs.get("generator"), torch.Generator):
                kwargs.pop("generator")
            return func(*args, **kwargs)

    torch.manual_seed(_SEED + 1)
    patched: list[tuple[Any, str, Any]] = [(torch, "manual_seed", torch.manual_seed),
                                           (torch.random, "manual_seed", torch.random.manual_seed),
                                           (random, "seed", random.seed)]
    replaced: dict[tuple[int, str], Any] = {}
    try:
        import numpy

        patched.append((numpy.random, "seed", numpy.random.seed))
        default_rng, random_state = numpy.random.default_rng, numpy.random.RandomState
        replaced[(id(numpy.random), "default_rng")] = lambda *a, **k: default_rng()

        class UnseededState(random_state):  # type: ignore[misc,valid-type]  # a class: numpy's isinstance checks
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__()

        replaced[(id(numpy.random), "RandomState")] = UnseededState
        patched += [(numpy.random, "default_rng", default_rng), (numpy.random, "RandomState", random_state)]
    except ImportError:  # pragma: no cover - numpy comes with torch
        pass
    for owner, name, _ in patched:
        setattr(owner, name, replaced.get((id(owner), name), lambda *a, **k: torch.default_generator))
    try:
        with Unseeded():
            raw = mod.get_init_inputs() if hasattr(mod, "get_init_inputs") else []
            return mod.Model(**raw) if isinstance(raw, dict) else mod.Model(*raw)
    finally:
        for owner, name, original in patched:
            setattr(owner, name, original)


def _changed(mine: dict[str, Any], other: dict[str, Any]) -> list[str]:
    return [n for n, t in mine.items() if n in other and (other[n].shape != t.shape or
                                                          _fingerprint(other[n])[1] != _fingerprint(t)[1])]


def _random_attributes(mod: Any, model: Any, other: Any = None) -> list[str]:
    """Plain tensor attributes (:func:`_tensor_attributes`) whose values change with the seed ``Model(...)`` is built
    under: random state the kernel cannot be given (KernelBench's RNN tasks draw ``self.h0 = torch.randn(...)``)."""
    mine = _tensor_attributes(model)
    if not mine:
        return []
    return _changed(mine, _tensor_attributes(other if other is not None else _rebuilt(mod)))


def _random_buffers(mod: Any, model: Any, other: Any = None) -> list[str]:
    """Buffers whose values change with the seed ``Model(...)`` is built under: weights drawn at random and
    registered as buffers (``11_ds_v32_mla_prolog_quant`` keeps its int8-quantised ``w_dq`` / ``w_uq_qr`` so). They
    are inputs of the kernel like parameters (a kernel cannot know them otherwise); a causal mask, a RoPE cache or
    BatchNorm's running statistics are the same under every seed and stay inside the golden."""
    mine = dict(model.named_buffers())
    if not mine:
        return []
    return _changed(mine, dict((other if other is not None else _rebuilt(mod)).named_buffers()))


def describe(path: str) -> dict[str, Any]:
    import torch

    mod = _load(path)
    for name in ("Model", "get_inputs"):
        if not hasattr(mod, name):
            raise AttributeError(f"the task file defines no {name}")
    huge = _huge_parameter(mod)
    if huge:
        return {"huge_parameter": huge}
    model, init = _model(mod)
    sig = inspect.signature(model.forward)
    params = [{"name": p.name, "kind": p.kind.name} for p in sig.parameters.values()]
    described = _describe_inputs(mod)
    other = _rebuilt(mod) if _tensor_attributes(model) or any(True for _ in model.buffers()) else None
    dropout = [{"module": n, "p": float(m.p)} for n, m in model.named_modules()
               if isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0 and m.training]
    return {
        "formula": _formula(getattr(mod, "FORMULA", None)),
        "dynamic_axis": _dynamic_axis(getattr(mod, "DYNAMIC_AXIS", None)),
        "constants": {k: v for k, v in vars(mod).items() if type(v) is int and not k.startswith("_")},
        "forward_params": params,
        "init": [{**_value(v), "name": str(k)} for k, v in init.items()] if isinstance(init, dict) else
                [_value(v) for v in init],
        "inputs": described,
        "parameters": [{"name": n, **_tensor(p)} for n, p in model.named_parameters()],
        "buffers": [{"name": n, **_tensor(b, stats=False)} for n, b in model.named_buffers()],
        "dropout": dropout,
        "returns": _return_names(model),
        "reassigned": _reassigned(model),
        "random_attributes": _random_attributes(mod, model, other),
        "random_buffers": [{"name": n, **_tensor(b)} for n, b in model.named_buffers()
                           if n in set(_random_buffers(mod, model, other))],
        "peak": meta_peak(mod, described),
        "torch": torch.__version__,
    }


STATE_ELEMENTS = 1 << 26
"""``describe`` does not build a model with a parameter of more than this many elements (256 MB in fp32)."""


def _huge_parameter(mod: Any) -> dict[str, Any] | None:
    """The first parameter of more than :data:`STATE_ELEMENTS` elements of the model built on the meta device
    (nothing allocated, torch's generator untouched), or None (also when the model cannot be built there).

    A VGG-style classifier (``nn.Linear(128 * 56 * 56, 4096)``, 1.6 G elements) was built for real in ``describe``,
    and on the loaded machine the allocation failed after 196 s ("the task fails when run: ...
    DefaultCPUAllocator: can't allocate memory"). A parameter is a kernel input, whose budget is 2^24 elements
    a case: the importer refuses such a task in one line that names it, before anything is built."""
    import contextlib

    import torch

    try:
        with _DynamoDeferred(), torch.random.fork_rng(devices=[]), contextlib.ExitStack() as stack:
            stack.enter_context(torch.device("meta"))
            if _DEVICES:
                stack.enter_context(_DEVICES["_PtoForgeCpuDevices"](drop=True))
            model, _ = _model(mod)
            for name, p in model.named_parameters():
                if p.numel() > STATE_ELEMENTS:
                    return {"name": name, "shape": list(p.shape), "elements": int(p.numel())}
    except Exception:  # noqa: BLE001 - vendor code that cannot build on the meta device: built for real as before
        return None
    return None


def _meta_inputs(mod: Any) -> list[Any] | None:
    """``get_inputs()`` on the meta device (shapes and dtypes, no memory); None when it cannot run there. With
    ``torch._dynamo``'s import deferred (:class:`_DynamoDeferred`: ``get_inputs()``' own ``* 0.02`` on the meta
    device loaded it), and again without when that was not enough."""
    import torch

    with _DynamoDeferred() as deferred:
        state = torch.random.get_rng_state()
        found = _meta_inputs_run(mod)
    if not deferred.needed:
        return found
    torch.random.set_rng_state(state)
    return _meta_inputs_run(mod)


def _meta_inputs_run(mod: Any) -> list[Any] | None:
    import torch

    try:
        if _DEVICES:  # device="cuda" would leave the meta device for the CPU: leave it out instead
            with torch.device("meta"), _DEVICES["_PtoForgeCpuDevices"](drop=True):
                return list(mod.get_inputs())
        with torch.device("meta"):
            return list(mod.get_inputs())
    except Exception:  # noqa: BLE001 - vendor code that needs real values (.item(), numpy): run it for real
        return None


PEAK_ELEMENTS = 1 << 26
"""``trace`` runs no case whose ``forward`` would build a tensor of more than this many elements (256 MB in fp32):
a golden that large is minutes of CPU and GBs per verification case, and the case sizes do not shrink it."""
OUTPUT_ELEMENTS = 1 << 24
"""The importer also counts the task's own sizes too large to verify with an output of more than this many (the
bound it puts on one input, ``MAX_FIXED_ELEMENTS``): the emulator verifies every element of it. The trace's guard
is :data:`PEAK_ELEMENTS` alone: the run that only names the output axes may go over this one (112 x 64 x 512 x
512's second batch row)."""


STOP: set[str] = set()
"""Calls with no PyPTO route (the request's ``stop``: the importer's ``NO_EQUIVALENT``): :func:`meta_peak` stops at
the first one, which refuses the task anyway. torch's meta GRU of KernelBench's
``GRUBidirectional`` (6 layers x 2 directions x 512 steps, decomposed) ran for 3 minutes."""


class _Stopped(Exception):
    """Raised in :func:`meta_peak`'s mode at a call of :data:`STOP`."""


def too_large(peak: dict[str, Any], *, outputs: bool = True) -> bool:
    """:func:`meta_peak`'s finding is over :data:`PEAK_ELEMENTS` (any tensor) or, with ``outputs``,
    :data:`OUTPUT_ELEMENTS` (an output)."""
    return peak["elements"] > PEAK_ELEMENTS or (outputs and any(math.prod(s) > OUTPUT_ELEMENTS
                                                                for s in peak["outputs"]))


class _DynamoDeferred:
    """While entered, ``import torch._dynamo`` gives a stand-in whose ``disable(fn)`` is ``fn``; on exit torch is as
    it was (the stand-in gone, the ``__dynamo_disable`` caches it filled removed). ``needed``: something asked the
    stand-in for anything else.

    torch's meta kernels for elementwise ops are Python references (``torch._refs``) wrapped in
    ``torch._disable_dynamo``, which imports ``torch._dynamo`` (800 modules, sympy and mpmath among them) on the
    first call: 1.7 s of CPU of every import's ``describe``, and again in the trace's child (round 9). Outside
    ``torch.compile``, ``dynamo.disable(fn)`` calls ``fn`` and nothing else, so the meta run computes the same."""

    def __init__(self) -> None:
        self.needed = False
        self.cached: list[Any] = []
        self._stub: Any = None
        self._attr: Any = None

    def __enter__(self) -> _DynamoDeferred:
        import types

        import torch

        if "torch._dynamo" in sys.modules:  # loaded already: nothing to save
            return self
        owner = self

        class Stub(types.ModuleType):
            def __getattr__(self, name: str) -> Any:
                owner.needed = True
                raise AttributeError(f"torch._dynamo.{name} (deferred during the meta run)")

        def disable(fn: Any, recursive: bool = True, wrapping: bool = True) -> Any:  # noqa: ARG001 - torch's call
            owner.cached.append(fn)
            return fn

        self._stub = Stub("torch._dynamo")
        self._stub.disable = disable
        self._attr = torch.__dict__.get("_dynamo")
        sys.modules["torch._dynamo"] = self._stub
        torch.__dict__["_dynamo"] = self._stub
        return self

    def __exit__(self, *exc: object) -> None:
        import torch

        if self._stub is None:
            return
        if sys.modules.get("torch._dynamo") is self._stub:
            del sys.modules["torch._dynamo"]
        if torch.__dict__.get("_dynamo") is self._stub:
            if self._attr is None:
                del torch.__dict__["_dynamo"]
            else:
                torch.__dict__["_dynamo"] = self._attr
        for fn in self.cached:
            if fn.__dict__.get("__dynamo_disable") is fn:
                del fn.__dict__["__dynamo_disable"]


def _MultiplyAdds() -> Any:  # noqa: N802 - a class built on first use: torch is imported lazily in this file
    """A ``TorchDispatchMode`` that adds up torch's flop formulas (``torch.utils.flop_counter.flop_registry``: mm,
    bmm, addmm, baddbmm, convolutions, attention) over the calls it sees, in ``flops``. torch's own
    ``FlopCounterMode`` does the same but also tracks modules with hooks that read ``requires_grad`` inside the
    meta run's function mode: a call the inventory would have named."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import flop_registry

    class Count(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.flops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            formula = flop_registry.get(func._overloadpacket)
            if formula is not None:
                self.flops += int(formula(*args, **kwargs, out_val=out))
            return out

    return Count()


def meta_peak(mod: Any, inputs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """:func:`_meta_peak` with ``torch._dynamo``'s import deferred (:class:`_DynamoDeferred`); run again with it
    loaded when the run asked the stand-in for more than ``disable``, so the finding is the same either way."""
    with _DynamoDeferred() as deferred:
        found = _meta_peak(mod, inputs)
    return _meta_peak(mod, inputs) if deferred.needed else found


def _meta_peak(mod: Any, inputs: list[dict[str, Any]], *, count: bool = True) -> dict[str, Any] | None:
    """What ``forward`` builds on inputs of these descriptions (shape, dtype; Python values as they are), run on the
    meta device with a model built there too, so that nothing is allocated and no generator is drawn from: the
    largest tensor any call returns (``elements``, the call's name ``op``), the outputs' shapes and the names of the
    calls (``ops``, each with whether it is a tiled pooling; ``stopped`` and no outputs when a call of :data:`STOP`
    ended the run). None when the task cannot run there (a value read with ``.item()`` or numpy, a call with no
    meta kernel): the caller then knows no more than before.

    KernelBench's ``Tall_skinny_matrix_multiplication`` multiplies two 1 M-element inputs into a 32768 x 32768
    output (4 GB): the inputs passed every size check, the trace built the product, and intake's golden run was
    killed at 11.5 GB. The sizes a run would build are now known before anything is built, and so are the calls
    with no PyPTO route (a convolution at GPU sizes was refused for its size, not for the convolution).

    ``macs`` (round 11): the multiply-adds of the run, by torch's flop formulas (:func:`_MultiplyAdds`, half the flops), where
    it ran (a run that fails with the counter is run again without it: no ``macs`` then). A 4096 x 4096 x 4096
    product builds nothing over the element bounds and is 6.9e10 multiply-adds a case."""
    import contextlib

    import torch
    from torch.overrides import TorchFunctionMode

    peak: dict[str, Any] = {"elements": 0, "op": ""}
    ops: dict[str, bool] = {}
    """Every call's name, and whether it is a pooling whose windows tile its axes (:func:`_tiled`) each time."""

    class Largest(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
            name = _op_name(func)
            tiled = name in _WINDOWED and _windowed(name, func, list(args), dict(kwargs or {}))
            ops[name] = ops.get(name, True) and tiled
            if name in STOP and not tiled:
                raise _Stopped(name)
            out = func(*args, **(kwargs or {}))
            for t in _flat(out):
                if t.numel() > peak["elements"]:
                    peak.update(elements=int(t.numel()), op=name)
            return out

    def meta(d: dict[str, Any]) -> Any:
        if d.get("kind") != "tensor":
            return d.get("value")
        return torch.empty(d["shape"], dtype=getattr(torch, d["dtype"]), device="meta")

    counter: Any = _MultiplyAdds() if count else contextlib.nullcontext()
    with torch.random.fork_rng(devices=[]), contextlib.ExitStack() as stack:
        try:
            stack.enter_context(torch.device("meta"))
            if _DEVICES:  # device="cuda" would leave the meta device: left out
                stack.enter_context(_DEVICES["_PtoForgeCpuDevices"](drop=True))
            model, _ = _model(mod)
            args = [meta(d) for d in inputs]
            with torch.no_grad(), Largest(), counter:
                out = model(*args)
        except _Stopped as stop:
            return {**peak, "outputs": [], "ops": ops, "stopped": str(stop)}
        except Exception:  # noqa: BLE001 - vendor code that needs real values: nothing is known
            failed = True
        else:
            failed = False
    if failed:  # the counter must not cost a finding: the run again without it
        return _meta_peak(mod, inputs, count=False) if count else None
    outs = _flat(out)
    if not outs:
        return None
    macs = {"macs": counter.flops // 2} if count else {}
    return {**peak, "outputs": [list(t.shape) for t in outs], "ops": ops, **macs}


def _cut(shape: list[int], limit: int = 0) -> list[int]:
    """``shape`` with its leading axes cut until it holds at most ``limit`` (:data:`SAMPLE_ELEMENTS`) elements."""
    limit = limit or SAMPLE_ELEMENTS
    out = list(shape)
    for i in range(len(out)):
        rest = math.prod(out[i + 1:])
        if math.prod(out) <= limit:
            break
        out[i] = max(1, min(out[i], limit // max(rest, 1)))
    return out


def _reduced_inputs(mod: Any, limit: int = 0) -> list[Any]:
    """``get_inputs()`` with every large tensor factory call (``randn(B, D)``, ``randint(0, n, (B, D))``,
    ``ones(shape)`` ...) cut to at most :data:`SAMPLE_ELEMENTS` elements: values with the task's distribution at a
    size this process can hold. What ``get_inputs()`` computes on them (``* 0.02``, ``.softmax(-1)``) follows."""
    import torch
    from torch.overrides import TorchFunctionMode

    def is_size(v: Any) -> bool:
        return isinstance(v, list | tuple | torch.Size) and all(isinstance(x, int) for x in v)

    class Cut(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
            kwargs = dict(kwargs or {})
            if getattr(func, "__name__", "") in _FACTORIES:
                args = list(args)
                if is_size(kwargs.get("size")):
                    kwargs["size"] = _cut(list(kwargs["size"]), limit)
                elif args and all(isinstance(a, int) for a in args) and func.__name__ not in ("randint", "full",
                                                                                                 "normal"):
                    args = _cut(args, limit)
                else:
                    at = [i for i, a in enumerate(args) if is_size(a)]
                    if at:
                        args[at[-1]] = _cut(list(args[at[-1]]), limit)
            return func(*args, **kwargs)

    with Cut():
        return list(mod.get_inputs())


def _describe_inputs(mod: Any) -> list[dict[str, Any]]:
    """Every ``get_inputs()`` value described (:func:`_value`); a task whose inputs are too large to hold here
    (:data:`DESCRIBE_ELEMENTS`) is described from its meta shapes and a reduced run's values (``"sampled"``)."""
    import torch

    torch.manual_seed(_SEED)
    meta = _meta_inputs(mod)
    total = sum(v.numel() for v in meta or [] if isinstance(v, torch.Tensor))
    if meta is None or total <= DESCRIBE_ELEMENTS:
        torch.manual_seed(_SEED)
        with _RandintBounds() as bounds:
            values = mod.get_inputs()
        described = [_value(v) for v in values]
        for d, v in zip(described, values):
            bounds.mark(d, v)
        return described
    torch.manual_seed(_SEED)
    try:
        with _RandintBounds() as cut_bounds:  # the cut keeps randint's low / high, so its draws keep their range
            small = _reduced_inputs(mod)
    except Exception as exc:  # noqa: BLE001 - one line for the importer
        raise RuntimeError(f"get_inputs() builds {total:,} elements, too many to hold here, and fails with its "
                           f"factory sizes cut down ({type(exc).__name__}: {exc})") from None
    if len(small) != len(meta) or any(isinstance(m, torch.Tensor) != isinstance(s, torch.Tensor)
                                      or (isinstance(m, torch.Tensor) and (m.dtype != s.dtype or m.dim() != s.dim()))
                                      for m, s in zip(meta, small)):
        raise RuntimeError(f"get_inputs() builds {total:,} elements, too many to hold here, and gives other values "
                           "with its factory sizes cut down")
    torch.manual_seed(_SEED)
    try:  # the same run cut 4x further: values that depend on the cut size are computed across a cut axis
        smaller = _reduced_inputs(mod, SAMPLE_ELEMENTS // 4)
    except Exception:  # noqa: BLE001 - the first reduced run stands; only the check is lost
        smaller = [None] * len(small)
    out = []
    for m, s, q in zip(meta, small, smaller):
        d = _value(s)
        cut_bounds.mark(d, s)
        if isinstance(m, torch.Tensor):
            d.update(shape=list(m.shape), sampled=list(s.shape) != list(m.shape))
            if d["sampled"] and isinstance(q, torch.Tensor) and _size_dependent(d, _value(q)):
                d["size_dependent"] = True
        out.append(d)
    return out


_SAME_VALUES = frozenset({"to", "int", "long", "short", "type", "clone", "contiguous", "cpu", "view", "reshape",
                          "flatten", "unsqueeze", "squeeze", "t", "transpose", "permute", "expand", "detach"})
"""Calls whose result holds the values of their first argument (a cast, a copy, a view): a ``randint`` draw passed
through one (``torch.randint(0, V, (B, S)).int()``, int32 ids) keeps the draw's range (:class:`_RandintBounds`)."""


class _RandintBounds:
    """Records the range each ``torch.randint`` / ``torch.randint_like`` call of ``get_inputs()`` draws from: an
    integer input's range was its sample's min and max, and 128 token ids drawn by ``randint(0, 512)`` spanned [9,
    510], so ids 0-8 and 511 - the table's first and last rows - were never drawn in any case, and a kernel that
    mishandles a table edge passed. The call's own bounds are the task's contract; a tensor computed from the draw
    (``randint(0, 10, ...) * 2``, ``% n``, ``+ 1``) is another tensor and keeps its sample's range, a cast or a view
    of it (:data:`_SAME_VALUES`) keeps the draw's. A draw changed in place afterwards (``ids.clamp_(min=1)``, ``ids
    += 1``, ``ids[ids == 0] = 1``) keeps its sample's range too: its version counter moved (a view shares it), and
    the call's range, which holds values the task never gives (0 here, a divide by zero for lengths), is not its
    own any more (session 40's first cut applied it)."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[list[int], int]] = {}
        """id of a draw (or a cast / view of one) -> ([low, high - 1], its version counter when recorded)."""
        self._keep: list[Any] = []
        self._mode: Any = None

    def of(self, t: Any) -> list[int] | None:
        """The range ``t`` was drawn from, or None (not a draw, or changed in place since)."""
        got = self.seen.get(id(t))
        if got is None or getattr(t, "_version", None) != got[1]:
            return None
        return got[0]

    def mark(self, d: dict[str, Any], t: Any) -> None:
        """Give ``d`` (``t`` described) the range ``t`` was drawn from as ``bounds``, when its sample lies in it."""
        got = self.of(t)
        if got is not None and d.get("integer") and got[0] <= d["min"] and d["max"] <= got[1]:
            d["bounds"] = list(got)

    def __enter__(self) -> _RandintBounds:
        import torch
        from torch.overrides import TorchFunctionMode

        outer = self

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
                kwargs = dict(kwargs or {})
                out = func(*args, **kwargs)
                name = _op_name(func)
                got = None
                if name == "randint":
                    got = _randint_range(list(args), kwargs)
                elif name == "randint_like" and args:
                    got = _randint_range(list(args[1:]), kwargs)
                elif name in _SAME_VALUES and args and isinstance(out, torch.Tensor) and out is not args[0]:
                    got = outer.of(args[0])
                    if name == "view" and isinstance(args[0], torch.Tensor) and out.dtype != args[0].dtype:
                        got = None  # x.view(torch.int32): the bytes read as another type, not the values
                    if got is not None and (out.is_floating_point() or out.is_complex() or out.dtype == torch.bool
                                            or not (torch.iinfo(out.dtype).min <= got[0]
                                                    and got[1] <= torch.iinfo(out.dtype).max)):
                        got = None  # a float copy, or a cast that wraps (int8 of ids up to 511)
                if got is not None and isinstance(out, torch.Tensor):
                    outer.seen[id(out)] = (got, out._version)
                    outer._keep.append(out)  # alive, so that no other tensor takes its id
                return out

        self._mode = Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._mode.__exit__(*exc)


def _randint_range(args: list[Any], kwargs: dict[str, Any]) -> list[int] | None:
    """[low, high - 1] of ``torch.randint(high, size)`` / ``randint(low, high, size)`` (keywords too), or None."""
    import numbers

    def whole(v: Any) -> bool:
        return isinstance(v, numbers.Integral) and not isinstance(v, bool)

    if "high" in kwargs:
        low, high = kwargs.get("low", args[0] if args and whole(args[0]) else 0), kwargs["high"]
    elif len(args) >= 2 and whole(args[1]):
        low, high = kwargs.get("low", args[0]), args[1]
    elif args and whole(args[0]):
        low, high = kwargs.get("low", 0), args[0]
    else:
        return None
    if not whole(low) or not whole(high) or high <= low:
        return None
    return [int(low), int(high) - 1]


def _size_dependent(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two reduced runs' statistics of one float input (4x apart in size) disagree: ``get_inputs()`` computes across
    an axis the cut shortens (``torch.randn(N).softmax(0)``: values scale with 1/N), so neither is the task's."""
    if a.get("integer") is not False or b.get("integer") is not False:
        return False
    sa, sb = float(a.get("std", 0.0)), float(b.get("std", 0.0))
    ma, mb = float(a.get("mean", 0.0)), float(b.get("mean", 0.0))
    scale = max(sa, sb)
    if scale == 0:
        return ma != mb
    return abs(sa - sb) > 0.25 * scale or abs(ma - mb) > 0.25 * max(scale, abs(ma), abs(mb))


def _dynamic_axis(hint: Any) -> list[str]:
    """``DYNAMIC_AXIS`` as a list of index names: ``["B", "S"]``, but also ``"B"`` or ``"B, S"`` (one string: its
    comma- or space-separated names, never its letters: ``"SEQ"`` is one name), ``("B",)`` or a dict keyed by the
    names (``{"T": "tokens"}``: read as no hint, it left the op dir without a dynamic axis)."""
    if isinstance(hint, str):
        return [a for a in hint.replace(",", " ").split() if a]
    if isinstance(hint, dict):
        return [str(a) for a in hint]
    if isinstance(hint, list | tuple | set | frozenset):
        return [str(a) for a in hint]
    return []


def _formula(hint: Any) -> str | None:
    """``FORMULA`` as one text: a string as it is, a list or tuple of statement strings joined with ``;`` (read as no
    formula, its tensors got no dim names and its dynamic axes were lost)."""
    if isinstance(hint, str):
        return hint
    if isinstance(hint, list | tuple) and hint and all(isinstance(x, str) for x in hint):
        return "; ".join(x.strip() for x in hint)
    return None


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

    if desc.get("kind") == "scalar":  # a Python value of get_inputs(), passed as it is
        return desc["value"]
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


_RANDOM_P = {"dropout": ("p", 1, 0.5, "training", 2, True),
             "scaled_dot_product_attention": ("dropout_p", 4, 0.0, "", -1, True),
             "multi_head_attention_forward": ("dropout_p", 10, 0.0, "training", 13, True)}
"""Calls with a dropout probability: (keyword, position, default, training keyword, position, default)."""


def _dropout_p(op: str, args: list[Any], kwargs: dict[str, Any]) -> tuple[float, bool]:
    """The dropout probability and training flag a call of :data:`_RANDOM_P` was given (``F.dropout(x, 0.1)``,
    ``scaled_dot_product_attention(q, k, v, dropout_p=0.1)``, ``nn.MultiheadAttention(dropout=0.1)`` in training
    mode): with p > 0 in training mode the output is random, so no golden can be compared."""
    key, at, default, tkey, tat, tdefault = _RANDOM_P[op]
    p = kwargs[key] if key in kwargs else (args[at] if len(args) > at else default)
    training = kwargs[tkey] if tkey in kwargs else (args[tat] if 0 <= tat < len(args) else tdefault)
    return float(p or 0.0), bool(training)


def _rrelu_spread(args: list[Any], kwargs: dict[str, Any]) -> tuple[float, bool]:
    """``F.rrelu(x, lower, upper, training)``'s spread of slopes (upper - lower) and training flag: in training mode
    (``nn.RReLU`` as KernelBench runs it) each negative element's slope is drawn from [lower, upper) on every call,
    so the output is random; in eval mode it is a leaky ReLU with slope (lower + upper) / 2 (round 13)."""
    lower = kwargs.get("lower", args[1] if len(args) > 1 else 1.0 / 8)
    upper = kwargs.get("upper", args[2] if len(args) > 2 else 1.0 / 3)
    training = kwargs.get("training", args[3] if len(args) > 3 else False)
    return float(upper) - float(lower), bool(training)


_POOLS = frozenset(f"{kind}_pool{n}d{tail}" for kind in ("avg", "max") for n in (1, 2, 3)
                   for tail in ("", "_with_indices"))
"""Pooling calls whose windows may tile the pooled axes (:func:`_tiled`)."""
_CONVS = frozenset({"conv1d", "conv2d", "conv3d"})
_WINDOWED = _POOLS | _CONVS | {"unfold"}
"""Calls over windows, which have a route when the windows tile the input (:func:`_windowed`)."""


def _windowed(op: str, func: Any, args: list[Any], kwargs: dict[str, Any]) -> bool:
    """Whether a call over windows (a pooling, a convolution, ``unfold``) has windows that tile its axes - then it
    is a view, a reshape into the windows and a reduction or a matmul (round 11: convolutions and ``unfold``)."""
    if op in _POOLS:
        return _tiled(op, args, kwargs)
    if op in _CONVS:
        return _tiled_conv(op, args, kwargs)
    return _tiled_unfold(func, args, kwargs)


def _per_axis(v: Any, n: int, default: tuple[int, ...] | None) -> tuple[int, ...] | None:
    if v is None or (isinstance(v, list | tuple) and not v):
        return default
    v = tuple(int(a) for a in v) if isinstance(v, list | tuple) else (int(v),)
    return v * n if len(v) == 1 else v


def _tiled_conv(op: str, args: list[Any], kwargs: dict[str, Any]) -> bool:
    """A convolution whose windows tile the input: one group, stride = kernel, no padding, no dilation, every
    spatial size at least one kernel (torch drops a shorter remainder). It is a reshape of the input into its
    windows and a matmul with the weight viewed ``[C_out, C_in * kernel]``: a 1 x 1 (pointwise) convolution is a
    matmul over the channels (KernelBench's ``conv_pointwise_2D``), a stride = kernel one a patch embedding (ViT).
    Overlapping, padded, dilated or grouped convolutions have the longer route over the kernel's taps since round
    12 (``_ops.WINDOW_ROUTES``)."""
    n = int(op[4])
    names = ["input", "weight", "bias", "stride", "padding", "dilation", "groups"]
    got: dict[str, Any] = {k: kwargs[k] if k in kwargs else (args[i] if len(args) > i else None) for i, k in enumerate(names)}
    x, w = got["input"], got["weight"]
    if not hasattr(x, "shape") or not hasattr(w, "shape") or w.dim() != n + 2 or x.dim() < n + 1:
        return False
    kernel = tuple(int(k) for k in w.shape[2:])
    pad = got["padding"]
    if isinstance(pad, str):
        pad = 0 if pad == "valid" or all(k == 1 for k in kernel) else None
    return (int(got["groups"] or 1) == 1 and _per_axis(got["stride"], n, (1,) * n) == kernel
            and _per_axis(pad, n, (0,) * n) == (0,) * n and _per_axis(got["dilation"], n, (1,) * n) == (1,) * n
            and all(size >= k for size, k in zip(list(x.shape)[-n:], kernel)))


def _tiled_unfold(func: Any, args: list[Any], kwargs: dict[str, Any]) -> bool:
    """``Tensor.unfold(dim, size, step)`` with step = size (ViT's ``img.unfold(2, p, p).unfold(3, p, p)``: the
    patches, a view), or ``F.unfold`` (im2col) with stride = kernel, no padding, no dilation; overlapping windows
    have the longer route over the taps (round 12)."""
    import torch

    if func is torch.nn.functional.unfold:
        names = ["input", "kernel_size", "dilation", "padding", "stride"]
        got: dict[str, Any] = {k: kwargs[k] if k in kwargs else (args[i] if len(args) > i else None) for i, k in enumerate(names)}
        kernel = _per_axis(got["kernel_size"], 2, None)
        x = got["input"]
        return (kernel is not None and hasattr(x, "shape") and x.dim() >= 3
                and _per_axis(got["stride"], 2, (1, 1)) == kernel and _per_axis(got["padding"], 2, (0, 0)) == (0, 0)
                and _per_axis(got["dilation"], 2, (1, 1)) == (1, 1)
                and all(size >= k for size, k in zip(list(x.shape)[-2:], kernel)))
    names = ["self", "dimension", "size", "step"]
    got = {k: kwargs[k] if k in kwargs else (args[i] if len(args) > i else None) for i, k in enumerate(names)}
    x, size, step = got["self"], got["size"], got["step"]
    if not hasattr(x, "shape") or not isinstance(size, int) or not isinstance(got["dimension"], int):
        return False
    return size >= 1 and step == size and x.dim() > 0 and int(x.shape[got["dimension"]]) >= size


def _tiled(op: str, args: list[Any], kwargs: dict[str, Any]) -> bool:
    """Whether a pooling call's windows tile its axes: stride == kernel (or unset), no padding, no dilation, every
    pooled size a multiple of the kernel - or, with ``ceil_mode`` off (the default), at least one kernel long, its
    last ``size % kernel`` elements in no window (torch drops them). Such a pool is a narrow to the windows, a
    reshape into them and a mean / max over them (KernelBench's ``Matmul_AvgPool_GELU_Scale_Max`` pools the
    features of a Linear in windows of 4, ``Matmul_MaxPool_Sum_Scale`` its 5 features in windows of 2: 2 windows,
    the fifth feature dropped), so it has this short route; overlapping or padded windows, and a ``ceil_mode``
    window that runs past the end, have the longer one over the window's taps (round 12, ``_ops.WINDOW_ROUTES``)."""
    n = int(op.split("_pool")[1][0])
    names = ["input", "kernel_size", "stride", "padding"] + (["dilation"] if op.startswith("max") else []) + [
        "ceil_mode"]
    got = {k: kwargs[k] if k in kwargs else (args[i] if len(args) > i else None) for i, k in enumerate(names)}

    def per_axis(v: Any, default: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if v is None or (isinstance(v, list | tuple) and not v):
            return default
        v = tuple(int(a) for a in v) if isinstance(v, list | tuple) else (int(v),)
        return v * n if len(v) == 1 else v

    kernel = per_axis(got["kernel_size"], None)
    x = got["input"]
    if kernel is None or x is None or not hasattr(x, "shape") or x.dim() < n:
        return False
    ceil = bool(got["ceil_mode"])
    return (per_axis(got["stride"], kernel) == kernel and per_axis(got["padding"], (0,) * n) == (0,) * n
            and per_axis(got.get("dilation"), (1,) * n) == (1,) * n
            and all(size % k == 0 or (not ceil and size >= k) for size, k in zip(list(x.shape)[-n:], kernel)))


SORTED_TOPK = '''

def _pto_forge_sorted_topk():
    """torch.topk(sorted=False) returns its k results in an order torch leaves unspecified (CPU: its partial sort's),
    which no kernel can know: the golden runs every such call sorted (descending, as sorted=True), and SPEC.md says
    so (written by `python -m orchestrator import`)."""
    from torch.overrides import TorchFunctionMode

    class SortedTopk(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if getattr(func, "__name__", "") == "topk":
                if kwargs.get("sorted") is False:
                    kwargs["sorted"] = True
                elif len(args) > 4 and args[4] is False:
                    args = (*args[:4], True, *args[5:])
            return func(*args, **kwargs)

    return SortedTopk()
'''
"""Written into golden.py when ``forward`` calls ``topk(sorted=False)``; the probe's trace applies the same (its
``unsorted`` mark), so the traced outputs are the golden's."""


def _unsorted_topk(op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], bool]:
    """``topk``'s arguments with ``sorted=False`` made True (as :data:`SORTED_TOPK` does), and whether it was."""
    if op != "topk":
        return args, False
    if kwargs.get("sorted") is False:
        kwargs["sorted"] = True
        return args, True
    if len(args) > 4 and args[4] is False:
        return (*args[:4], True, *args[5:]), True
    return args, False


def _sorted_topk_mode() -> Any:
    """A mode that runs ``topk(sorted=False)`` sorted (:func:`_unsorted_topk`), for the probe's extra runs."""
    from torch.overrides import TorchFunctionMode

    class SortedTopk(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
            kwargs = dict(kwargs or {})
            args, _ = _unsorted_topk(_op_name(func), tuple(args), kwargs)
            return func(*args, **kwargs)

    return SortedTopk()


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

    stepped: set[int] = set()
    """ids of the tensors of one forward run that a staircase (a round of a float, :data:`STEP_OPS`) feeds; those
    tensors stay alive for the run (``keep``), so that no other tensor gets one of their ids."""
    keep: list[Any] = []


    class Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
            kwargs = dict(kwargs or {})
            args, unsorted = _unsorted_topk(_op_name(func), tuple(args), kwargs)
            out = func(*args, **kwargs)
            entry: dict[str, Any] = {"op": _op_name(func), "in": shapes(list(args)), "out": shapes(out)}
            if unsorted:
                entry["unsorted"] = True
            if entry["op"] in _RANDOM_P:
                entry["p"], entry["training"] = _dropout_p(entry["op"], list(args), dict(kwargs or {}))
            elif entry["op"] in ("rrelu", "rrelu_"):
                entry["p"], entry["training"] = _rrelu_spread(list(args), dict(kwargs or {}))
            if entry["op"] == "where" and len(args) == 1 and not kwargs:
                entry["positions"] = True  # torch.where(cond) is nonzero's tuple, not a select (round 13)
            if entry["op"] in ("sort", "argsort") and (kwargs.get("stable") is True or (
                    entry["op"] == "argsort" and len(args) > 3 and args[3] is True)):
                entry["stable"] = True  # ties keep the input order: the tie-break is the task's contract
            if entry["op"] in STEP_OPS and any(isinstance(a, torch.Tensor) and a.is_floating_point() for a in args):
                entry["steps"] = True  # round / floor / ... of a float: a staircase (an int // is exact)
                stepped.update(id(t) for t in _flat(out))
                keep.append(out)
            elif any(id(t) in stepped for t in _flat([list(args), list(kwargs.values())])):
                stepped.update(id(t) for t in _flat(out))  # computed from a staircase: one too
                keep.append(out)
            if entry["op"] in _WINDOWED:
                entry["tiled"] = _windowed(entry["op"], func, list(args), dict(kwargs or {}))
            if isinstance(out, torch.Tensor) and out.dtype in (torch.int8, torch.uint8, torch.int16) and any(
                    isinstance(a, torch.Tensor) and a.is_floating_point() for a in args):
                entry["quantises"] = True  # float -> int8 / uint8 / int16 (``.to(torch.int8)``): a truncation step
            calls.append(entry)
            return out

    results = []
    state = {n: _fingerprint(t) for n, t in _tensor_attributes(model).items()}
    template: Any = None
    """The model's state as built (:func:`_pto_forge_snapshot`), when it is small enough to keep a copy of: the state
    check's starting point and, once forward is found to build state on its first call (``lazy``), what every later
    case starts from (golden.py does the same)."""
    lazy: list[str] = []
    cleared: set[str] = set()
    for case in cases:  # before anything is built: what a case would build, from a run on the meta device
        found = meta_peak(mod, case["inputs"]) if "inputs" in case else None
        if found and too_large(found, outputs=False):
            return {"cases": [], "too_large": found}
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
        stepped.clear()
        keep.clear()
        shared = set(overrides)
        if k == 0:
            template = _pto_forge_snapshot(model, shared) if _snapshot_bytes(model, shared) <= _COPY_BYTES else None
        if lazy:
            _pto_forge_restore(template)  # each case on the model as built, as golden.py runs it
        pristine = _cloned(args)
        registered = _registered_state(model) if k == 0 else {}
        snapshot = _state_values(model, overrides) if k == 0 else {}
        before = _model_state(model, shared)
        start = _pto_forge_snapshot(model, shared) if template is not None and not lazy else None
        with torch.no_grad(), Recorder():
            out = functional_call(model, overrides, tuple(args)) if overrides else model(*args)
        leaves = list(out) if isinstance(out, tuple | list) else [out]
        if lazy:
            pass  # started from the model as built: nothing it changes reaches another case
        elif start is not None:
            now_state = _model_state(model, shared)
            changed = sorted(n for n in before.keys() | now_state.keys() if before.get(n) != now_state.get(n))
            if set(changed) - cleared:
                other = _other_inputs(mod, case, k, args)
                end = _pto_forge_snapshot(model, shared)
                kept = _carried_state(model, overrides, pristine, other, changed, start)
                _pto_forge_restore(end)  # as the case's own run left it
                if kept:
                    return {"cases": [], "state_changed": kept, "carried": True}
                cleared.update(changed)
                built = [n for n in changed if before.get(n, ("attr",))[0] == "attr"
                         or now_state.get(n, ("attr",))[0] == "attr" or before.get(n, (None, None))[1] is None]
                if built and not lazy:
                    lazy = built
        else:
            now = {n: _fingerprint(t) for n, t in _tensor_attributes(model).items()}
            changed = sorted(n for n in state.keys() | now.keys() if state.get(n) != now.get(n))
            if changed:
                return {"cases": [], "state_changed": changed}
            if k == 0:
                kept = _kept_state(model, overrides, pristine, registered, snapshot)
                if kept:
                    return {"cases": [], "state_changed": kept}
        described = [_value(o) for o in leaves]
        traced = list(calls)
        stairs = [isinstance(o, torch.Tensor) and o.dtype in (torch.float16, torch.bfloat16) and id(o) in stepped
                  for o in leaves]
        keep.clear()
        if case.get("jitter") and any(stairs):
            _jumps(model, overrides, args, leaves, described, stairs)
        if case.get("unread"):
            result["unread"] = _unread(model, overrides, args, leaves, list(case["unread"]))
        results.append({**result, "outputs": described, "calls": traced})
    return {"cases": results, **({"lazy": lazy} if lazy else {})}


STEP_OPS = frozenset({"round", "round_", "floor", "floor_", "ceil", "ceil_", "trunc", "trunc_", "fix",
                      "floor_divide", "__floordiv__"})
"""Calls whose result is a staircase of a float input: a case that makes one gets jittered runs (:func:`_jumps`)."""


def _cloned(obj: Any) -> Any:
    """A deep copy of a forward's arguments (tensors cloned): forward may change its inputs in place (``x *= 2``,
    ``F.relu(x, inplace=True)``), and a second run must see the values the first one was given."""
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, list | tuple):
        return type(obj)(_cloned(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _cloned(v) for k, v in obj.items()}
    return obj


def _registered_state(model: Any) -> dict[str, tuple[int, str]]:
    """Fingerprints of the model's parameters and buffers (the state ``_tensor_attributes`` does not cover)."""
    named = dict(model.named_parameters())
    named.update(dict(model.named_buffers()))
    return {n: _fingerprint(t) for n, t in named.items()}


def _state_values(model: Any, skip: dict[str, Any]) -> dict[str, Any]:
    """Copies of the model's parameters and buffers before a run (those not in ``skip``, the case's overrides, which
    ``functional_call`` swaps in): the state a second run is restored to (:func:`_kept_state`)."""
    named = dict(model.named_parameters())
    named.update(dict(model.named_buffers()))
    return {n: t.detach().clone() for n, t in named.items() if n not in skip}


_STATE_SEED = 12345
"""Seed of torch's generator for each of :func:`_kept_state`'s runs (inside ``fork_rng``): a forward that draws at
random (``F.dropout(training=True)``, ``torch.rand_like``) draws the same in all three."""


def _kept_state(model: Any, overrides: dict[str, Any], args: list[Any], before: dict[str, tuple[int, str]],
                snapshot: dict[str, Any]) -> list[str]:
    """The parameters / buffers through which ``forward`` keeps state between calls (empty: none). Since session 41
    the fallback of :func:`_carried_state`, for a model whose state is too large to snapshot (:data:`_COPY_BYTES`).

    A buffer that ``forward`` updates in place (``self.ema.mul_(0.9).add_(0.1 * x.mean(0))`` and then ``x +
    self.ema``) is not a plain tensor attribute, so the attribute check missed it: the op dir imported, and its
    golden - one model built per process, as KernelBench runs it - gave each case an output that depended on the
    cases run before it. BatchNorm's running statistics change on every training-mode call too, but its output does
    not read them: so a name counts only when the output depends on the change.

    ``before`` are the fingerprints and ``snapshot`` the values (:func:`_state_values`) of the state before the first
    run. The same (pristine) inputs run twice on ``snapshot`` and once on the state the first run left, each with
    torch's generator seeded alike: the state counts when the third output differs from the first by more than the
    first two differ from each other (bit-identical on the CPU) and by more than a unit of the output's rounding. Comparing the first run's output with one rerun
    (session 40's first cut) blamed BatchNorm's running statistics for any forward that draws at random
    (``F.dropout(x, 0.5, training=True)`` after a BatchNorm was refused as "state kept in self.bn.running_mean",
    not as dropout), and its 1e-5 tolerance let a slow EMA (momentum 0.001) through."""

    changed = sorted(n for n, f in _registered_state(model).items() if before.get(n) != f)
    if not changed:
        return []
    after = _state_values(model, overrides)

    def run(state: dict[str, Any]) -> list[Any]:
        return _seeded_outputs(model, {**state, **overrides}, args)

    first = run(snapshot)
    floor = _gap(first, run(snapshot))
    moved = _gap(first, run(after))
    return changed if moved > max(2 * floor, 1.0) else []


_COPY_BYTES = 1 << 30
"""A model whose state outside the case's overrides (its own weights on the structured path, buffers, plain tensor
attributes) holds more than this is not snapshotted: the state check falls back to :func:`_kept_state`."""


def _snapshot_bytes(model: Any, shared: set[str]) -> int:
    """Bytes a :func:`_pto_forge_snapshot` of ``model`` would copy (its tensors outside ``shared``)."""
    import torch

    named = dict(model.named_parameters())
    named.update(dict(model.named_buffers()))
    own = [t for n, t in named.items() if n not in shared] + list(_tensor_attributes(model).values())
    return sum(t.numel() * t.element_size() for t in own if isinstance(t, torch.Tensor))


def _pto_forge_snapshot(model, shared=()):  # golden.py has this text too: no annotations, no project types
    """The state of ``model`` now, to be put back by :func:`_pto_forge_restore`: each module's plain attributes (deep
    copies of values: numbers, flags, tensors, lists and dicts of them; other objects as they are), the objects in its parameter / buffer / submodule tables and the values
    of its parameters and buffers (those named in ``shared``, the case's inputs that functional_call swaps in, are
    not copied). The model itself is never copied: a copy would keep closures bound to the original's submodules
    (minGPT's ``self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x)))`` ran the original's weights, not the case's).
    Written into golden.py (``inspect.getsource``) when forward builds state on its first call."""
    import copy

    import torch

    def data(v, depth=0):  # values, not behaviour: a bound method or an object is kept as it is, never copied
        if v is None or isinstance(v, (bool, int, float, complex, str, bytes, torch.Tensor, torch.Size, torch.dtype,
                                       torch.device)):
            return True
        if depth < 4 and isinstance(v, (list, tuple, set, frozenset)):
            return all(data(x, depth + 1) for x in v)
        if depth < 4 and isinstance(v, dict):
            return all(data(x, depth + 1) and data(y, depth + 1) for x, y in v.items())
        return False

    internals = set(vars(torch.nn.Module())) - {"training"}
    snap = {}
    for prefix, m in model.named_modules():
        dot = prefix + "." if prefix else ""
        attrs = {k: (True, copy.deepcopy(v)) if data(v) else (False, v) for k, v in vars(m).items()
                 if k not in internals}
        tables = {}
        for table in ("_parameters", "_buffers", "_modules"):
            tables[table] = {k: (v, None if table == "_modules" or v is None or dot + k in shared
                                 else v.detach().clone()) for k, v in getattr(m, table).items()}
        snap[prefix] = (m, attrs, tables, internals)
    return snap


def _pto_forge_restore(snap):  # golden.py has this text too
    """Put back a :func:`_pto_forge_snapshot`: attributes forward added are removed, the others get a copy of their
    saved value; tables get their saved objects back, with their saved values."""
    import copy

    for m, attrs, tables, internals in snap.values():
        for k in [k for k in vars(m) if k not in internals and k not in attrs]:
            object.__delattr__(m, k)
        for k, (copied, v) in attrs.items():
            object.__setattr__(m, k, copy.deepcopy(v) if copied else v)
        for table, saved in tables.items():
            live = getattr(m, table)
            for k in [k for k in live if k not in saved]:
                del live[k]
            for k, (obj, value) in saved.items():
                live[k] = obj
                if value is not None:
                    obj.data = value.clone()


FRESH_STATE = "\n\n" + inspect.getsource(_pto_forge_snapshot) + "\n\n" + inspect.getsource(_pto_forge_restore)
"""golden.py's copy of :func:`_pto_forge_snapshot` / :func:`_pto_forge_restore` (for a model that builds state on its
first call: each golden() call starts from the model as built)."""


def _pto_forge_take(snap, other, name):  # untyped like the two above
    """Restore ``snap``, then give the model ``name``'s value (a dotted name of :func:`_model_state`) from the snapshot
    ``other``: the state before a run with one thing the run changed."""
    import copy

    _pto_forge_restore(snap)
    prefix, _, key = name.rpartition(".")
    if prefix not in snap or prefix not in other:
        return
    m, _, _, _ = snap[prefix]
    _, attrs, tables, _ = other[prefix]
    if key in attrs:
        copied, v = attrs[key]
        object.__setattr__(m, key, copy.deepcopy(v) if copied else v)
        return
    for table, saved in tables.items():
        if key in saved:
            obj, value = saved[key]
            getattr(m, table)[key] = obj
            if value is not None:
                obj.data = value.clone()
            return
    if key in vars(m):
        object.__delattr__(m, key)


_INTERNALS: frozenset[str] | None = None


def _model_state(model: Any, shared: set[str] | frozenset[str] = frozenset()) -> dict[str, tuple[str, Any]]:
    """Everything through which a ``forward`` can keep something between calls, by dotted name: each module's
    parameters and buffers (``param`` / ``buffer``, None included: ``register_buffer("mask", None)``) and its plain
    attributes (``attr``: tensors, Python numbers, strings, tuples, lists and dicts of them - a ``self.calls += 1``
    counter, a ``self.mask = torch.tril(...)`` built on the first call, a dict cache), each as a digest of its value.
    torch's own bookkeeping (hooks, ``_modules``) is left out; ``training`` is in. Parameters / buffers named in
    ``shared`` (the case's overrides: ``functional_call`` hands forward the case's tensors instead, so the model's own
    never change) are digested by identity, not hashed (a level3 network's weights are hundreds of MB)."""
    import torch

    global _INTERNALS
    if _INTERNALS is None:
        _INTERNALS = frozenset(vars(torch.nn.Module())) - {"training"}

    def digest(v: Any, depth: int = 0) -> Any:
        if isinstance(v, torch.Tensor):
            return ("tensor", tuple(v.shape), str(v.dtype), _fingerprint(v)[1])
        if v is None or isinstance(v, bool | int | float | complex | str | bytes):
            return repr(v)
        if depth < 4 and isinstance(v, list | tuple):
            return (type(v).__name__, tuple(digest(x, depth + 1) for x in v))
        if depth < 4 and isinstance(v, dict):
            return ("dict", tuple((repr(key), digest(x, depth + 1)) for key, x in v.items()))
        return ("object", type(v).__name__, id(v))

    state: dict[str, tuple[str, Any]] = {}
    for prefix, m in model.named_modules():
        dot = f"{prefix}." if prefix else ""
        for key, v in vars(m).items():
            if key in _INTERNALS or isinstance(v, torch.nn.Module):
                continue
            state[dot + key] = ("attr", digest(v))
        for kind, table in (("param", m._parameters), ("buffer", m._buffers)):
            for key, v in table.items():
                state[dot + key] = (kind, None if v is None else ("shared", id(v)) if dot + key in shared
                                    else digest(v))
    return state


def _other_inputs(mod: Any, case: dict[str, Any], k: int, args: list[Any]) -> list[Any] | None:
    """Inputs of the case's shapes with other values (a second draw; ``get_inputs()`` under another seed on the
    structured path), or None when they would have other shapes."""
    import torch

    if "seed" in case:
        other, _ = _given(mod, int(case["seed"]) + 7919)
    else:
        gen = torch.Generator().manual_seed(5000 + k)
        other = [_make(d, gen) for d in case["inputs"]]
    same = len(other) == len(args) and all(
        (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype)
        or (not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor)) for a, b in zip(args, other))
    return other if same else None


def _flat(obj: Any) -> list[Any]:
    """The tensors of a forward's output (nested lists / tuples), in order."""
    import torch

    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, list | tuple):
        return [t for o in obj for t in _flat(o)]
    return []


def _seeded_outputs(model: Any, overrides: dict[str, Any], inputs: list[Any]) -> list[Any]:
    """The output tensors of one forward on copies of ``overrides`` / ``inputs``, torch's generator seeded with
    :data:`_STATE_SEED` (and restored after): the runs the state checks compare draw alike."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(_STATE_SEED)
        return _flat(_call(model, _cloned(overrides), _cloned(inputs)))


def _gap(xs: list[Any], ys: list[Any]) -> float:
    """Largest difference of two runs' outputs, in units of each output's rounding (its dtype's eps times 1 + its
    largest magnitude): inf for other shapes, dtypes, nan positions or integers."""
    import torch

    if len(xs) != len(ys):
        return math.inf
    worst = 0.0
    for a, b in zip(xs, ys):
        if a.shape != b.shape or a.dtype != b.dtype:
            return math.inf
        if not (a.is_floating_point() or a.is_complex()):
            if not torch.equal(a, b):
                return math.inf
            continue
        x, y = a.double(), b.double()
        if not bool((torch.isnan(x) == torch.isnan(y)).all()):
            return math.inf
        x, y = torch.nan_to_num(x, nan=0.0), torch.nan_to_num(y, nan=0.0)
        if x.numel():
            unit = torch.finfo(a.real.dtype if a.is_complex() else a.dtype).eps
            worst = max(worst, float((x - y).abs().max()) / (unit * (1.0 + float(x.abs().max()))))
    return worst


def _carried_state(model: Any, overrides: dict[str, Any], args: list[Any], other: list[Any] | None,
                   changed: list[str], start: dict[str, Any]) -> list[str]:
    """The names among ``changed`` (what a first run changed in the model: :func:`_model_state`) through which
    ``forward`` carries something from one call to the next (empty: none; the model is then a function of its
    inputs, as golden.py needs).

    ``start`` is the model's state before that run (:func:`_pto_forge_snapshot`). From it, ``args`` run once, which
    leaves the state a first call leaves; then ``args`` and ``other`` (same shapes, other values) run from that state
    and from ``start``, every run with torch's generator seeded alike. The state is carried when an output from the
    left state differs from the fresh one's beyond the rounding (and beyond what two fresh runs differ by): an EMA or
    a counter read by forward (``x * self.calls``), a first-call flag, a scale calibrated on the first call's values.
    A mask, a RoPE table or a position cache that forward builds on its first call from the shapes (``if self.mask is
    None: self.mask = torch.tril(...)``) gives the same outputs both ways: deterministic state built lazily, as if
    ``__init__`` had built it (session 41: refused as state before). So do BatchNorm's running statistics in training
    mode (changed, never read) and a value drawn at random lazily (the same under the same seed: the random call is
    refused by its name elsewhere, not blamed on the attribute). A left state that makes forward fail counts as
    carried. The model is left in some state of these runs: the caller restores the one it wants.

    Names: those whose value taken alone from the left state moves an output; all of ``changed`` when none does
    alone."""
    shared = set(overrides)

    def run(inputs: list[Any]) -> list[Any]:
        return _seeded_outputs(model, overrides, inputs)

    _pto_forge_restore(start)
    first = run(args)
    left = _pto_forge_snapshot(model, shared)
    _pto_forge_restore(start)
    floor = _gap(first, run(args))
    probes = [(args, first)]
    if other is not None:
        _pto_forge_restore(start)
        try:
            probes.append((other, run(other)))
        except Exception:  # noqa: BLE001 - the second draw breaks the fresh model too: compare the first inputs only
            pass

    def moved(put: Any) -> bool:
        for inputs, fresh in probes:
            put()
            try:
                got = run(inputs)
            except Exception:  # noqa: BLE001 - the left state breaks forward: it is read
                return True
            if _gap(fresh, got) > max(2 * floor, 1.0):
                return True
        return False

    if not moved(lambda: _pto_forge_restore(left)):
        return []
    blamed = [name for name in changed if moved(lambda name=name: _pto_forge_take(start, left, name))]
    return blamed or list(changed)


def _call(model: Any, overrides: dict[str, Any], args: list[Any]) -> list[Any]:
    import torch
    from torch.func import functional_call

    with torch.no_grad(), _sorted_topk_mode():
        out = functional_call(model, overrides, tuple(args)) if overrides else model(*args)
    return list(out) if isinstance(out, tuple | list) else [out]


def _nudged(args: list[Any], ulps: int, seed: int) -> list[Any]:
    """``args`` with half of each float tensor's elements (a seeded random half) moved by ``ulps`` units of their
    own dtype's rounding, up or down at random (the other elements, ints and Python values as they are)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel():
            d = a.double()
            unit = torch.exp2(torch.floor(torch.log2(d.abs().clamp_min(torch.finfo(a.dtype).tiny))))
            unit = unit * torch.finfo(a.dtype).eps
            pick = torch.rand(a.shape, generator=gen, dtype=torch.float64) < 0.5
            sign = torch.where(torch.rand(a.shape, generator=gen, dtype=torch.float64) < 0.5, -1.0, 1.0)
            out.append(torch.where(pick, d + sign * ulps * unit, d).to(a.dtype))
        else:
            out.append(a)
    return out


def _jumps(model: Any, overrides: dict[str, Any], args: list[Any], leaves: list[Any],
           described: list[dict[str, Any]], stairs: list[bool]) -> None:
    """Mark each half-precision output that a staircase feeds (``stairs``: ``forward`` rounded a float on its way)
    with ``jump``: the largest change it makes when half of the float inputs' elements move by one unit of their
    rounding.

    A fake quantisation (``round(x / s) * s`` returned as a float) is a staircase: a kernel that rounds ``x / s`` in
    another precision (fp32 inside an fp16 op, the usual kernel) lands on the neighbouring step wherever ``x / s``
    sits within that rounding of a half - 0.5% of the elements of an fp16 case, 5% in bf16 (session 39, measured) -,
    and is one whole step off there, far beyond the dtype's tolerance. Moving the inputs by that rounding finds the
    step without knowing the scale (a per-token scale has one per row). Outputs no rounding feeds are not measured:
    a continuous bf16 ``x1 + x2`` moves by a unit of each input under the same nudge, which a kernel computing it
    does not (round 5's first cut loosened an add + RMSNorm's residual output so)."""
    import torch

    again = _call(model, overrides, _nudged(args, 1, 7))
    for d, o, o2, stair in zip(described, leaves, again, stairs):
        if stair and isinstance(o2, torch.Tensor) and o2.shape == o.shape and o.numel():
            diff = (o2.double() - o.double()).abs()
            diff = diff[torch.isfinite(diff)]
            d["jump"] = float(diff.max()) if diff.numel() else 0.0


def _unread(model: Any, overrides: dict[str, Any], args: list[Any], leaves: list[Any], names: list[str]) -> list[str]:
    """The buffers among ``names`` whose values ``forward`` never reads: every output is bit-identical with the
    buffer redrawn and with it negated and shifted (``torch.zeros_like(self.state)`` reads only its shape). Such a
    buffer stays inside the golden; as a kernel input it was noise (round 4, still open). A buffer whose other
    values make forward fail (a permutation redrawn with -1 in it) is read."""
    import torch

    own = dict(model.named_buffers())
    gen = torch.Generator().manual_seed(11)
    unread = []
    for name in names:
        b = own.get(name)
        if not isinstance(b, torch.Tensor) or b.numel() == 0:
            continue
        if b.dtype == torch.bool:
            others = [~b]
        elif b.is_floating_point():
            others = [torch.randn(b.shape, generator=gen).to(b.dtype), (-b.double() - 1.5).to(b.dtype)]
        else:
            others = [torch.randint(-7, 8, b.shape, generator=gen).to(b.dtype), (b.long() * 3 + 1).to(b.dtype)]
        same = True
        for other in others:
            try:
                outs = _call(model, {**overrides, name: other}, args)
            except Exception:  # noqa: BLE001 - other values break forward (indices out of range): they are read
                same = False
                break
            if len(outs) != len(leaves) or not all(
                    isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape == y.shape
                    and torch.equal(torch.nan_to_num(x.double(), nan=0.5), torch.nan_to_num(y.double(), nan=0.5))
                    for x, y in zip(outs, leaves)):
                same = False
                break
        if same:
            unread.append(name)
    return unread


def main(argv: list[str]) -> int:
    channel = os.fdopen(int(argv[1]), "w", encoding="utf-8")
    request = json.loads(sys.stdin.read())
    STOP.update(request.get("stop", ()))
    try:
        if request["mode"] == "describe":
            answer: dict[str, Any] = {"ok": True, **describe(request["task"])}
        else:
            answer = {"ok": True, **trace(request["task"], request["cases"])}
    except BaseException as exc:  # noqa: BLE001 - every failure of vendor code is reported, one line
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == os.path.abspath(request["task"])]
        where = f" (line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:300] if str(exc) else type(exc).__name__
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            text = (f"it imports {exc.name}, which is not installed in the importing Python ({sys.executable}); "
                    f"install it there to import this task ({text})")
        answer = {"ok": False, "error": text + where}
    channel.write(json.dumps(answer))
    channel.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
