"""The toolchain child gets a fresh tmpfs on /tmp; a toolchain venv or a checkout under /tmp must stay visible.

Found by using it: with ``PTO_FORGE_PYPTO_PYTHON=/tmp/tcv/bin/python`` every compile failed with
``bwrap: execvp /tmp/tcv/bin/python: No such file or directory``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.toolchain._launch import _bwrap_args, _visible_paths, bwrap_works


def test_paths_under_tmp_are_bound_after_the_tmpfs(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    args = _bwrap_args(tmp_path / "work", (str(venv), "/usr/lib"))
    tmpfs = args.index("--tmpfs")
    bind = args.index(str(venv))
    assert args[bind - 1] == "--ro-bind" and bind > tmpfs
    assert "/usr/lib" not in args  # already visible through the read-only root


def test_visible_paths_name_the_venv_and_the_checkout() -> None:
    paths = _visible_paths("/tmp/x/venv/bin/python", Path(__file__).resolve().parents[2] / "runtime/toolchain/_child.py")
    assert "/tmp/x/venv" in paths
    assert str(Path(__file__).resolve().parents[2]) in paths


@pytest.mark.skipif(not bwrap_works(), reason="bubblewrap cannot create namespaces here")
def test_a_venv_in_tmp_runs_inside_the_child_sandbox(tmp_path: Path) -> None:
    venv = Path("/tmp") / f"forge-venv-{tmp_path.name}"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        py = str(venv / "bin" / "python")
        work = tmp_path / "work"
        work.mkdir()
        cmd = [shutil.which("bwrap") or "bwrap", *_bwrap_args(work, _visible_paths(py, Path(__file__))),
               py, "-c", "import sys; print(sys.prefix)"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == str(venv)
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def test_the_compiler_child_gets_the_sandbox_allow_list_plus_its_own_tools(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """One environment policy (issue 15): the toolchain child's env is ``child_env`` plus PATH and plog only."""
    from runtime.sandbox.env_policy import child_env
    from runtime.toolchain._launch import _env

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    env, base = _env(tmp_path), child_env(tmp_path)
    assert {k: v for k, v in env.items() if k in base and k != "PATH"} == {k: v for k, v in base.items() if k != "PATH"}
    assert set(env) - set(base) == {"ASCEND_PROCESS_LOG_PATH", "ASCEND_GLOBAL_LOG_LEVEL"}
    assert env["PATH"].endswith(base["PATH"]) and env["OPENBLAS_CORETYPE"] == "Haswell"
    assert "sk-secret" not in str(env) and env["ASCEND_PROCESS_LOG_PATH"].startswith(str(tmp_path))
