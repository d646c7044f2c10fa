"""The sandbox runs the interpreter it was started with, whatever path that was typed as (session 49).

A user in a sibling folder ran ``../repo/.venv/bin/python -m runtime.verify ...``: Bubblewrap mounts the
interpreter's folders by their real paths, so ``..`` (or a symlinked folder) in ``sys.executable`` was not found
inside it, and verify quietly fell back to process-only isolation. `runtime.sandbox._proc.inside_path` resolves the
folders and keeps the venv's own ``python`` link."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from runtime.sandbox import isolation_level
from runtime.sandbox._proc import Limits, inside_path, run_process


def test_inside_path_resolves_the_folders_and_keeps_the_link(tmp_path: Path) -> None:
    exe = sys.executable
    folder = os.path.dirname(exe)
    dotted = os.path.join(folder, "..", os.path.basename(folder), os.path.basename(exe))
    assert inside_path(dotted) == os.path.join(os.path.realpath(folder), os.path.basename(exe))
    link = tmp_path / "linked"
    link.symlink_to(folder, target_is_directory=True)
    assert inside_path(str(link / os.path.basename(exe))) == os.path.join(os.path.realpath(folder),
                                                                        os.path.basename(exe))
    assert inside_path("python3") == "python3"  # a bare name is looked up on the PATH, as before


def test_a_dotted_interpreter_path_runs_inside_bubblewrap(tmp_path: Path) -> None:
    level, why = isolation_level("bwrap")
    if level != "bwrap":
        pytest.skip(f"Bubblewrap is not usable here: {why}")
    play = tmp_path / "play"  # a folder of the user's, which the sandbox does not mount
    play.mkdir()
    dotted = os.path.join(str(play), os.path.relpath(sys.executable, play))  # play/../../..../.venv/bin/python
    assert ".." in dotted and os.path.samefile(dotted, sys.executable)
    work = tmp_path / "work"
    work.mkdir()
    res = run_process([dotted, "-c", "import sys; print(sys.prefix)"], work=work,
                      limits=Limits(wall_s=60.0, cpu_s=60, memory_bytes=2 << 30), profile="untrusted",
                      isolation="bwrap")
    assert res.isolation == "bwrap"
    assert res.returncode == 0, res.stderr.decode(errors="replace")
    assert res.stdout.decode().strip() == sys.prefix  # the venv, not the base interpreter
