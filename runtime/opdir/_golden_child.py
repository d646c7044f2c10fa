"""The child process that imports golden.py and runs it: ``python _golden_child.py <workdir>``.

Run by :mod:`runtime.opdir._golden_runner` in a fresh interpreter, with the temporary ``workdir`` as its current
directory and bytecode writing disabled (nothing is ever written next to golden.py). It reads ``request.json``
(+ ``inputs.npz``, unless ``make_inputs`` makes the inputs: then it writes it) and writes ``outputs.npz``,
``mids.npz`` (unless the request says ``"intermediates": false``) and last ``result.json``. One file per kind
holds every case, the arrays of the i-th case under keys ``"<i>/<name>"`` (:class:`runtime.arrays.ArrayWriter`).

Intermediates are captured without the golden's cooperation (``_Capture``): a ``sys.settrace`` hook traces the
outermost ``golden`` frame only (its callees get no line events), notes the order in which its locals are first
bound and snapshots them at its ``return`` event; array-valued ones are kept, in binding order (data-flow order).
With ``deep`` in the request (bisection) the functions golden calls from golden.py's folder are traced too.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import signal
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True
_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import numpy as np  # noqa: E402

from runtime.arrays import ArrayReader, ArrayWriter, open_arrays  # noqa: E402 - numpy + runtime.dtypes only
from runtime.dtypes import TORCH_BY_BYTES, DTypeError, name_of  # noqa: E402
from runtime.stages import MODULES_DIR, parse_stage_name  # noqa: E402 - stdlib only


class _TorchNpuOnDemand:
    """``import torch_npu`` in golden.py (a gym golden computes with ``torch_npu.npu_rms_norm`` ...) loads the
    emulator's CPU stand-in (`runtime.emulator._torch_npu`), as the gym runner does: there is no NPU here. Only
    then is the emulator imported (~150 ms), so a golden that does not use torch_npu pays nothing."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "torch_npu" and not fullname.startswith("torch_npu."):
            return None
        from runtime.emulator._torch_npu import NpuFinder, install_finder

        install_finder()
        return NpuFinder().find_spec(fullname, path, target)


if not any(isinstance(f, _TorchNpuOnDemand) for f in sys.meta_path):
    sys.meta_path.insert(0, _TorchNpuOnDemand())


class _NoKernelFiles:
    """golden.py never imports a kernel file of its op dir (``<op>_impl.py``, ``modules/``): the agents write
    those, and golden.py runs outside the sandbox - such an import would run model code in a trusted process.
    Checked for top-level names only (a submodule lives where its package does), so ``import torch`` pays nothing."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if path is not None or "." in fullname:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(fullname)
        where = [spec.origin] if spec is not None and spec.origin else list(
            getattr(spec, "submodule_search_locations", None) or [])
        modules = self.root / MODULES_DIR
        for w in where:
            f = Path(w).resolve()
            if f == modules or modules in f.parents or (
                    f.parent == self.root and parse_stage_name(f.name).kind != "other"):
                raise ImportError(f"golden.py may not import {f.relative_to(self.root)}: it is a kernel file the "
                                  "agents write, and golden.py runs outside the sandbox")
        return None


class _CaseTimeout(BaseException):
    """A case ran past its time limit (raised by SIGALRM; a BaseException so a golden's ``except Exception``
    cannot swallow it)."""


def _on_alarm(signum: int, frame: Any) -> None:  # noqa: ARG001 - signal handler signature
    raise _CaseTimeout


class _Failure(Exception):
    def __init__(self, kind: str, message: str, line: int | None = None, tb: str = "") -> None:
        super().__init__(message)
        self.kind, self.message, self.line, self.tb = kind, message, line, tb


def _golden_line(exc: BaseException, golden_file: str) -> tuple[int | None, str]:
    """The last traceback line inside golden.py, and the formatted traceback limited to golden frames."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if f.filename == golden_file]
    text = "".join(traceback.format_list(mine)) + "".join(traceback.format_exception_only(type(exc), exc))
    return (mine[-1].lineno if mine else None), text


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _to_numpy(value: Any) -> np.ndarray | None:
    """numpy (or torch CPU) array-likes as numpy arrays; anything else None."""
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.split(".")[0] == "torch" and hasattr(value, "detach"):
        t = value.detach().cpu()
        name = str(t.dtype).removeprefix("torch.")
        if name in TORCH_BY_BYTES:  # bf16, FP8: no numpy dtype in torch, they cross by a view of their bytes
            import ml_dtypes
            import torch

            raw = t.contiguous().view(getattr(torch, TORCH_BY_BYTES[name])).numpy()
            return raw.view(getattr(ml_dtypes, name))
        return t.numpy()
    return None


