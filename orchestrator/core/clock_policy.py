"""Which clock a run reads, and run ids (the policy that makes a recorded run replay byte for byte).

A recorded model run reads a :class:`LogicalClock` (its readings advance by a fixed step), so MEMORY.md
times, prompts and audit commits are functions of the run, not of the host; a replay uses the
recording's ``clock_origin``; a resume continues the run's clock from ``clock.json``.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
from collections.abc import Callable
from pathlib import Path

from agents.contracts import TraceSink
from agents.trace import Trace
from orchestrator.core.logical_clock import LogicalClock
from orchestrator.core.services import utc_now
from orchestrator.errors import ForgeError
from orchestrator.store.paths import trace_dir
from orchestrator.store.runs import new_run_id

log = logging.getLogger(__name__)

CLOCK_FILE = "clock.json"
"""Where a recorded run keeps its logical clock's reading count (so a resume continues it)."""


def recorded_clock(source: Path) -> LogicalClock:
    """The recording's logical clock (``clock_origin`` in its manifest)."""
    try:
        manifest = json.loads((Path(source) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ForgeError(f"cannot replay {source}: unreadable manifest.json ({exc})") from None
    origin = manifest.get("clock_origin")
    if not origin:  # e.g. a scripted run's trace: only its decisions replay, times do not matter
        log.warning("%s has no clock_origin: the replay reads the wall clock (model calls that saw times in "
                    "MEMORY.md will not match)", source)
        return LogicalClock(utc_now())
    return LogicalClock.parse(origin)


def new_id(clock: Callable[[], _dt.datetime]) -> str:
    """A run id; never from a logical clock (a reading there would shift every later time of the run)."""
    return new_run_id(utc_now() if isinstance(clock, LogicalClock) else clock())


def note_clock(trace: TraceSink | None, clock: Callable[[], _dt.datetime]) -> None:
    """Record a logical clock's origin in the trace manifest (so a replay reads the same times)."""
    if trace is not None and isinstance(clock, LogicalClock) and trace.mode != "replay":
        trace.update_manifest(clock_origin=clock.origin.isoformat())


def make_trace(op_dir: Path, run_id: str, clock: Callable[[], _dt.datetime]) -> Trace:
    """The run's trace sink; event timestamps stay wall-clock unless the run's own clock is injected."""
    if isinstance(clock, LogicalClock):  # event timestamps stay wall-clock; the run's own times are logical
        return Trace(trace_dir(op_dir, run_id), run_id=run_id, mode="record", op_dir=op_dir)
    return Trace(trace_dir(op_dir, run_id), run_id=run_id, mode="record", op_dir=op_dir,
                 clock=lambda: clock().isoformat(timespec="milliseconds"))
