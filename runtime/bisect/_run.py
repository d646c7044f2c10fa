"""Run cases of a stage file inside the verify sandbox and bring back its kernel calls as data.

Reuses ``runtime.sandbox.run_candidate`` (the verifier's confined child process) and passes it ``_shim.py`` as
the emulator: the untrusted candidate runs with exactly the verifier's isolation, and what comes back is, per
case, the wrapper's outputs and every kernel call it made (the encoded kernel program and the argument arrays at
the call). The parent replays those programs itself with recording on (``_replay``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from runtime.bisect._records import decode_array

__all__ = ["DEFAULT_EMULATOR", "ArgSource", "CapturedCall", "CapturedRun", "run_captured", "run_captured_cases"]

log = logging.getLogger(__name__)

DEFAULT_EMULATOR = "runtime.emulator"
_SHIM = Path(__file__).with_name("_shim.py")


@dataclass
class ArgSource:
    """Where a kernel argument's bytes come from: a case input, a constant fill, or bytes sent back."""

    shape: tuple[int, ...]
    dtype: str
    input: int | None = None
    fill: bytes | None = None
    array: np.ndarray | None = None

    def build(self, inputs: list[np.ndarray], *, writable: bool = True) -> np.ndarray:
        """A fresh, writable, C-contiguous array for the replay (the kernel writes into it); with ``writable``
        False, a case input is given as a read-only view of it instead of a copy (a parameter the program never
        writes: AdamW's four [7168, 2048] inputs were copied again for every replay, ~60 MB each; a write the
        program did not declare then fails instead of changing the input the next replay reads)."""
        from runtime.dtypes import to_numpy

        dt = to_numpy(self.dtype)
        n = int(np.prod(self.shape)) if self.shape else 1
        if self.input is not None:
            src = np.ascontiguousarray(inputs[self.input]).reshape(-1).view(np.uint8)
            view = src.view(dt)[:n].reshape(self.shape)
            if writable:
                return view.copy()
            view = view.view()
            view.flags.writeable = False
            return view
        if self.fill is not None:
            out = np.empty(self.shape, dtype=dt)
            if dt.itemsize in (1, 2, 4, 8) and len(self.fill) == dt.itemsize:
                # (one integer of the element's width: the same bytes, a plain fill instead of a 2-D byte copy)
                out.reshape(-1).view(f"u{dt.itemsize}")[:] = np.frombuffer(self.fill, f"u{dt.itemsize}")[0]
            else:
                out.reshape(-1).view(np.uint8).reshape(n, dt.itemsize)[:] = np.frombuffer(self.fill, np.uint8)
            return out
        assert self.array is not None
        return np.ascontiguousarray(self.array).copy()


@dataclass
class CapturedCall:
    """One kernel call the candidate made: its program (encoded) and arguments."""

    kernel: str
    program: bytes
    args: list[ArgSource]
    options: dict[str, Any]
    site: dict[str, Any] = field(default_factory=dict)
    """the wrapper line that called the kernel (``file``, ``line``)"""


@dataclass
class CapturedRun:
    """What one case of the candidate did in the sandbox (all arrays are copies owned by the parent)."""

    status: str
    """``ok`` | ``error`` (the kernel raised) | the sandbox status (``timeout``, ``import_error`` ...)."""
    reason: str = ""
    error: dict[str, Any] | None = None
    outputs: list[np.ndarray | None] = field(default_factory=list)
    calls: list[CapturedCall] = field(default_factory=list)
    dropped_calls: int = 0
    """kernel calls beyond the capture budget (not replayed; reported)"""
    no_capture: str = ""
    kernel_args: list[dict] = field(default_factory=list)
    diagnostics: list[dict] = field(default_factory=list)
    layers: dict[str, bool] = field(default_factory=dict)
    duration_s: float = 0.0


def _digests(inputs: list[np.ndarray]) -> list[dict[str, Any]]:
    out = []
    for a in inputs:
        flat = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        out.append({"nbytes": int(flat.nbytes), "sha": hashlib.sha256(flat).hexdigest()})
    return out


def _arg(d: dict[str, Any]) -> ArgSource:
    src = ArgSource(shape=tuple(int(n) for n in d.get("shape") or ()), dtype=str(d.get("dtype")))
    if d.get("input") is not None:
        src.input = int(d["input"])
    elif d.get("fill") is not None:
        src.fill = base64.b64decode(d["fill"])
    else:
        src.array = decode_array(d.get("array"))
        if src.array is None:
            raise ValueError("a captured kernel argument came back without its bytes")
    return src


def run_captured(stage_file: Path, wrapper: str, inputs: list[np.ndarray], *, case: str = "case",
                 emulator: str = DEFAULT_EMULATOR, checkpoints: list[str] | None = None,
                 timeout: float = 120.0, calling: dict | None = None) -> CapturedRun:
    """One case: see :func:`run_captured_cases`."""
    return run_captured_cases(stage_file, wrapper, [(case, inputs)], emulator=emulator, checkpoints=checkpoints,
                              timeout=timeout, calling=calling)[0]


