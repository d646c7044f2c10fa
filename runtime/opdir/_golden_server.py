"""One golden process per orchestrator run: golden.py runs in a fork of it instead of a fresh interpreter.

Why: every golden run (intake's check, then every verification's golden) started a fresh ``sys.executable`` that
imported numpy before running golden.py for a few milliseconds: 0.15-0.4 s on an idle machine, 1-1.5 s at load 4,
paid by every verification of a run. Within :func:`golden_server` the interpreter starts once (through the
project's one subprocess runner, :func:`runtime.sandbox.start_process`, ``trusted`` profile: environment
allow-list, rlimits, own session, dies with its parent) and each golden run is a ``fork`` of it
(``_golden_child.serve``) that does what a fresh child does: the same script, request and files in its own
private working directory (``HOME``/``TMPDIR`` set to it, as :func:`runtime.sandbox.env_policy.child_env`),
CPU limit per run, fresh random seeds, stderr tail, and exit status. golden.py is only ever imported in the
fork, which is discarded: nothing of one golden run is visible to the next.

What stays as before: outside :func:`golden_server` (``python -m orchestrator verify``, intake on its own, tests)
every golden run is a fresh process. Inside it, a run falls back to a fresh process when the server is busy with
another thread's run or cannot start; a run over its budget kills the server's whole process group (the
runner's backstop), and the next run starts a new server.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from runtime.sandbox._proc import Limits, ProcResult, Running, private_dir, start_process
from runtime.sandbox.env_policy import child_env

__all__ = ["GoldenServer", "active_server", "golden_server"]

log = logging.getLogger(__name__)

_CHILD = Path(__file__).with_name("_golden_child.py")
_MEMORY_BYTES = 8 * 1024**3
"""RLIMIT_AS of the server, inherited by every fork (the same as a fresh golden child's)."""


class GoldenServer:
    """A golden process that forks one child per golden run (see the module docstring). Thread-safe: one run
    at a time; a caller that finds it busy gets ``None`` from :meth:`run` and starts a fresh process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stack: contextlib.ExitStack | None = None
        self._proc: Running | None = None
        self._req_w = self._rep_r = -1
        self._pending = b""
        self._env: dict[str, str] = {}
        """The environment policy's variables the server started with (``HOME``/``TMPDIR`` aside)."""
        self.starts = 0
        """Server processes started (tests and benches count them)."""
        self.forks = 0
        """Golden runs served by a fork."""

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start the server process now (its interpreter boots while the caller goes on); no-op when running."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> bool:
        # a fork has the environment its server started with, and numpy/BLAS read theirs (OPENBLAS_CORETYPE ...)
        # at import: when the parent's has changed since, a fresh child would see another one, so the server is
        # replaced (golden and candidate must see the same environment: tests/verify/test_env_policy.py)
        env = _policy_env()
        if self._proc is not None and self._proc.poll() is None and env == self._env:
            return True
        self._stop()
        stack = contextlib.ExitStack()
        fds: list[int] = []
        try:
            work = stack.enter_context(private_dir("forge-golden-server-"))
            req_r, req_w = os.pipe()
            fds += [req_r, req_w]
            rep_r, rep_w = os.pipe()
            fds += [rep_r, rep_w]
            limits = Limits(wall_s=float("inf"), cpu_s=None, memory_bytes=_MEMORY_BYTES, max_open_files=1024,
                            max_file_bytes=None, max_processes=None)
            proc = start_process([sys.executable, str(_CHILD), "--serve", str(req_r), str(rep_w)], work=work,
                                 limits=limits, profile="trusted", pass_fds=(req_r, rep_w))
        except OSError as exc:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            stack.close()
            log.warning("golden server did not start (%s): golden runs start their own process", exc)
            return False
        os.close(req_r)
        os.close(rep_w)
        self._stack, self._proc, self._req_w, self._rep_r, self._pending = stack, proc, req_w, rep_r, b""
        self._env = env
        self.starts += 1
        return True

    def _stop(self) -> None:
        """End the server's process group, close its pipes, remove its directory.

        Killed, not asked to leave: it holds nothing worth a clean exit (its forks have all been waited for), and
        an interpreter with numpy takes 0.1-0.2 s to finalise at load, which the run would wait for."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=1.0)
            self._proc = None
        for fd in (self._req_w, self._rep_r):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._req_w = self._rep_r = -1
        if self._stack is not None:
            self._stack.close()
            self._stack = None

    def close(self) -> None:
        with self._lock:
            self._stop()

    # ---------------------------------------------------------------- one golden run

    def run(self, argv: Sequence[str], *, work: Path, cpu_s: int, budget: float) -> ProcResult | None:
        """Run ``_golden_child.py <argv>`` in a fork with ``work`` as its directory, within ``budget`` seconds.

        Returns the child's :class:`ProcResult` (``returncode``, ``timed_out``, ``stderr`` tail), or None when
        this server cannot take the run (busy with another thread's, or it cannot start): run a fresh process.
        """
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if not self._ensure():
                return None
            started = time.perf_counter()
            msg = json.dumps({"work": str(work), "argv": list(argv), "cpu_s": cpu_s}) + "\n"
            try:
                _write_all(self._req_w, msg.encode("utf-8"))
            except OSError:  # the server died while idle: a new one takes this run
                self._stop()
                if not self._ensure():
                    return None
                _write_all(self._req_w, msg.encode("utf-8"))
            deadline = started + budget
            replies: list[dict] = []
            while len(replies) < 2:
                line = self._readline(deadline)
                if line is None:  # over budget: the runner's backstop, the server's whole group
                    self._stop()
                    return ProcResult(returncode=None, timed_out=True, duration_s=time.perf_counter() - started,
                                      isolation="process-only")
                if line == b"":  # the server died under this run (killed from outside, out of memory)
                    self._stop()
                    return ProcResult(returncode=-9, timed_out=False, duration_s=time.perf_counter() - started,
                                      isolation="process-only", stderr=b"the golden server process died")
                replies.append(json.loads(line))
            self.forks += 1
            done = replies[1]
            return ProcResult(returncode=int(done["rc"]), timed_out=False, duration_s=time.perf_counter() - started,
                              isolation="process-only", stderr=str(done.get("stderr", "")).encode("utf-8"),
                              pid=int(done["pid"]))
        finally:
            self._lock.release()

    def _readline(self, deadline: float) -> bytes | None:
        """The next reply line; ``b""`` at EOF (the server is gone); None at the deadline."""
        while b"\n" not in self._pending:
            left = deadline - time.perf_counter()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._rep_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._rep_r, 1 << 16)
            if not chunk:
                return b""
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _policy_env() -> dict[str, str]:
    """What :func:`runtime.sandbox.env_policy.child_env` would give a fresh golden child now, but its directory."""
    env = child_env("")
    env.pop("HOME", None)
    env.pop("TMPDIR", None)
    return env


_ACTIVE: GoldenServer | None = None
_DEPTH = 0
_ACTIVE_LOCK = threading.Lock()


def active_server() -> GoldenServer | None:
    """The server of the :func:`golden_server` block this process is in (any thread), or None."""
    return _ACTIVE


@contextlib.contextmanager
def golden_server(*, start: bool = True) -> Iterator[GoldenServer]:
    """Within the block, golden runs of this process (every thread) fork from one golden process.

    Nested blocks share the outer block's server; the outermost one ends it. ``start``: boot the server now, so
    that its interpreter starts while the caller does other work (the first golden run waits for it anyway).
    """
    global _ACTIVE, _DEPTH
    with _ACTIVE_LOCK:
        if _ACTIVE is None:
            _ACTIVE = GoldenServer()
        server = _ACTIVE
        _DEPTH += 1
    try:
        if start:
            server.start()
        yield server
    finally:
        with _ACTIVE_LOCK:
            _DEPTH -= 1
            last = _DEPTH == 0
            if last:
                _ACTIVE = None
        if last:
            server.close()