def _storable(arr: np.ndarray) -> bool:
    try:
        name_of(arr.dtype)
        return True
    except DTypeError:
        return False


def _load_module(path: Path) -> types.ModuleType:
    # utf-8-sig: a byte-order mark (an editor's UTF-8 "with signature") is dropped, as Python drops it from a source
    # file; it was "syntax error: invalid non-printable character U+FEFF" (UX audit s47)
    source = path.read_text(encoding="utf-8-sig")
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise _Failure("syntax", f"syntax error: {exc.msg}", exc.lineno) from None
    module = types.ModuleType("golden")
    module.__file__ = str(path)
    sys.modules["golden"] = module
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))
    if not any(isinstance(f, _NoKernelFiles) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoKernelFiles(path.parent))
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - any failure of user code is reported, not raised
        line, tb = _golden_line(exc, str(path))
        raise _Failure("import", f"importing golden.py failed: {_describe(exc)}", line, tb) from None
    return module


def _outputs(result: Any, names: list[str]) -> dict[str, np.ndarray]:
    """Map golden's return value to the SPEC output names (one array, a tuple/list, or a dict)."""
    if isinstance(result, dict):
        keys = [str(k) for k in result]
        if sorted(keys) != sorted(names):
            raise _Failure("bad_output", f"golden returned a dict with keys {keys}; SPEC.md declares outputs {names}")
        items = [(n, result[n]) for n in names]
    elif isinstance(result, (tuple, list)):
        if len(result) != len(names):
            raise _Failure("bad_output", f"golden returned {len(result)} values; SPEC.md declares "
                                         f"{len(names)} output(s) {names}")
        items = list(zip(names, result))
    else:
        if len(names) != 1:
            raise _Failure("bad_output", f"golden returned one value; SPEC.md declares {len(names)} outputs {names}")
        items = [(names[0], result)]
    out: dict[str, np.ndarray] = {}
    for name, value in items:
        arr = _to_numpy(value)
        if arr is None and isinstance(value, (int, float, bool, np.generic)):
            arr = np.asarray(value)
        if arr is None or not _storable(arr):
            what = type(value).__name__ if arr is None else f"array of dtype {arr.dtype}"
            raise _Failure("bad_output", f"output '{name}' is a {what}; golden must return numpy arrays "
                                         "with a supported dtype")
        out[name] = arr
    return out


_COMPOSITES = frozenset({"softmax", "log_softmax"})
"""torch functions whose steps the deep capture keeps as well (``_Capture._composite``)"""


