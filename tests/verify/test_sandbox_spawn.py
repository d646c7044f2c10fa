"""A child whose set-up before ``exec`` fails (``preexec_fn``): forked again, and reported as ``OSError`` with what
failed (`runtime.sandbox._proc._spawn`).

Why: on 5 Dec one verification in a full test run under Python 3.13 died in ``subprocess``'s "Exception occurred in
preexec_fn" - a ``SubprocessError``, which the callers' ``except OSError`` did not catch: verify logged an internal
error, the device's pipes stayed open, and what had failed in the child was lost."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from runtime.sandbox import _proc
from runtime.sandbox._proc import Limits, no_fork, start_process


def _failing_setups(monkeypatch: pytest.MonkeyPatch, fail_first: int) -> list[int]:
    """Make the first ``fail_first`` forks fail in the child (after the real set-up); returns the attempts made."""
    attempts: list[int] = []

    class Counted(_proc._Reported):
        def __init__(self, setup: Callable[[], None]) -> None:
            n = len(attempts)
            attempts.append(n)

            def child() -> None:
                setup()
                if n < fail_first:
                    raise OSError(5, f"injected set-up failure {n}")

            super().__init__(child)

    monkeypatch.setattr(_proc, "_Reported", Counted)
    return attempts


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_a_failed_set_up_is_forked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         caplog: pytest.LogCaptureFixture) -> None:
    attempts = _failing_setups(monkeypatch, 1)
    before = _fds()
    with caplog.at_level(logging.WARNING, logger=_proc.__name__):
        run = start_process([sys.executable, "-c", "print('ran')"], work=tmp_path, limits=Limits(wall_s=30),
                            profile="trusted")
        res = run.wait()
    assert attempts == [0, 1]
    assert res.returncode == 0 and res.stdout.strip() == b"ran"
    assert _fds() == before
    warned = [r.getMessage() for r in caplog.records if "set-up before exec" in r.getMessage()]
    assert len(warned) == 1 and "injected set-up failure 0" in warned[0], warned


def test_a_set_up_that_keeps_failing_is_an_os_error_with_the_reason(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = _failing_setups(monkeypatch, 99)
    before = _fds()
    with pytest.raises(OSError, match=r"failed 3 times: .*injected set-up failure 2"):
        start_process([sys.executable, "-c", "print('ran')"], work=tmp_path, limits=Limits(wall_s=30),
                      profile="trusted", channel=True, stdin=b"x" * 10)
    assert attempts == [0, 1, 2]
    assert _fds() == before  # every pipe of the three attempts and of the child's streams is closed


def test_a_child_that_cannot_exec_is_still_an_os_error_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = _failing_setups(monkeypatch, 0)
    before = _fds()
    with pytest.raises(FileNotFoundError):
        start_process([str(tmp_path / "no-such-program")], work=tmp_path, limits=Limits(wall_s=30), profile="trusted")
    assert attempts == [0]  # not retried: the set-up passed, exec failed
    assert _fds() == before


def test_no_child_is_forked_inside_a_no_fork_block(tmp_path: Path) -> None:
    # OpenBLAS's fork handler hangs for good when another thread is inside a threaded BLAS call (`_proc.no_fork`):
    # bisection wraps its in-process matmuls in this block, and a fork from another thread waits for its end
    forked: dict[str, float] = {}

    def spawn() -> None:
        run = start_process([sys.executable, "-c", "pass"], work=tmp_path, limits=Limits(wall_s=30), profile="trusted")
        forked["at"] = time.monotonic()
        run.wait()

    other = threading.Thread(target=spawn)
    with no_fork():
        other.start()
        other.join(timeout=0.5)
        assert other.is_alive() and "at" not in forked  # waiting for the block to end
        released = time.monotonic()
        own = start_process([sys.executable, "-c", "pass"], work=tmp_path, limits=Limits(wall_s=30),
                            profile="trusted")  # the holder itself may still start a child (reentrant)
    other.join(timeout=30)
    assert own.wait().returncode == 0
    assert forked["at"] >= released
