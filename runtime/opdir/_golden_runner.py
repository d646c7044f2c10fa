"""Running golden.py in its own process and bringing back inputs, outputs and named intermediates.

The golden is the user's reference code: it runs in a fresh ``sys.executable`` process (never in the
caller's interpreter; within :func:`runtime.opdir.golden_server`, a fork of the run's one golden process that
does the same, :mod:`runtime.opdir._golden_server`) started by the project's one subprocess runner with its *trusted* profile
(:func:`runtime.sandbox.run_process`): a private temporary working directory (removed even when the parent is
interrupted), the same environment allow-list as the candidate (no API keys), bytecode writing off, own process
group killed on timeout, CPU/memory limits, and it dies with its parent. Arrays cross the boundary in one .npz file
per kind (inputs, outputs, intermediates) holding every case (:class:`runtime.arrays.ArrayWriter`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
from pathlib import Path
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict

from runtime import testmodes
from runtime.arrays import ArrayReader, ArrayWriter, open_arrays
from runtime.limits import GOLDEN_CASE_TIMEOUT_S
from runtime.opdir._cases import Case
from runtime.opdir._golden_server import active_server
from runtime.opdir._problems import GoldenError, OpDirError, Problem
from runtime.opdir._spec import Spec
from runtime.sandbox._proc import Limits, private_dir, run_process


class GoldenSource(Protocol):
    """What a golden run needs of an op dir (``runtime.opdir.OpDir`` is one; a Protocol keeps this module
    below ``_opdir``, which calls it: no import cycle)."""

    @property
    def spec(self) -> Spec: ...

    @property
    def golden_path(self) -> Path: ...

    @property
    def has_make_inputs(self) -> bool: ...

    def make_inputs(self, case: Case) -> list[np.ndarray]: ...

__all__ = ["GOLDEN_CASE_TIMEOUT_S", "GoldenRun", "run_golden", "run_golden_cases"]


log = logging.getLogger(__name__)

_CHILD = Path(__file__).with_name("_golden_child.py")
_INPUTS, _OUTPUTS, _MIDS = "inputs.npz", "outputs.npz", "mids.npz"
"""The array files of a golden run, the i-th case's arrays under ``"<i>/<name>"`` (``_golden_child._Files``)."""
_STARTUP_S = 15.0
"""Seconds the golden child may take to start (interpreter, numpy, golden.py's imports) beyond its cases."""


class GoldenRun(BaseModel):
    """What one golden run produced for one case.

    ``outputs`` is keyed by the SPEC output names in order (``output_names``); ``intermediates`` holds every
    array-valued local of ``golden(...)`` at return (module boundary tensors are looked up here by name).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    case: str
    inputs: list[np.ndarray]
    outputs: dict[str, np.ndarray]
    intermediates: dict[str, np.ndarray]
    output_names: list[str]
    duration_s: float
    """Time spent inside ``golden(...)`` itself (not process start-up)."""
    families: dict[str, tuple[str, int, int]] = {}
    """Deep runs: intermediate name -> (family, k, count) when it is the k-th of ``count`` executions of one golden
    line's torch op (a loop: ``golden.py:39 div@3``, or ``h#1`` / ``h`` when a local names the first / last)."""


def _limits(budget: float) -> Limits:
    """The golden is trusted, but a runaway golden must not take the machine: memory and CPU are bounded."""
    return Limits(wall_s=budget, cpu_s=int(budget) + 30, memory_bytes=8 * 1024**3, max_open_files=1024,
                  max_file_bytes=None, max_processes=None)


_MEMORY_DIR = "/dev/shm"
_MEMORY_FREE = 8 * 1024**3


def _memory_dir() -> str | None:
    """Where a golden run's array files go: a memory file system when there is one with room to spare, else the
    default temporary directory (None).

    Why: a deep golden run of AdamW at [7168, 2048] writes 1.4 GB of intermediates; on the disk-backed /tmp that
    write was 15-17 s of a 32 s golden run under the machine's I/O load (golden() itself: 4.7 s). In memory it is a
    copy, and the parent maps the file instead of reading it (``runtime.arrays.open_arrays``). The room asked for
    (8 GiB free) bounds what one run may put there; ``FORGE_GOLDEN_TMP=disk`` turns it off."""
    import os

    if os.environ.get("FORGE_GOLDEN_TMP") == "disk":
        return None
    try:
        st = os.statvfs(_MEMORY_DIR)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize < _MEMORY_FREE or not os.access(_MEMORY_DIR, os.W_OK | os.X_OK):
        return None
    return _MEMORY_DIR


