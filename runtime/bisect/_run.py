"""Run one case of a stage file with recording on, inside the verify sandbox.

Reuses ``runtime.sandbox.run_candidate`` (the verifier's confined child process) and passes it
``_shim.py`` as the emulator, so the untrusted kernel gets exactly the verifier's isolation while the
records and checkpoint tensors come back to this (trusted) process.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from runtime.bisect._records import Rec, decode_array, decode_records

__all__ = ["DEFAULT_EMULATOR", "RecordedRun", "run_recorded", "run_recorded_cases"]

log = logging.getLogger(__name__)

DEFAULT_EMULATOR = "runtime.emulator"
_SHIM = Path(__file__).with_name("_shim.py")


@dataclass
class RecordedRun:
    """What one recorded candidate run produced (all arrays are copies owned by the parent)."""

    status: str
    """``ok`` | ``error`` (the kernel raised) | the sandbox status (``timeout``, ``import_error`` ...)."""
    reason: str = ""
    error: dict[str, Any] | None = None
    outputs: list[np.ndarray | None] = field(default_factory=list)
    records: list[Rec] = field(default_factory=list)
    recording: bool = False
    truncated: bool = False
    """Record values beyond the size budget were dropped (only their metadata came back)."""
    sampled: int = 0
    """Op executions whose values were left out by sampling (metadata kept)."""
    checkpoints: dict[str, np.ndarray] = field(default_factory=dict)
    kernel_args: list[dict] = field(default_factory=list)
    diagnostics: list[dict] = field(default_factory=list)
    layers: dict[str, bool] = field(default_factory=dict)
    duration_s: float = 0.0


def run_recorded(stage_file: Path, wrapper: str, inputs: list[np.ndarray], *, case: str = "case",
                 emulator: str = DEFAULT_EMULATOR, record: bool = True, checkpoints: list[str] | None = None,
                 timeout: float = 120.0, max_value_bytes: int = 64 * 1024**2) -> RecordedRun:
    """One case: see :func:`run_recorded_cases`."""
    return run_recorded_cases(stage_file, wrapper, [(case, inputs)], emulator=emulator, record=record,
                              checkpoints=checkpoints, timeout=timeout, max_value_bytes=max_value_bytes)[0]


def run_recorded_cases(stage_file: Path, wrapper: str, cases: list[tuple[str, list[np.ndarray]]], *,
                       emulator: str = DEFAULT_EMULATOR, record: bool = True, checkpoints: list[str] | None = None,
                       timeout: float = 120.0, max_value_bytes: int = 64 * 1024**2) -> list[RecordedRun]:
    """Call ``wrapper`` of ``stage_file`` once per case in ONE sandbox process, recording every op.

    One process for several cases: starting the sandbox costs about as much as emulating a small kernel, so
    bisect records its first two candidate cases together (``max_value_bytes`` is per case).

    Args:
        stage_file: the candidate stage file (copied into the sandbox work folder).
        wrapper: wrapper function name.
        cases: (case name, primary inputs in wrapper order) pairs (inputs are copied).
        emulator: emulator module name or ``.py`` path (default: ``runtime.emulator``).
        record: ask the emulator for op records.
        checkpoints: kernel parameter names to poison before and capture after each kernel call.
        timeout: wall-clock budget.
        max_value_bytes: size budget of the recorded values (base64) after sampling (``_shim._Stream``).

    Raises:
        runtime.sandbox.SandboxError: the sandbox could not be set up.
    """
    from runtime.sandbox import SandboxPolicy, run_candidate

    shim_dir = Path(tempfile.mkdtemp(prefix="pto-bisect-shim-"))
    t0 = time.perf_counter()
    try:
        shutil.copyfile(_SHIM, shim_dir / "bisect_emulator.py")
        shutil.copyfile(_SHIM.with_name("_records.py"), shim_dir / "bisect_records.py")
        emu = str(Path(emulator).resolve()) if emulator.endswith(".py") else emulator
        (shim_dir / "bisect_shim.json").write_text(json.dumps(
            {"emulator": emu, "record": record, "checkpoints": sorted(checkpoints or []),
             "max_value_bytes": max_value_bytes}))
        policy = SandboxPolicy(wall_timeout_s=timeout, cpu_timeout_s=int(timeout) + 5)
        run = run_candidate(Path(stage_file), wrapper, [(c, list(i)) for c, i in cases], policy=policy,
                            emulator=str(shim_dir / "bisect_emulator.py"), repeat_first=False,
                            visible=(emu,) if emu.endswith(".py") else ())
    finally:
        shutil.rmtree(shim_dir, ignore_errors=True)
    elapsed = time.perf_counter() - t0
    if run.status != "ok":
        err = run.import_error or {"message": run.reason or run.stderr_tail[-500:]}
        return [RecordedRun(status=run.status, reason=run.reason, layers=dict(run.layers), error=err,
                            duration_s=elapsed) for _ in cases]
    outs = []
    for i, _case in enumerate(cases):
        out = RecordedRun(status=run.status, reason=run.reason, layers=dict(run.layers), duration_s=elapsed)
        if i >= len(run.runs):
            out.status, out.reason = "crashed", "the sandbox returned no run"
            outs.append(out)
            continue
        one = run.runs[i]
        rec = one.record
        payload = (rec.get("counters") or {}).get("bisect") or {}
        out.recording = bool(payload.get("recording"))
        out.truncated = bool(payload.get("truncated"))
        out.sampled = int(payload.get("sampled") or 0)
        out.records = decode_records(payload.get("records") or [])
        out.checkpoints = {k: a for k, v in (payload.get("checkpoints") or {}).items()
                           if (a := decode_array(v)) is not None}
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
