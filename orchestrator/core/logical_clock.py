"""A deterministic clock for recorded and replayed runs.

Why: MEMORY.md (which agents read, so it is part of every prompt) and the audit history carry times. If
those came from the wall clock, a replayed run would build different prompts than the recorded one and
miss every recorded model call, and two replays would not give identical artifacts. A recorded run
therefore reads time from a logical clock: the run's start time (kept in the trace manifest as
``clock_origin``) plus one second per reading. A replay starts the same clock at the same origin, and
because the replay takes the same path it reads the same times. Event timestamps in events.jsonl keep the
wall clock (they are timing fields and excluded from every comparison).
"""

from __future__ import annotations

import datetime as _dt
import json
import threading
from pathlib import Path

__all__ = ["LogicalClock"]


class LogicalClock:
    """``clock()`` returns ``origin + n seconds`` on its n-th call (n from 0); thread-safe."""

    def __init__(self, origin: _dt.datetime, *, start: int = 0, state_file: Path | None = None) -> None:
        if origin.tzinfo is None:
            origin = origin.replace(tzinfo=_dt.UTC)
        self.origin = origin.replace(microsecond=0)
        self._n = start
        self._state_file = state_file
        self._lock = threading.Lock()

    @classmethod
    def parse(cls, text: str) -> LogicalClock:
        """From an ISO-8601 timestamp (as stored in a manifest)."""
        return cls(_dt.datetime.fromisoformat(text))

    @classmethod
    def resume(cls, origin: str, state_file: Path) -> LogicalClock:
        """Continue a run's clock after the process stopped (at a gate in stop mode, or a crash).

        At a gate the count is exactly where an uninterrupted run would be; after a crash, a node that was
        interrupted half-way reads its times again, so the resumed run's later times are shifted.
        """
        try:
            start = int(json.loads(state_file.read_text(encoding="utf-8"))["readings"])
        except (OSError, ValueError, KeyError, TypeError):
            start = 0
        return cls(_dt.datetime.fromisoformat(origin), start=start, state_file=state_file)

    def __call__(self) -> _dt.datetime:
        with self._lock:
            value = self.origin + _dt.timedelta(seconds=self._n)
            self._n += 1
            if self._state_file is not None and self._state_file.parent.is_dir():
                self._state_file.write_text(json.dumps({"readings": self._n}), encoding="utf-8")
        return value

    @property
    def readings(self) -> int:
        return self._n