def run_golden_cases(op: GoldenSource, cases: list[Case], *, timeout: float = GOLDEN_CASE_TIMEOUT_S,
                     deep: bool = False, intermediates: bool = True,
                     given: dict[str, list[np.ndarray]] | None = None) -> dict[str, GoldenRun]:
    """Run golden.py on several cases in ONE child process (saves the start-up cost per case).

    Args:
        op: the loaded operator directory.
        cases: cases from ``op.cases()``.
        timeout: wall-clock seconds per case: the child stops at the first case that runs longer (SIGALRM);
            the batch as a whole gets ``timeout * len(cases)`` (a hang no signal can interrupt).
        deep: also capture the locals of the functions ``golden`` calls from golden.py's folder (bisection:
            a gym golden behind an adapter names its intermediates in the vendor function), re-bound names
            with their first value as ``name#1`` (``_golden_child._Capture``).
        intermediates: False runs golden.py untraced and brings back no intermediates (``GoldenRun.intermediates``
            is empty): intake's check needs only inputs and outputs, and capturing and moving every local of
            every case was most of its golden run's cost.
        given: case name -> the inputs ``op.make_inputs`` made for it already (only for an op without golden
            ``make_inputs``, whose inputs are made in this process): used as they are instead of making them
            again (bisect makes them first to start the candidate's run while golden.py runs; making AdamW's
            four [7168, 2048] inputs twice was 1-3 s). ``GoldenRun.inputs`` are then these very arrays.

    Returns:
        case name -> :class:`GoldenRun`, in the order of ``cases``.

    Raises:
        GoldenError: syntax error, missing function, exception inside golden (with golden's line),
            bad output structure, make_inputs failure, timeout, or a crashed interpreter.
    """
    if not cases:
        return {}
    spec = op.spec
    in_names = [t.name for t in spec.inputs]
    out_names = [t.name for t in spec.outputs]
    file = op.golden_path.name
    with private_dir("forge-golden-", parent=_memory_dir()) as work:
        made: dict[str, list[np.ndarray]] = {}
        if not op.has_make_inputs:
            with ArrayWriter(work / _INPUTS) as written:
                for i, c in enumerate(cases):
                    try:
                        made[c.name] = given[c.name] if given is not None and c.name in given else op.make_inputs(c)
                    except OpDirError as exc:
                        raise GoldenError("inputs", exc.problems) from None
                    for name, arr in zip(in_names, made[c.name]):
                        written.add(f"{i}/{name}", arr)
        request = {
            "golden": str(op.golden_path.resolve()),
            "cases": [c.model_dump(exclude={"unseen", "special", "tiny"}) for c in cases],
            "make_inputs": op.has_make_inputs,
            "n_inputs": len(in_names),
            "input_names": in_names,
            "output_names": out_names,
            "attrs": _jsonable(spec.attrs),
            "case_timeout": timeout,
            "deep": deep,
            "intermediates": intermediates,
        }
        (work / "request.json").write_text(json.dumps(request), encoding="utf-8")
        # the per-case alarm inside the child fires first; this backstop (start-up included) is for a hang no
        # signal interrupts (a C extension that never returns)
        budget = timeout * len(cases) + _STARTUP_S
        start = time.monotonic()
        argv = [str(work), *testmodes.child_args()]
        server = active_server()
        proc = server.run(argv, work=work, cpu_s=int(budget) + 30, budget=budget) if server is not None else None
        if proc is None:  # no run-wide golden process (or it is busy): a fresh one, as always
            proc = run_process([sys.executable, str(_CHILD), *argv], work=work, limits=_limits(budget),
                               profile="trusted")
        stderr = proc.stderr
        if proc.timed_out:
            raise GoldenError("timeout", [Problem(
                file=file, field="golden",
                message=f"golden.py did not finish within {budget:g} s ({len(cases)} case(s) x {timeout:g} s + "
                        f"{_STARTUP_S:g} s to start), and no case could be stopped on its own; is it stuck in "
                        "native code?")]) from None
        log.debug("golden child finished in %.2fs (rc=%s)", time.monotonic() - start, proc.returncode)
        result_path = work / "result.json"
        if not result_path.exists():
            tail = stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
            raise GoldenError("crash", [Problem(
                file=file, field="golden",
                message=f"the golden process died (exit code {proc.returncode}) before reporting"
                        + (": " + " | ".join(tail) if tail else ""))])
        reply = json.loads(result_path.read_text(encoding="utf-8"))
        if not reply["ok"]:
            raise GoldenError(reply["kind"], [Problem(file=file, line=reply.get("line"), field="golden",
                                                      message=reply["message"])],
                              traceback=reply.get("traceback", ""))
        runs: dict[str, GoldenRun] = {}
        with contextlib.ExitStack() as stack:
            outputs = stack.enter_context(open_arrays(work / _OUTPUTS))
            mids: ArrayReader | None = stack.enter_context(open_arrays(work / _MIDS)) if intermediates else None
            from_child: ArrayReader | None = \
                stack.enter_context(open_arrays(work / _INPUTS)) if op.has_make_inputs else None
            for i, (c, done) in enumerate(zip(cases, reply["cases"])):
                key = f"{i}/"
                runs[c.name] = GoldenRun(
                    case=c.name,
                    inputs=made[c.name] if from_child is None else list(from_child.group(key).values()),
                    outputs=outputs.group(key),
                    intermediates=mids.group(key) if mids is not None else {},
                    output_names=out_names,
                    duration_s=float(done["duration_s"]),
                    families={k: (str(f), int(i), int(n)) for k, (f, i, n) in (done.get("families") or {}).items()},
                )
        return runs


def run_golden(op: GoldenSource, case: Case, *, timeout: float = GOLDEN_CASE_TIMEOUT_S, deep: bool = False) -> GoldenRun:
    """Run golden.py on one case in its own process (see :func:`run_golden_cases` for errors and ``deep``)."""
    return run_golden_cases(op, [case], timeout=timeout, deep=deep)[case.name]


def _jsonable(value: object) -> object:
    """SPEC attrs as JSON (YAML scalars, lists and dicts are already JSON-like; anything else as text)."""
    try:
        json.dumps(value)
        return value
    except TypeError:
        if isinstance(value, dict):
            return {str(k): _jsonable(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [_jsonable(v) for v in value]
        return str(value)