def run_captured_cases(stage_file: Path, wrapper: str, cases: list[tuple[str, list[np.ndarray]]], *,
                       emulator: str = DEFAULT_EMULATOR, checkpoints: list[str] | None = None,
                       timeout: float = 120.0, max_capture_bytes: int = 4 * 1024**3,
                       calling: dict | None = None) -> list[CapturedRun]:
    """Call ``wrapper`` of ``stage_file`` once per case in ONE sandbox process, capturing its kernel calls.

    One process for several cases: starting the sandbox costs about as much as emulating a small kernel, so
    bisect runs its first candidate cases together.

    Args:
        stage_file: the candidate stage file (copied into the sandbox work folder).
        wrapper: wrapper function name.
        cases: (case name, primary inputs in wrapper order) pairs (inputs are copied).
        emulator: emulator module name or ``.py`` path (default: ``runtime.emulator``).
        checkpoints: kernel parameter names to poison before each kernel call.
        timeout: wall-clock budget.
        max_capture_bytes: budget of argument bytes sent back per case (calls beyond it are counted, not sent).
        calling: how verify calls the wrapper (``{"kwargs": SPEC attributes, "torch": torch I/O}``).

    Raises:
        runtime.sandbox.SandboxError: the sandbox could not be set up.
    """
    from runtime.sandbox import SandboxPolicy, emulator_files, run_candidate

    shim_dir = Path(tempfile.mkdtemp(prefix="pto-bisect-shim-"))
    t0 = time.perf_counter()
    try:
        shutil.copyfile(_SHIM, shim_dir / "bisect_emulator.py")
        shutil.copyfile(_SHIM.with_name("_records.py"), shim_dir / "bisect_records.py")
        emu = str(Path(emulator).resolve()) if emulator.endswith(".py") else emulator
        (shim_dir / "bisect_shim.json").write_text(json.dumps(
            {"emulator": emu, "checkpoints": sorted(checkpoints or []), "max_capture_bytes": max_capture_bytes,
             "inputs": [_digests(i) for _c, i in cases]}))
        largest = max((sum(int(np.asarray(a).nbytes) for a in i) for _c, i in cases), default=0)
        policy = SandboxPolicy(wall_timeout_s=timeout, cpu_timeout_s=int(timeout) + 5,
                               memory_bytes=max(4 * 1024**3, 12 * largest + 2 * 1024**3),
                               result_cap_bytes=max(1024**3, 6 * largest + 256 * 1024**2))
        # the real emulator's files are visible as in a verify run: the shim loads it before the file guard goes
        # up, and its lazy imports (the device package, the torch_npu stand-in a torch wrapper needs) read from
        # there afterwards; preloading every submodule instead imported torch in every bisect run (~2.5 s of 3 s)
        run = run_candidate(Path(stage_file), wrapper, [(c, list(i)) for c, i in cases], policy=policy,
                            emulator=str(shim_dir / "bisect_emulator.py"), repeat_first=False,
                            visible=(emu,) if emu.endswith(".py") else tuple(emulator_files(emu)[1]),
                            calling=calling)
    finally:
        shutil.rmtree(shim_dir, ignore_errors=True)
    elapsed = time.perf_counter() - t0
    if run.status != "ok":
        err = run.import_error or {"message": run.reason or run.stderr_tail[-500:]}
        return [CapturedRun(status=run.status, reason=run.reason, layers=dict(run.layers), error=err,
                            duration_s=elapsed) for _ in cases]
    outs = []
    for i, _case in enumerate(cases):
        out = CapturedRun(status=run.status, reason=run.reason, layers=dict(run.layers), duration_s=elapsed)
        if i >= len(run.runs):
            out.status, out.reason = "crashed", "the sandbox returned no run"
            outs.append(out)
            continue
        one = run.runs[i]
        rec = one.record
        payload = (rec.get("counters") or {}).get("bisect") or {}
        try:
            out.calls = [CapturedCall(kernel=str(c.get("kernel", "?")), program=base64.b64decode(c["program"]),
                                      args=[_arg(a) for a in c.get("args") or []],
                                      options=dict(c.get("options") or {}), site=dict(c.get("site") or {}))
                         for c in payload.get("calls") or []]
        except (KeyError, ValueError, TypeError) as exc:
            out.status, out.reason = "crashed", f"the captured kernel calls could not be read: {exc}"
            outs.append(out)
            continue
        out.dropped_calls = int(payload.get("dropped_calls") or 0)
        out.no_capture = str(payload.get("no_capture") or "")
        out.kernel_args = list(payload.get("kernel_args") or [])
        out.diagnostics = list(rec.get("diagnostics") or [])
        out.outputs = list(one.outputs)
        if payload.get("kernel_error"):
            out.status, out.error = "error", dict(payload["kernel_error"])
            out.reason = str(out.error.get("message", ""))[:500]
        elif rec.get("error"):
            out.status, out.error = "error", dict(rec["error"])
            out.reason = str(rec["error"].get("message", ""))[:500]
        outs.append(out)
    return outs
