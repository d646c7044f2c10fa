"""Emulator adapter that the verify sandbox loads in place of the emulator when bisect runs a kernel.

Why: the candidate kernel is untrusted, so bisect runs it through ``runtime.sandbox.run_candidate`` (the
verifier's sandbox, reused, not a second one). That runner accepts an emulator given as a ``.py`` path that
provides ``install()``, ``session()`` and ``EmulatorError``. This file is copied into a private temp folder
next to ``bisect_shim.json`` and then:

* loads the real emulator (or a stand-in in tests) *before* the sandbox guards go up;
* opens every session with ``Options(record=True)`` when the emulator supports it;
* wraps ``pypto.frontend.jit`` so kernel parameters named like golden intermediates (checkpoints) are
  poisoned with NaN before the call and copied after it;
* hands records and checkpoint arrays back through the one channel the runner already returns to the
  parent: ``session.counters.model_dump()`` (JSON, arrays base64-encoded).

A kernel call that raises returns None here (the error is kept and reported) so that the records made before
the error reach the parent. Nothing here can change a verdict: the parent only uses it to localize.
"""

from __future__ import annotations

import contextlib
import functools
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
encode_array, encode_record = _records.encode_array, _records.encode_record


def _load(spec: str) -> Any:
    if spec.endswith(".py"):
        ms = importlib.util.spec_from_file_location("_pto_bisect_real_emulator", spec)
        assert ms is not None and ms.loader is not None
        mod = importlib.util.module_from_spec(ms)
        sys.modules["_pto_bisect_real_emulator"] = mod
        ms.loader.exec_module(mod)
        return mod
    return importlib.import_module(spec)


def _preload(mod: Any) -> None:
    """Import every submodule of the emulator package now: the sandbox's file guard goes up after this file
    is loaded and only allows reading this folder, so a lazy import inside the emulator would be refused."""
    import pkgutil

    for info in pkgutil.walk_packages(getattr(mod, "__path__", []) or [], prefix=mod.__name__ + "."):
        try:
            importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - an optional submodule that fails to import is the emulator's business
            continue


_REAL = _load(_CONFIG["emulator"])
_preload(_REAL)
EmulatorError = getattr(_REAL, "EmulatorError", RuntimeError)
_CHECKPOINTS = set(_CONFIG.get("checkpoints", []))
_CAPTURED: dict[str, Any] = {}
_KERNEL_ARGS: list[dict] = []


_KERNEL_ERROR: dict[str, Any] = {}


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
            _KERNEL_ARGS.append({"kernel": getattr(func, "__name__", "?"), "args": [
                {"name": n, "shape": list(a.shape), "dtype": str(a.dtype)}
                for n, a in bound.items() if isinstance(a, np.ndarray)]})
            for n, a in bound.items():
                if n in _CHECKPOINTS and isinstance(a, np.ndarray):
                    _poison(a)
            try:
                return kernel(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - keep the records made before the error
                if not _KERNEL_ERROR:
                    _KERNEL_ERROR.update(_describe(exc))
                return None
            finally:
                for n, a in bound.items():
                    if n in _CHECKPOINTS and isinstance(a, np.ndarray):
                        _CAPTURED[n] = a.copy()

        return call

    frontend.jit = jit
    if hasattr(pypto, "jit"):
        pypto.jit = jit


def install() -> None:
    _REAL.install()
    _wrap_jit(importlib.import_module("pypto"))


class _Dump:
    """Stands in for ``session.counters``: the runner serializes it with ``model_dump``."""

    def __init__(self, sess: Any, recording: bool) -> None:
        self._sess = sess
        self._recording = recording

    def model_dump(self, mode: str = "json") -> dict:
        counters = getattr(self._sess, "counters", None)
        records = list(getattr(self._sess, "records", []) or []) if self._recording else []
        kargs = getattr(self._sess, "kernel_args", None)
        budget = int(_CONFIG.get("max_value_bytes", 256 * 1024**2))
        encoded = []
        for i, r in enumerate(records):
            d = encode_record(r, i)
            if d.get("value") is not None:
                budget -= len(d["value"]["b64"])
                if budget < 0:
                    d["value"] = None  # keep the metadata; the parent reports these ops as unmapped
            encoded.append(d)
        return {
            "bisect": {
                "recording": self._recording,
                "truncated": budget < 0,
                "records": encoded,
                "checkpoints": {k: encode_array(v) for k, v in sorted(_CAPTURED.items())},
                "kernel_error": dict(_KERNEL_ERROR) or None,
                "kernel_args": kargs if isinstance(kargs, list) else _KERNEL_ARGS[-1:] and _KERNEL_ARGS[-1]["args"],
            },
            "counters": counters.model_dump(mode=mode) if hasattr(counters, "model_dump") else None,
        }


class _Proxy:
    def __init__(self, sess: Any, recording: bool) -> None:
        self._sess = sess
        self.counters = _Dump(sess, recording)

    @property
    def diagnostics(self) -> list:
        return list(getattr(self._sess, "diagnostics", []) or [])


@contextlib.contextmanager
def session(options: Any = None) -> Any:
    opts_cls = getattr(_REAL, "Options", None)
    recording = bool(_CONFIG.get("record", True))
    opts = None
    if opts_cls is not None:
        try:
            opts = opts_cls(record=recording)
        except TypeError:
            recording = False
            opts = opts_cls()
    _CAPTURED.clear()
    _KERNEL_ARGS.clear()
    _KERNEL_ERROR.clear()
    with _REAL.session(options=opts) as sess:
        yield _Proxy(sess, recording)
