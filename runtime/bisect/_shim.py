"""Emulator adapter that the verify sandbox loads in place of the emulator when bisect runs a kernel.

Why: the candidate kernel is untrusted, so bisect runs it through ``runtime.sandbox.run_candidate`` (the
verifier's sandbox, reused, not a second one). That runner accepts an emulator given as a ``.py`` path that
provides ``install()``, ``session()`` and ``EmulatorError``. This file is copied into a private temp folder
next to ``bisect_shim.json`` and then:

* loads the emulator (``runtime.emulator``, or the module named by ``--emulator``) *before* the sandbox guards go up;
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


class _Stream:
    """Encodes each op record as the emulator makes it, so the sandbox never holds every tile at once.

    Why: keeping every value of a large kernel (2M parameters x 20 ops x every tile) exhausted the sandbox's
    memory, and a hard size cap silently dropped the latest ops. Instead, once ``full_bytes`` are recorded,
    each traced op keeps the values of its first ``keep_first`` executions, of every execution whose index is
    a power of two, and of its last execution (a tail tile is usually last); the others keep their metadata
    (offsets, shape, links) only.
    A byte budget on top keeps the reply bounded; what it drops is counted and reported.
    """

    def __init__(self, sess: Any) -> None:
        self.sess = sess
        self.items: list[dict] = []
        self.count: dict[Any, int] = {}
        self.last: dict[Any, tuple[int, Any]] = {}
        self.budget = int(_CONFIG.get("max_value_bytes", 64 * 1024**2))
        self.keep_first = int(_CONFIG.get("keep_first", 4))
        self.full = int(_CONFIG.get("full_bytes", 16 * 1024**2))
        """bytes recorded in full before sampling starts (small kernels are recorded whole)"""
        self.sampled = 0
        self.dropped = 0

    def add(self, rec: Any) -> None:
        seq = len(self.sess.records)
        self.sess.records.append(None)  # the emulator numbers records by this length: keep it counting
        n = self.count.get(rec.node, 0)
        self.count[rec.node] = n + 1
        value = getattr(rec, "value", None)
        keep = self.full > 0 or n < self.keep_first or (n & (n - 1)) == 0
        try:
            rec.value = None
            d = encode_record(rec, seq)
        finally:
            rec.value = value
        if keep and value is not None:
            self._attach(d, value)
        elif value is not None:
            prev = self.last.get(rec.node)
            if prev is not None:
                self.sampled += 1
            self.last[rec.node] = (len(self.items), np.array(value, copy=True))
        self.items.append(d)

    def _attach(self, d: dict, value: Any) -> None:
        enc = encode_array(value)
        if enc is not None and len(enc["b64"]) <= self.budget:
            self.budget -= len(enc["b64"])
            self.full -= len(enc["b64"])
            d["value"] = enc
        else:
            self.dropped += 1

    def finish(self) -> list[dict]:
        for idx, value in self.last.values():  # the last execution of every op keeps its value
            self._attach(self.items[idx], value)
        self.last.clear()
        return self.items


class _Dump:
    """Stands in for ``session.counters``: the runner serializes it with ``model_dump``."""

    def __init__(self, sess: Any, recording: bool, stream: _Stream | None = None) -> None:
        self._sess = sess
        self._recording = recording
        self._stream = stream
        self._dropped = False

    def model_dump(self, mode: str = "json") -> dict:
        counters = getattr(self._sess, "counters", None)
        kargs = getattr(self._sess, "kernel_args", None)
        if self._stream is not None:
            encoded = self._stream.finish() if self._recording else []
        else:  # an emulator that appends to ``records`` itself: encode them now, within the budget
            encoded, budget = [], int(_CONFIG.get("max_value_bytes", 64 * 1024**2))
            for i, r in enumerate(getattr(self._sess, "records", []) or [] if self._recording else []):
                d = encode_record(r, i)
                if d.get("value") is not None:
                    budget -= len(d["value"]["b64"])
                    if budget < 0:
                        d["value"] = None  # metadata kept; the parent reports these ops as unmapped
                encoded.append(d)
            self._dropped = budget < 0
        return {
            "bisect": {
                "recording": self._recording,
                "truncated": bool(self._stream.dropped) if self._stream else self._dropped,
                "sampled": self._stream.sampled if self._stream else 0,
                "dropped": self._stream.dropped if self._stream else 0,
                "records": encoded,
                "checkpoints": {k: encode_array(v) for k, v in sorted(_CAPTURED.items())},
                "kernel_error": dict(_KERNEL_ERROR) or None,
                "kernel_args": kargs if isinstance(kargs, list) else _KERNEL_ARGS[-1:] and _KERNEL_ARGS[-1]["args"],
            },
            "counters": counters.model_dump(mode=mode) if hasattr(counters, "model_dump") else None,
        }


class _Proxy:
    def __init__(self, sess: Any, recording: bool, stream: _Stream | None) -> None:
        self._sess = sess
        self.counters = _Dump(sess, recording, stream)

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
        stream = None
        if recording and hasattr(sess, "add_record") and hasattr(sess, "records"):
            stream = _Stream(sess)
            sess.add_record = stream.add
        yield _Proxy(sess, recording, stream)