class _Capture:
    """Captures the golden's named intermediates without its cooperation (a ``sys.settrace`` hook).

    Default: the outermost ``golden`` frame only (its callees get no line events and run at full speed); its
    locals are noted in the order they are first bound and snapshot at its ``return`` event.

    ``deep`` (bisection: ``run_golden(..., deep=True)``): also the functions ``golden`` calls that are defined
    in golden.py's folder (a gym golden behind an adapter ``golden(...)``, its helpers), up to ``_DEPTH`` calls
    down, so a torch golden's locals are captured as a numpy golden's are. Names: a callee's local keeps its
    plain name unless a different value has that name elsewhere (then ``function.name``, and
    ``function.name@k`` for the k-th call of a helper called several times); a value captured under one name is
    not repeated under another (an argument handed down). A name re-bound to a new value (``h = h / s`` in a
    loop) keeps its first value as ``name#1`` besides its last as ``name``: an iterative golden otherwise shows
    only its final state. With torch loaded, every tensor a torch function returns inside those functions is kept
    too, as ``golden.py:<line> <function>`` (``@k`` for its k-th execution) unless a local names it: the golden's
    unnamed subexpressions (``torch.sqrt(ms + eps)``'s ``ms + eps``), within ``op_budget`` bytes. Order: first
    binding over all frames (data-flow order).
    """

    _DEPTH = 4

    def __init__(self, target: Any, golden_file: str | None, op_budget: int = 0) -> None:
        self.target = target
        self.op_budget = op_budget
        self.op_bytes = 0
        self.op_counts: dict[tuple[int, str], int] = {}
        self.base = Path(golden_file).name if golden_file else ""
        self.root = str(Path(golden_file).resolve().parent) + "/" if golden_file else None
        self.rank: dict[str, int] = {}
        self.found: dict[str, Any] = {}
        self.started = False
        self.frames: dict[int, tuple[int, int, str, int]] = {}
        """id(frame) -> (serial, depth, function name, call number of that function) while the frame runs"""
        self.calls: dict[str, int] = {}
        self.clock = 0
        self.serial = 0
        self.first: dict[tuple[int, str], tuple[int, Any]] = {}
        self.last: dict[tuple[int, str], tuple[int, Any]] = {}
        self.entries: list[tuple[int, int, int, str, int, str, str, Any]] = []
        """(rank, serial, depth, function, call number, name, suffix, value) of every captured binding"""
        self.op_of: dict[int, tuple[tuple[int, str], int]] = {}
        """id(kept torch result) -> ((golden line, op), k): the k-th execution of that line's op"""
        self.families: dict[str, tuple[str, int, int]] = {}
        """captured name -> (family ``golden.py:<line> <op>``, k, count): the value is the k-th of ``count``
        executions of one golden line's op (a loop), whether it is kept under that label (``@k``) or under the name
        of a local bound to it (``h#1``, ``h``: the first and last of a re-bound local). Bisection compares the j-th
        execution of a kernel loop line with the j-th of a family, not with whichever converged iteration is
        closest (``values`` fills it)."""

    # -- tracing -----------------------------------------------------------------------------------------
    def global_trace(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event != "call":
            return None
        if not self.started and self.target is not None and frame.f_code is self.target:
            self.started = True
            self.frames[id(frame)] = (0, 0, frame.f_code.co_name, 1)
            return self._deep if self.root is not None else self._shallow
        if self.root is None or not self.frames:
            return None  # no line events anywhere else: the golden's callees run at full speed
        parent = self.frames.get(id(frame.f_back)) if frame.f_back is not None else None
        if parent is None or parent[1] >= self._DEPTH or not frame.f_code.co_filename.startswith(self.root):
            return None
        name = frame.f_code.co_name
        self.calls[name] = self.calls.get(name, 0) + 1
        self.serial += 1
        self.frames[id(frame)] = (self.serial, parent[1] + 1, name, self.calls[name])
        return self._deep

    def _shallow(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event in ("line", "return"):
            for name in frame.f_locals:
                self.rank.setdefault(name, len(self.rank))
        if event == "return":
            self.found.update(frame.f_locals)
        return self._shallow

    def _deep(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event not in ("line", "return"):
            return self._deep
        info = self.frames.get(id(frame))
        if info is None:
            return None
        serial = info[0]
        for name, value in frame.f_locals.items():
            if not _arraylike(value):
                continue
            slot = (serial, name)
            prev = self.last.get(slot)
            if prev is None or prev[1] is not value:
                self.clock += 1
                self.last[slot] = (self.clock, value)
                self.first.setdefault(slot, (self.clock, value))
        if event == "return":
            _serial, depth, func, call = self.frames.pop(id(frame))
            for (s, name), (rank, value) in list(self.last.items()):
                if s != serial:
                    continue
                r1, v1 = self.first.pop((s, name))
                del self.last[(s, name)]
                if v1 is not value:
                    self.entries.append((r1, serial, depth, func, call, name, "#1", v1))
                self.entries.append((rank, serial, depth, func, call, name, "", value))
        return self._deep

    def ops(self) -> Any:
        """A context in which torch function results computed in the golden's code are kept (deep mode)."""
        import contextlib

        torch = sys.modules.get("torch")
        if self.root is None or torch is None or self.op_budget <= 0:
            return contextlib.nullcontext()
        from torch.overrides import TorchFunctionMode

        cap = self
        skip = {"__get__", "__set__", "size", "dim", "numel", "item", "tolist", "__len__", "__repr__", "__format__",
                "__bool__", "__iter__", "__index__", "__int__", "__float__", "data_ptr", "stride", "is_contiguous",
                "element_size", "__hash__", "__contains__"}

        class _Ops(TorchFunctionMode):
            def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                out = func(*args, **(kwargs or {}))
                name = getattr(func, "__name__", "") or ""
                if name not in skip and cap.started:
                    cap._op(name, out, args, torch)
                    if name in _COMPOSITES:
                        cap._composite(name, out, args, kwargs or {}, torch)
                return out

        return _Ops()

    def _composite(self, name: str, out: Any, args: Any, kwargs: dict, torch: Any) -> None:
        """Keep the steps of a composite torch function too (``softmax`` = max, exp(x - max), sum, ...): a kernel
        computes them as separate ops, often tile by tile, and without them nothing before the kernel's output has
        a golden value to compare with. Computed in float32 from the same input, as a kernel does."""
        x = args[0] if args else kwargs.get("input")
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        if not isinstance(x, torch.Tensor) or not isinstance(dim, int) or x.numel() == 0:
            return
        xf = x.detach().float()
        m = torch.amax(xf, dim=dim, keepdim=True)
        e = torch.exp(xf - m)
        s = torch.sum(e, dim=dim, keepdim=True)
        for step, v in (("max", m), ("shifted", xf - m), ("exp", e), ("sum", s)):
            self._op(f"{name}.{step}", v, (), torch, depth=3)

    def _op(self, name: str, out: Any, args: Any, torch: Any, depth: int = 2) -> None:
        if not isinstance(out, torch.Tensor) or out.numel() == 0 or any(out is a for a in args):
            return
        f = sys._getframe(depth)
        while f is not None and not f.f_code.co_filename.startswith(self.root or "\0"):
            f = f.f_back
        if f is None or id(f) not in self.frames:
            return
        size = out.numel() * out.element_size()
        if self.op_bytes + size > self.op_budget:
            return
        self.op_bytes += size
        key = (f.f_lineno, name.strip("_"))
        k = self.op_counts[key] = self.op_counts.get(key, 0) + 1
        label = f"{self.base}:{key[0]} {key[1]}" + (f"@{k}" if k > 1 else "")
        self.op_of[id(out)] = (key, k)
        self.clock += 1
        _serial, depth, func, call = self.frames[id(f)]
        self.entries.append((self.clock, -1, depth, func, call, label, "", out))

    # -- results -----------------------------------------------------------------------------------------
    def values(self) -> list[tuple[str, Any]]:
        """Captured locals, in the order they were first bound."""
        if self.root is None:
            return sorted(self.found.items(), key=lambda kv: self.rank.get(kv[0], len(self.rank)))
        entries = sorted(self.entries, key=lambda e: e[0])
        named = {id(e[-1]) for e in entries if e[1] >= 0}
        entries = [e for e in entries if e[1] >= 0 or id(e[-1]) not in named]  # a local names it: keep the name
        seen: set[int] = set()
        kept = []
        for e in entries:
            if id(e[-1]) in seen:
                continue  # the same object under another name (an argument handed down)
            seen.add(id(e[-1]))
            kept.append(e)
        owners: dict[str, list[tuple[int, int]]] = {}
        """plain name -> (depth, serial) of the frames that bind it, shallowest and earliest first"""
        for e in kept:
            if e[1] < 0:
                continue
            owners.setdefault(e[5], [])
            if (e[2], e[1]) not in owners[e[5]]:
                owners[e[5]].append((e[2], e[1]))
        for v in owners.values():
            v.sort()
        out: list[tuple[str, Any]] = []
        self.families = {}
        for _rank, serial, depth, func, call, name, suffix, value in kept:
            key = name
            if serial >= 0 and owners[name][0] != (depth, serial):
                key = f"{func}.{name}" + (f"@{call}" if call > 1 else "")
            out.append((key + suffix, value))
            fam = self.op_of.get(id(value))
            if fam is not None and self.op_counts.get(fam[0], 0) > 1:
                line, op = fam[0]
                self.families[key + suffix] = (f"{self.base}:{line} {op}", fam[1], self.op_counts[fam[0]])
        return out


def _arraylike(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return True
    return type(value).__module__.split(".")[0] == "torch" and hasattr(value, "detach")


class _Files:
    """The run's array files (module docstring): inputs read or written, outputs and intermediates written."""

    INPUTS, OUTPUTS, MIDS = "inputs.npz", "outputs.npz", "mids.npz"

    def __init__(self, workdir: Path, req: dict, stack: contextlib.ExitStack) -> None:
        self.made_inputs: ArrayWriter | None = None
        self.given_inputs: ArrayReader | None = None
        if req["make_inputs"]:
            self.made_inputs = stack.enter_context(ArrayWriter(workdir / self.INPUTS))
        else:
            self.given_inputs = stack.enter_context(open_arrays(workdir / self.INPUTS))
        self.outputs = stack.enter_context(ArrayWriter(workdir / self.OUTPUTS))
        self.mids = stack.enter_context(ArrayWriter(workdir / self.MIDS)) if req.get("intermediates", True) else None


def _run_case(module: types.ModuleType, golden_file: str, req: dict, index: int, case: dict, files: _Files) -> dict:
    golden = module.__dict__["golden"]
    n_inputs = int(req["n_inputs"])
    if req["make_inputs"]:
        rng = np.random.default_rng(case["seed"])
        try:
            made = module.__dict__["make_inputs"](dict(case), rng)
        except _CaseTimeout:
            raise
        except BaseException as exc:  # noqa: BLE001
            line, tb = _golden_line(exc, golden_file)
            raise _Failure("make_inputs", f"make_inputs raised {_describe(exc)}", line, tb) from None
        if isinstance(made, dict):
            if sorted(made) != sorted(req["input_names"]):
                raise _Failure("make_inputs", f"make_inputs returned keys {sorted(made)}; SPEC.md declares "
                                              f"inputs {req['input_names']}")
            made = [made[n] for n in req["input_names"]]
        if not isinstance(made, (list, tuple)) or len(made) != n_inputs:
            raise _Failure("make_inputs", f"make_inputs must return a list of {n_inputs} arrays "
                                          f"(inputs {req['input_names']}), got {type(made).__name__}"
                                          + (f" of length {len(made)}" if isinstance(made, (list, tuple)) else ""))
        inputs = []
        for name, value in zip(req["input_names"], made):
            arr = _to_numpy(value)
            if arr is None or not _storable(arr):
                raise _Failure("make_inputs", f"make_inputs returned a {type(value).__name__} for input "
                                              f"'{name}'; expected a numpy array")
            inputs.append(arr)
        assert files.made_inputs is not None
        for name, arr in zip(req["input_names"], inputs):
            files.made_inputs.add(f"{index}/{name}", arr)
    else:
        assert files.given_inputs is not None
        inputs = list(files.given_inputs.group(f"{index}/").values())

    target = getattr(inspect.unwrap(golden), "__code__", None)  # None: a callable object, no locals to capture
    try:
        params = inspect.signature(golden).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    positional = list(params)[:n_inputs]
    attrs = {**req["attrs"], **(case.get("attrs") or {})}  # an attribute case's own values (`Case.attrs`)
    kwargs = {k: v for k, v in attrs.items()
              if k in params and k not in positional
              and params[k].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}
    budget = min(2 * 1024**3, max(64 * 1024**2, 4 * sum(int(a.nbytes) for a in inputs)))
    cap = _Capture(target, golden_file if req.get("deep") else None, op_budget=budget)
    args = [a.copy() for a in inputs]
    start = time.perf_counter()
    if files.mids is not None:  # intermediates not asked for (intake's check): golden runs untraced
        sys.settrace(cap.global_trace)
    try:
        with cap.ops():
            result = golden(*args, **kwargs)
    except _CaseTimeout:
        raise
    except BaseException as exc:  # noqa: BLE001
        sys.settrace(None)
        line, tb = _golden_line(exc, golden_file)
        raise _Failure("exception", f"golden raised {_describe(exc)}", line, tb) from None
    finally:
        sys.settrace(None)
    duration = time.perf_counter() - start
    outputs = _outputs(result, req["output_names"])
    mids: dict[str, np.ndarray] = {}
    for name, value in cap.values() if files.mids is not None else ():
        arr = _to_numpy(value)
        if arr is not None and _storable(arr):
            mids[name] = arr
    if _NOISE is not None:  # test mode: the golden's float results as another CPU would give them
        outputs = {k: _NOISE.perturb(v) for k, v in outputs.items()}
        mids = {k: v if k in req["input_names"] else _NOISE.perturb(v) for k, v in mids.items()}
    for name, arr in outputs.items():
        files.outputs.add(f"{index}/{name}", arr)
    for name, arr in mids.items():
        assert files.mids is not None
        files.mids.add(f"{index}/{name}", arr)
    fams = {k: list(v) for k, v in cap.families.items() if k in mids}
    return {"name": case["name"], "duration_s": duration, **({"families": fams} if fams else {})}


def _timed_case(module: types.ModuleType, golden_file: str, req: dict, index: int, case: dict, files: _Files) -> dict:
    """One case under its own time limit (``case_timeout``): an endless loop stops this case, and with it the
    batch, after one limit, not after the whole batch's budget."""
    limit = float(req.get("case_timeout") or 0)
    if limit > 0:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return _run_case(module, golden_file, req, index, case, files)
    except _CaseTimeout:
        raise _Failure("timeout", f"golden.py did not finish case {case['name']} within {limit:g} s (the limit per "
                                  "case); is there an endless loop?") from None
    finally:
        if limit > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)


def main(workdir: Path) -> int:
    req = json.loads((workdir / "request.json").read_text(encoding="utf-8"))
    golden_file = req["golden"]
    try:
        module = _load_module(Path(golden_file))
        if not callable(module.__dict__.get("golden")):
            raise _Failure("missing_function", "golden.py defines no function 'golden(*inputs)'")
        if req["make_inputs"] and not callable(module.__dict__.get("make_inputs")):
            raise _Failure("missing_function", "make_inputs is not a function")
        with contextlib.ExitStack() as stack:  # the files are complete (closed) before result.json says ok
            files = _Files(workdir, req, stack)
            done = [_timed_case(module, golden_file, req, i, case, files) for i, case in enumerate(req["cases"])]
        reply: dict[str, Any] = {"ok": True, "cases": done}
    except _Failure as f:
        reply = {"ok": False, "kind": f.kind, "message": f.message, "line": f.line, "traceback": f.tb}
    (workdir / "result.json").write_text(json.dumps(reply), encoding="utf-8")
    return 0


_NOISE: Any = None


def _child_main() -> int:
    """What a golden child does with ``sys.argv`` = ``[script, <workdir>, *noise args]`` (the noise argument is
    removed before golden.py runs)."""
    global _NOISE
    from runtime import testmodes

    _NOISE = testmodes.activate_in_child(testmodes.take_seed(sys.argv))
    if _NOISE is not None:
        _NOISE.wrap_numpy(np)
    return main(Path(sys.argv[1]))


# ------------------------------------------------------------------------------------------ server mode
#
# ``python _golden_child.py --serve <request fd> <reply fd>`` (runtime.opdir._golden_server): the interpreter and
# numpy start once per orchestrator run; every golden run is then a fork of this process, which runs exactly what
# a fresh child runs (``_child_main``). The server itself never imports golden.py nor runs user code, and is
# single-threaded (the child environment pins BLAS/OpenMP to one thread), so a fork starts from the same state a
# fresh interpreter reaches after its imports.

_TAIL = 64 * 1024
"""Bytes of a forked child's stderr kept (the tail), as the runner keeps of a fresh child's."""


def _forked(msg: dict, req_fd: int, rep_fd: int, err_wr: int) -> None:
    """In the fork: become the golden child of one request, then ``os._exit`` (never returns)."""
    import ctypes
    import os
    import random
    import resource

    code = 1
    try:
        os.close(req_fd)
        os.close(rep_fd)  # the parent sees EOF on the reply pipe when the server dies, whatever its forks do
        libc = ctypes.CDLL(None)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the server, as it dies with its parent
        if os.getppid() == 1:
            os._exit(1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(err_wr, 2)
        os.close(devnull)
        os.close(err_wr)
        cpu_s = int(msg["cpu_s"])
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
        work = str(msg["work"])
        os.chdir(work)
        os.environ["HOME"] = os.environ["TMPDIR"] = work  # runtime.sandbox.env_policy.child_env(work)
        import tempfile

        tempfile.tempdir = None
        random.seed()  # a fresh interpreter seeds both from the OS: so does each fork
        np.random.seed()
        sys.argv = [sys.argv[0], *msg["argv"]]
        code = _child_main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - reported on stderr like an uncaught exception of a fresh child
        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _drain(fd: int) -> bytes:
    """Everything a forked child writes on stderr until it (and any process it started) closes it; the tail."""
    import os

    tail = bytearray()
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except InterruptedError:
            continue
        if not chunk:
            break
        tail += chunk
        if len(tail) > _TAIL:
            del tail[: len(tail) - _TAIL]
    os.close(fd)
    return bytes(tail)


def serve(req_fd: int, rep_fd: int) -> int:
    """Read one JSON request per line (``{"work", "argv", "cpu_s"}``), fork a golden child for it, answer
    ``{"pid"}`` at once and ``{"rc", "stderr"}`` when it has ended (``rc`` as ``Popen.returncode``: -signal when
    killed). Ends at EOF on the request pipe (the parent closed it, or died)."""
    import os

    def reply(obj: dict) -> None:
        data = (json.dumps(obj) + "\n").encode("utf-8")
        while data:
            data = data[os.write(rep_fd, data):]

    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = os.read(req_fd, 1 << 16)
            if not chunk:
                return 0
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        msg = json.loads(line)
        err_rd, err_wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(err_rd)
            _forked(msg, req_fd, rep_fd, err_wr)
        os.close(err_wr)
        reply({"pid": pid})
        tail = _drain(err_rd)
        _, status = os.waitpid(pid, 0)
        reply({"pid": pid, "rc": os.waitstatus_to_exitcode(status), "stderr": tail.decode("utf-8", "replace")})


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        sys.exit(serve(int(sys.argv[2]), int(sys.argv[3])))
    sys.exit(_child_main())
