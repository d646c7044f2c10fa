"""Ctrl-C while ``python -m runtime.<tool>`` is still importing its package: one line, exit 130 (s43).

Found by ``make test`` on a machine at load 15: ``tests/verify/test_cli_interrupt.py`` interrupted the verifier 2.5 s
after it started, while it was still importing, and got a traceback ending in ``KeyboardInterrupt`` and death by
SIGINT instead of the verifier's one line. Every ``runtime`` tool had it (measured: an interrupt 0.15-0.6 s after the
start gave a traceback for verify, emulator, lint and bisect; ``python -m orchestrator`` already said one line).
Here the interrupt arrives at a fixed point instead of after a sleep: a ``sitecustomize`` on the path raises it when
runpy looks up the tool's ``__main__`` - after the tool's package (the slow part) was imported, before its ``main`` runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runtime import missing_deps

ROOT = Path(__file__).resolve().parents[1]

_INTERRUPT_AT_MAIN = '''
import importlib.abc, sys
class _Interrupt(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("runtime.") and fullname.endswith(".__main__"):
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, _Interrupt())
'''


@pytest.mark.parametrize("tool", ["runtime.verify", "runtime.lint", "runtime.bisect", "runtime.emulator"])
def test_an_interrupt_before_main_is_one_line_and_exit_130(tool: str, tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(_INTERRUPT_AT_MAIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    p = subprocess.run([sys.executable, "-m", tool, "--help"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 130, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr and p.stderr.strip().splitlines() == [f"{tool}: interrupted"], p.stderr
    assert p.stdout == ""


def test_the_hook_names_the_tool_and_leaves_other_errors_to_the_previous_hook(monkeypatch) -> None:
    monkeypatch.setattr(sys, "orig_argv", ["python", "-X", "dev", "-m", "runtime.lint", "k.py"])
    assert missing_deps.tool_name() == "runtime.lint"
    monkeypatch.setattr(sys, "orig_argv", ["python", "-c", "pass"])
    assert missing_deps.tool_name() == "runtime"
    seen: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, exc, tb: seen.append(kind))
    missing_deps.install_hook()
    sys.excepthook(ValueError, ValueError("x"), None)  # not ours: the hook that was there gets it
    assert seen == [ValueError]
