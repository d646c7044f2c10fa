"""The logical clock's state file: the count of readings a resumed run continues from (clock.json)."""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

from orchestrator.core.logical_clock import LogicalClock

ORIGIN = _dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=_dt.UTC)


def _count(path: Path) -> int:
    return int(json.loads(path.read_text(encoding="utf-8"))["readings"])


def test_every_reading_is_recorded_in_place_and_a_resume_continues_from_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    state = run / "clock.json"
    clock = LogicalClock(ORIGIN, state_file=state)
    assert clock() == ORIGIN  # the run folder does not exist yet: nothing written, nothing raised
    assert not run.exists()
    run.mkdir()
    seen = set()
    for n in range(2, 14):
        clock()
        st = os.stat(state)
        seen.add(st.st_ino)
        assert _count(state) == n and st.st_size == 32  # one fixed-size record, never truncated, same file
    assert len(seen) == 1
    again = LogicalClock.resume(ORIGIN.isoformat(), state)
    assert again.readings == 13 and again() == ORIGIN + _dt.timedelta(seconds=13)
    assert _count(state) == 14


def test_a_file_of_the_earlier_format_is_read_and_overwritten_whole(tmp_path: Path) -> None:
    state = tmp_path / "clock.json"
    state.write_text(json.dumps({"readings": 123456}), encoding="utf-8")  # written by write_text before
    clock = LogicalClock.resume(ORIGIN.isoformat(), state)
    assert clock.readings == 123456
    clock()
    assert _count(state) == 123457
    del clock  # its descriptor closes with it
    small = LogicalClock(ORIGIN, state_file=state)
    small()
    assert _count(state) == 1  # a shorter count leaves no digits of the longer one behind
