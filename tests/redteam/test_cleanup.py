"""Runner-level cleanup: when the process that runs verify is interrupted (SIGTERM, SIGINT) or killed, the sandbox
and its temporary directories do not outlive it. (Ctrl-C at the orchestrator level is tested with the CLI.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DRIVER = """
import signal, sys
# as a process started from a shell: Ctrl-C raises KeyboardInterrupt (a test runner's worker may hand its children
# SIGINT ignored or blocked, which exec keeps)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
from pathlib import Path
import numpy as np
from runtime.sandbox import SandboxPolicy, run_candidate
cand = Path(sys.argv[1])
cand.write_text("import time\\n\\ndef spin_wrapper(x):\\n    while True:\\n        time.sleep(0.01)\\n")
print("started", flush=True)
run_candidate(cand, "spin_wrapper", [("c", [np.zeros(2, np.float32)])], emulator=sys.argv[2],
              policy=SandboxPolicy(wall_timeout_s=600.0, cpu_timeout_s=600), repeat_first=False)
"""


def _children(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (from /proc: parent pids), zombies excluded."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if fields[0] != "Z":
                parents[int(name)] = int(fields[1])
    out, frontier = [], [pid]
    while frontier:
        cur = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == cur]
        out += kids
        frontier += kids
    return out


def _alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2:].split()[0] != "Z":
            out.append(pid)
    return out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=lambda s: s.name)
def test_interrupting_the_parent_leaves_no_sandbox_and_no_temp_dir(sig: signal.Signals, tmp_path: Path) -> None:
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen([sys.executable, "-c", DRIVER, str(tmp_path / "spin_impl.py"),
                               "runtime.emulator"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    sandbox: list[int] = []
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == b"started"
        # the sandbox (Bubblewrap, or the runner itself without it) is the parent's child, started once its private
        # work dir exists under our TMPDIR (a child seen earlier can be the short-lived Bubblewrap probe)
        # A child must be seen on two reads 0.2 s apart: one read once caught a short-lived child between the work
        # dir's creation and the sandbox's start, and the read after the loop found no child (session 27, a full
        # `make test` on 2 cores without Bubblewrap)
        deadline = time.monotonic() + 240  # generous: a loaded machine took over 90 s to start it once
        while time.monotonic() < deadline and parent.poll() is None:
            if list(tmp.iterdir()) and _children(parent.pid):
                time.sleep(0.2)
                if _children(parent.pid):
                    break
            else:
                time.sleep(0.1)
        sandbox = _children(parent.pid)
        assert sandbox, f"the sandbox never started: {parent.poll()=} {parent.stderr.read()[-2000:] if parent.poll() is not None else ''!r}"
        assert list(tmp.iterdir()), "the sandbox's private work dir is under TMPDIR"
        time.sleep(0.5)
        sandbox = _children(parent.pid)  # the whole tree once it runs (bwrap -> runner)
        parent.send_signal(sig)
        try:
            parent.wait(timeout=20)
        except subprocess.TimeoutExpired:
            status = Path(f"/proc/{parent.pid}/status").read_text()
            pytest.fail(f"the parent did not end within 20 s of {sig.name}; its signal state: "
                        + " ".join(line for line in status.splitlines() if line.startswith(("SigBlk", "SigIgn",
                                                                                             "SigCgt", "State"))))
        deadline = time.monotonic() + 10
        while _alive(sandbox) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _alive(sandbox) == [], "a sandbox process outlived its parent"
        if sig != signal.SIGKILL:  # SIGKILL cannot be handled: the sandbox dies with its parent, the dir stays
            assert list(tmp.iterdir()) == [], "temporary directories left behind"
    finally:
        if parent.poll() is None:
            parent.kill()
        for pid in _alive(sandbox):
            os.kill(pid, signal.SIGKILL)
