"""A deterministic clock for recorded and replayed runs.

Why: MEMORY.md (which agents read, so it is part of every prompt) and the audit history carry times. If
those came from the wall clock, a replayed run would build different prompts than the recorded one and
miss every recorded model call, and two replays would not give identical artifacts. A recorded run
therefore reads time from a logical clock: the run's start time (kept in the trace manifest as
``clock_origin``) plus one second per reading. A replay starts the same clock at the same origin, and
because the replay takes the same path it reads the same times. Event timestamps in events.jsonl keep the
wall clock (they are timing fields and excluded from every comparison).

The count of readings is part of every checkpoint (``ForgeState.counters``, :meth:`orchestrator.core.services.Services.counters`):
a node that runs again after an interrupt (Ctrl-C, kill -9, an error) first sets the clock back with
:meth:`LogicalClock.rewind`, so it reads the times it would have read in an uninterrupted run.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import threading
import weakref
from pathlib import Path

__all__ = ["LogicalClock"]

_RECORD = 32
"""Bytes of the state file's one record (``{"readings": n}`` padded with blanks): every reading overwrites it in
place, so a reader never finds the file empty and the writer never truncates it (see :meth:`LogicalClock._persist`)."""


class LogicalClock:
    """``clock()`` returns ``origin + n seconds`` on its n-th call (n from 0); thread-safe."""

    def __init__(self, origin: _dt.datetime, *, start: int = 0, state_file: Path | None = None) -> None:
        if origin.tzinfo is None:
            origin = origin.replace(tzinfo=_dt.UTC)
        self.origin = origin.replace(microsecond=0)
        self._n = start
        self._state_file = state_file
        self._fd: int | None = None
        self._lock = threading.Lock()

    @classmethod
    def parse(cls, text: str) -> LogicalClock:
        """From an ISO-8601 timestamp (as stored in a manifest)."""
        return cls(_dt.datetime.fromisoformat(text))

    @classmethod
    def resume(cls, origin: str, state_file: Path) -> LogicalClock:
        """Continue a run's clock after the process stopped (at a gate in stop mode, or a crash).

        The state file holds the count of the last reading, which may have been taken by a node that was
        interrupted half-way; that node runs again from the checkpoint, which sets the count back to the
        checkpoint's (:meth:`rewind`) before the node reads a time. The file's count is used as it is only by a
        run whose checkpoints predate ``ForgeState.counters``.
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
            if self._state_file is not None:
                self._persist()
        return value

    def _persist(self) -> None:
        """Record the count of readings in the state file (once its run folder exists).

        Why in place: a run reads its clock 1-2 times per node. Rewriting the file (open with O_TRUNC, write)
        cost 1-5 ms per reading on ext4 with a busy disk - truncating a file to zero makes ext4 start writing
        its new blocks out at close (``auto_da_alloc``) - and left a window in which the file was empty (a kill
        -9 there resumed the clock at 0). One ``pwrite`` of a fixed-size record at offset 0 on a descriptor kept
        open costs microseconds and replaces the bytes of the last record in one write of less than a sector:
        a kill -9 leaves the last or the new count, as before, never nothing. Not fsynced, as before.
        """
        assert self._state_file is not None
        if self._fd is None:
            if not self._state_file.parent.is_dir():
                return
            self._fd = os.open(self._state_file, os.O_WRONLY | os.O_CREAT, 0o644)
            weakref.finalize(self, os.close, self._fd)
        record = json.dumps({"readings": self._n}).encode()
        os.pwrite(self._fd, record + b" " * (_RECORD - 1 - len(record)) + b"\n", 0)

    def rewind(self, readings: int) -> None:
        """Set the count of readings to ``readings`` (the checkpoint's, when a node runs again after an interrupt):
        the next reading is ``origin + readings`` seconds, as in a run that was never interrupted."""
        with self._lock:
            self._n = int(readings)
            if self._state_file is not None:
                self._persist()

    @property
    def readings(self) -> int:
        return self._n
