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
import threading

__all__ = ["LogicalClock"]


class LogicalClock:
    """``clock()`` returns ``origin + n seconds`` on its n-th call (n from 0); thread-safe."""

    def __init__(self, origin: _dt.datetime) -> None:
        if origin.tzinfo is None:
            origin = origin.replace(tzinfo=_dt.UTC)
        self.origin = origin.replace(microsecond=0)
        self._n = 0
        self._lock = threading.Lock()

    @classmethod
    def parse(cls, text: str) -> LogicalClock:
        """From an ISO-8601 timestamp (as stored in a manifest)."""
        return cls(_dt.datetime.fromisoformat(text))

    def __call__(self) -> _dt.datetime:
        with self._lock:
            value = self.origin + _dt.timedelta(seconds=self._n)
            self._n += 1
        return value

    @property
    def readings(self) -> int:
        return self._n
