"""Emulator adapter that the verify sandbox loads in place of the emulator when bisect runs a candidate.

Why: the candidate is untrusted, so bisect runs it through ``runtime.sandbox.run_candidate`` (the verifier's
sandbox, reused, not a second one). That runner accepts an emulator given as a ``.py`` path that provides
``install()``, ``session()`` and ``EmulatorError``. This file is copied into a private temp folder next to
``bisect_shim.json`` and then:

* loads the emulator (``runtime.emulator``, or the module named by ``--emulator``) *before* the sandbox guards go up;
* installs a kernel executor (``emu.kernel_executor``) that captures every kernel call - the encoded kernel
  program (plain data, ``runtime.emulator.device``) and the argument arrays as they are at the call - and then
  runs it in process as usual, so the candidate's host code continues;
* wraps ``pypto.frontend.jit`` so kernel parameters named like golden intermediates (checkpoints) are poisoned
  with NaN before the call, and notes the wrapper line that called the kernel;
* hands the captured calls back through the one channel the runner already returns to the parent:
  ``session.counters.model_dump()`` (JSON, arrays base64-encoded). An argument whose bytes equal one of the
  case's inputs is sent as a reference to it, a constant-filled one as its fill value.

Nothing is recorded here: the parent replays each captured program in its own (trusted) process with recording
on and compares every op value with the golden as it is produced (``runtime.bisect._replay``). The golden never
enters this process, and no record the parent uses was made by code that ran next to the candidate.
A kernel call that raises returns None here (the error is kept and reported).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import hashlib
import importlib
import importlib.util
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

_CONFIG = json.loads(Path(__file__).with_name("bisect_shim.json").read_text())


def _sibling(name: str) -> Any:
    """Import a module copied next to this file (keeps the runtime.bisect package out of the sandbox)."""
    ms = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert ms is not None and ms.loader is not None
    mod = importlib.util.module_from_spec(ms)
    sys.modules[name] = mod
    ms.loader.exec_module(mod)
    return mod


_records = _sibling("bisect_records")
encode_array = _records.encode_array


def _load(spec: str) -> Any:
    if spec.endswith(".py"):
        ms = importlib.util.spec_from_file_location("_pto_bisect_real_emulator", spec)
        assert ms is not None and ms.loader is not None
        mod = importlib.util.module_from_spec(ms)
        sys.modules["_pto_bisect_real_emulator"] = mod
        ms.loader.exec_module(mod)
        return mod
    return importlib.import_module(spec)


_REAL = _load(_CONFIG["emulator"])  # (its folder is a read root of the sandbox: _run)
EmulatorError = getattr(_REAL, "EmulatorError", RuntimeError)
if hasattr(_REAL, "Options"):
    Options = _REAL.Options  # the runner builds the verifier's options (toolchain target, npuarch) with it
_CHECKPOINTS = set(_CONFIG.get("checkpoints", []))
_MAX_BYTES = int(_CONFIG.get("max_capture_bytes", 4 * 1024**3))


class _State:
    """What one case (one session) captured."""

    def __init__(self) -> None:
        self.case = -1
        self.calls: list[dict] = []
        self.kernel_args: list[dict] = []
        self.kernel_error: dict[str, Any] = {}
        self.site: dict[str, Any] = {}
        self.bytes = 0
        self.dropped = 0


_S = _State()
_NO_CAPTURE: list[str] = []


def _describe(exc: BaseException) -> dict[str, Any]:
    info: dict[str, Any] = {"type": type(exc).__name__, "message": str(getattr(exc, "message", None) or exc)[:2000]}
    for attr in ("code", "file", "line", "op"):
        val = getattr(exc, attr, None)
        if isinstance(val, str | int) and not isinstance(val, bool):
            info[attr] = Path(val).name if attr == "file" and isinstance(val, str) else val
    return info


def _poison(arr: np.ndarray) -> None:
    if arr.dtype.kind == "f" or arr.dtype.name in ("bfloat16",) or "float8" in arr.dtype.name:
        arr[...] = np.nan
    elif arr.dtype.kind in "iu":
        arr[...] = np.iinfo(arr.dtype).min if arr.dtype.kind == "i" else np.iinfo(arr.dtype).max


def _as_array(a: Any) -> np.ndarray | None:
    if isinstance(a, np.ndarray):
        return a
    if type(a).__module__.split(".")[0] == "torch" and hasattr(a, "detach"):
        try:
            t = a.detach()
            if str(t.dtype) == "torch.bfloat16":
                import ml_dtypes
                import torch

                return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
            return t.numpy()
        except Exception:  # noqa: BLE001 - not a CPU tensor: nothing to poison
            return None
    return None


def _wrap_jit(pypto: Any) -> None:
    frontend = getattr(pypto, "frontend", None)
    original = getattr(frontend, "jit", None)
    if original is None:
        return

    def jit(func: Any = None, **options: Any) -> Any:
        if func is None:
            return lambda f: jit(f, **options)
        kernel = original(func, **options) if options else original(func)
        try:
            names = list(inspect.signature(func).parameters)
        except (TypeError, ValueError):
            names = []

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            bound = dict(zip(names, args, strict=False))
            bound.update(kwargs)
            arrays = {n: a for n, v in bound.items() if (a := _as_array(v)) is not None}
            # a parameter named like a golden local that the wrapper fills with a case input's data (``q`` holding
            # ``query`` reshaped) is an input of the kernel, not a checkpoint buffer: poisoning it replaced the
            # input by NaN (flash_attention_score_grad's q/k/v: every value NaN, a view of q named the culprit)
            # (every argument: the parent also tells a wrapper that passes one input where another was meant)
            held = {n: i for n, a in arrays.items() if (i := _input_index(a)) is not None}
            _S.kernel_args.append({"kernel": getattr(func, "__name__", "?"), "args": [
                {"name": n, "shape": list(a.shape), "dtype": str(a.dtype),
                 **({"input": held[n]} if n in held else {})} for n, a in arrays.items()]})
            for n, a in arrays.items():
                if n in _CHECKPOINTS and n not in held:
                    _poison(a)
            caller = sys._getframe(1)
            _S.site = {"kernel": getattr(func, "__name__", "?"), "file": Path(caller.f_code.co_filename).name,
                       "line": caller.f_lineno}
            try:
                return kernel(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - keep the calls made before the error
                if not _S.kernel_error:
                    _S.kernel_error.update(_describe(exc))
                return None
            finally:
                _S.site = {}

        return call

    frontend.jit = jit
    if hasattr(pypto, "jit"):
        pypto.jit = jit


def _input_index(a: np.ndarray) -> int | None:
    """The index of the case input whose bytes ``a`` holds (any shape), or None."""
    flat = np.ascontiguousarray(a).reshape(-1)
    digests = _CONFIG.get("inputs") or []
    mine = digests[_S.case] if 0 <= _S.case < len(digests) else []
    if any(int(x["nbytes"]) == flat.nbytes for x in mine):
        sha = hashlib.sha256(flat.view(np.uint8)).hexdigest()
        for i, x in enumerate(mine):
            if int(x["nbytes"]) == flat.nbytes and x["sha"] == sha:
                return i
    return None


def _describe_arg(a: np.ndarray) -> dict[str, Any]:
    """How the parent rebuilds an argument: a case input (by digest), a constant fill, or the bytes."""
    d: dict[str, Any] = {"shape": list(a.shape), "dtype": str(a.dtype)}
    flat = np.ascontiguousarray(a).reshape(-1)
    i = _input_index(a)
    if i is not None:
        d["input"] = i
        return d
    if flat.size and flat.dtype.itemsize in (1, 2, 4, 8):
        u = flat.view(f"u{flat.dtype.itemsize}")
        if bool((u == u[0]).all()):
            d["fill"] = base64.b64encode(flat[:1].tobytes()).decode()
            return d
    enc = encode_array(a)
    d["array"] = enc
    _S.bytes += len(enc["b64"]) if enc else 0
    return d


def _capture(program: Any, args: list[np.ndarray], options: Any) -> Any:
    ex = importlib.import_module(_REAL.__name__ + "._executor") if hasattr(_REAL, "__path__") else None
    if ex is None:
        raise RuntimeError("bisect: the emulator has no kernel executor")
    from runtime.emulator.device import encode  # preloaded above (device package of the same emulator)

    need = sum(int(a.nbytes) for a in args)
    if _S.bytes + need > _MAX_BYTES:
        _S.dropped += 1
    else:
        blob = encode(program)
        _S.calls.append({
            "kernel": program.kernel, "site": dict(_S.site),
            "program": base64.b64encode(blob).decode(),
            "args": [_describe_arg(a) for a in args],
            "options": {"out_of_bounds": options.out_of_bounds, "check_poison": options.check_poison,
                        "poison_check": options.poison_check,
                        "npuarch": getattr(options, "npuarch", "DAV_2201")},
        })
    # the program was traced with recording on (op names, view sources: the metadata the parent needs); here
    # it only runs so the candidate's host code can continue, batched and without records
    return ex.run_in_process(program, args, dataclasses.replace(options, record=False, on_record=None))


def install() -> None:
    _REAL.install()
    _wrap_jit(importlib.import_module("pypto"))
    try:
        ex = importlib.import_module(_REAL.__name__ + "._executor")
        ex.set_default(_capture)
    except (ImportError, AttributeError) as exc:
        _NO_CAPTURE.append(f"the emulator {_CONFIG['emulator']} has no kernel executor to capture programs: {exc}")


class _Dump:
    """Stands in for ``session.counters``: the runner serializes it with ``model_dump``."""

    def __init__(self, sess: Any) -> None:
        self._sess = sess

    def model_dump(self, mode: str = "json") -> dict:
        counters = getattr(self._sess, "counters", None)
        return {
            "bisect": {
                "calls": list(_S.calls),
                "dropped_calls": _S.dropped,
                "no_capture": "; ".join(_NO_CAPTURE),
                "kernel_error": dict(_S.kernel_error) or None,
                "kernel_args": list(_S.kernel_args),
            },
            "counters": counters.model_dump(mode=mode) if hasattr(counters, "model_dump") else None,
        }


class _Proxy:
    def __init__(self, sess: Any) -> None:
        self._sess = sess
        self.counters = _Dump(sess)

    @property
    def diagnostics(self) -> list:
        return list(getattr(self._sess, "diagnostics", []) or [])


@contextlib.contextmanager
def session(options: Any = None) -> Any:
    case = _S.case + 1
    _S.__init__()
    _S.case = case
    opts_cls = getattr(_REAL, "Options", None)
    opts = None
    if options is not None and dataclasses.is_dataclass(options):
        # the verifier's options (the op dir's toolchain target, npuarch), traced with op names and view sources
        opts = dataclasses.replace(options, record=True)
    elif opts_cls is not None:
        try:
            opts = opts_cls(record=True)  # traced with op names and view sources
        except TypeError:
            opts = None
    with _REAL.session(options=opts) as sess:
        yield _Proxy(sess)
