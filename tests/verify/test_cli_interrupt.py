"""Ctrl-C in ``python -m runtime.verify`` (newcomer audit s30: a 30-line traceback ending in KeyboardInterrupt, where
the orchestrator, the import and the emulator print one line): one line, exit 130, no process left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from verify_helpers import HOSTILE, make_op

ROOT = Path(__file__).resolve().parents[2]


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d.name))
            except (OSError, ValueError, IndexError):
                continue
    return out


def test_ctrl_c_during_verification_is_one_line_and_exit_130(tmp_path: Path) -> None:
    op = make_op(tmp_path, "silu")
    spec = (op / "SPEC.md").read_text()
    (op / "SPEC.md").write_text(spec.replace("  - {B: 32, D: 64}", "  - {B: 262144, D: 64}"))  # seconds of work
    (op / "silu_impl.py").write_text((HOSTILE / "honest_silu.py").read_text())
    proc = subprocess.Popen([sys.executable, "-m", "runtime.verify", str(op), "silu_impl.py"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as a terminal has it
    time.sleep(2.5)
    assert proc.poll() is None, "verification ended before the interrupt"
    kids = _children(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("runtime.verify: interrupted")
    assert "PASS" not in out
    time.sleep(0.5)
    assert not [k for k in kids if os.path.exists(f"/proc/{k}") and "zombie" not in Path(f"/proc/{k}/status")
                .read_text().lower()], "a child of the verification outlived it"
