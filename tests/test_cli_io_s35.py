"""What ``python -m runtime.<tool>`` does for a user who runs it in the wrong interpreter or pipes it into ``head``
(UX audit s35: both gave a traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("tool", ["runtime.emulator", "runtime.verify", "runtime.bisect", "runtime.lint"])
def test_a_missing_package_is_one_line(tmp_path: Path, tool: str) -> None:
    """The system Python has no ``ml_dtypes``: a stand-in package that is not there says so on import."""
    (tmp_path / "ml_dtypes.py").write_text("raise ModuleNotFoundError(\"No module named 'ml_dtypes'\", "
                                           "name='ml_dtypes')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    p = subprocess.run([sys.executable, "-m", tool, "--help"], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().count("\n") == 0 and "'ml_dtypes' is not installed" in p.stderr


def test_a_project_module_that_fails_to_import_keeps_its_traceback(tmp_path: Path) -> None:
    """A bug in the project is not a missing dependency."""
    p = subprocess.run([sys.executable, "-m", "runtime.no_such_tool"], capture_output=True, text=True, cwd=ROOT,
                       timeout=60)
    assert p.returncode == 1 and "No module named runtime.no_such_tool" in p.stderr


def test_a_closed_stdout_ends_the_tool_quietly() -> None:
    code = ("import sys\nfrom runtime.cli_io import run_main\n"
            "def main():\n    for _ in range(100000):\n        print('x' * 100)\n    return 0\n"
            "sys.exit(run_main(main))\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.read(10)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141 and err == "", err


@pytest.mark.parametrize("tool", ["verify", "bisect", "lint"])
def test_each_tool_runs_its_main_through_run_main(tool: str) -> None:
    text = (ROOT / "runtime" / tool / "__main__.py").read_text()
    assert "sys.exit(run_main(main))" in text
