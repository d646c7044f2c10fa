"""``intake`` shows that it is working while golden.py runs (a golden may take its whole per-case limit: 60 s
without a sign of life looked like a hung command), on a terminal only; piped output stays clean."""

from __future__ import annotations

import io
import time

from rich.console import Console

from orchestrator.ui.progress import working


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, force_terminal=terminal, width=100, color_system=None), buf


def test_a_terminal_sees_the_step_and_its_elapsed_time() -> None:
    console, buf = _console(True)
    with working(console, "running golden.py on every case (up to 60 s a case)"):
        time.sleep(0.4)  # the status refreshes ~12 times a second
    out = buf.getvalue()
    assert "running golden.py on every case (up to 60 s a case)" in out
    assert " s" in out.split("a case)")[-1]


def test_a_pipe_gets_nothing() -> None:
    console, buf = _console(False)
    with working(console, "running golden.py"):
        time.sleep(0.05)
    assert buf.getvalue() == ""
