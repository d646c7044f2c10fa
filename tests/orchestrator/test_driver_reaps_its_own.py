"""An interrupted run kills the children it left, and only those (session 30: `api.run` failing in a process that had
other children - a test worker holding an embedded Ray cluster - killed them all, and Ray took the process with it)."""

from __future__ import annotations

import subprocess
import sys
import time

from orchestrator.core.driver import _children, reap_children


def _alive(p: subprocess.Popen) -> bool:
    return p.poll() is None


def test_the_callers_children_survive_and_the_runs_are_killed() -> None:
    cmd = [sys.executable, "-c", "import time; time.sleep(60)"]
    callers = subprocess.Popen(cmd)  # there before the run began
    try:
        present = _children()
        assert callers.pid in present
        runs = [subprocess.Popen(cmd), subprocess.Popen(cmd, start_new_session=True)]  # the run's (one in a session)
        try:
            killed = reap_children(spare=present)
            time.sleep(0.2)
            assert sorted(killed) == sorted(p.pid for p in runs)
            assert all(p.wait(timeout=10) < 0 for p in runs)
            assert _alive(callers)
        finally:
            for p in runs:
                p.kill()
                p.wait()
    finally:
        callers.kill()
        callers.wait()
