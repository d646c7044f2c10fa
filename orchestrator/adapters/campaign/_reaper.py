"""Fate-sharing for an embedded Ray cluster: ``python _reaper.py <driver pid>``.

Why: ``ray.init()`` starts the cluster's processes under the driver. When the driver ends normally it calls
``ray.shutdown()``; when it is killed (``kill -9``, the OOM killer, a lost terminal) the GCS server, the raylet
and the workers follow it, but Ray's dashboard and runtime-env agents are re-parented to init and keep running
(observed with Ray 2.60; their command lines and environments are rewritten, so nothing names them). This
watcher, started by the driver in its own session before ``ray.init()``, records the driver's descendants
(pid + start time) every half second; once the driver is gone it terminates every recorded process that is
still the same process (SIGTERM, then SIGKILL after a grace period), and exits. It imports only the standard
library and reads ``/proc`` (Linux). A driver that shut Ray down itself stops the watcher with SIGTERM (no
sweep then).
"""

from __future__ import annotations

import os
import signal
import sys
import time

POLL_S = 0.5
GRACE_S = 2.0


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of ``pid``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    return int(rest[1]), int(rest[19])


def descendants(root: int) -> dict[int, int]:
    """Every live descendant of ``root``: pid -> start time."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        st = _stat(int(name))
        if st is None:
            continue
        parents.setdefault(st[0], []).append(int(name))
        starts[int(name)] = st[1]
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in out and child in starts:
                out[child] = starts[child]
                todo.append(child)
    return out


def _same(pid: int, start: int) -> bool:
    st = _stat(pid)
    return st is not None and st[1] == start


def sweep(known: dict[int, int]) -> int:
    """Terminate every process in ``known`` that is still the same process (and its descendants); how many."""
    me = os.getpid()
    for pid in list(known):
        known.update({p: s for p, s in descendants(pid).items() if p not in known})
    targets = {p: s for p, s in known.items() if p != me and _same(p, s)}
    for pid in targets:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and any(_same(p, s) for p, s in targets.items()):
        time.sleep(0.1)
    for pid, start in targets.items():
        if _same(pid, start):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return len(targets)


def main(argv: list[str]) -> int:
    driver = int(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle; we sweep after it
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # the driver shut Ray down itself: nothing to do
    started = _stat(driver)
    if started is None:
        return 0
    known: dict[int, int] = {}
    while _same(driver, started[1]):
        known.update(descendants(driver))
        known.pop(os.getpid(), None)
        time.sleep(POLL_S)
    sweep(known)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
