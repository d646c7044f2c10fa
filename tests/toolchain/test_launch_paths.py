"""The toolchain child gets a fresh tmpfs on /tmp; a toolchain venv or a checkout under /tmp must stay visible.

Found by using it: with ``PTO_FORGE_PYPTO_PYTHON=/tmp/tcv/bin/python`` every compile failed with
``bwrap: execvp /tmp/tcv/bin/python: No such file or directory``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.toolchain._launch import Limits, _visible_paths, bwrap_works, run_child


def test_visible_paths_name_the_venv_its_base_and_the_checkout() -> None:
    paths = _visible_paths("/tmp/x/venv/bin/python", Path(__file__).resolve().parents[2] / "runtime/toolchain/_child.py")
    assert "/tmp/x/venv" in paths
    assert str(Path(__file__).resolve().parents[2]) in paths
    real = _visible_paths(sys.executable, Path(__file__))
    assert str(Path(os.path.realpath(sys.executable)).parents[1]) in real  # the interpreter the venv links to


PROBE = """\
import json, os, sys
from pathlib import Path
Path("result.json").write_text(json.dumps({"prefix": sys.prefix, "cwd": os.getcwd(), "home": os.environ["HOME"],
                                           "plog": os.environ.get("ASCEND_PROCESS_LOG_PATH"),
                                           "key": os.environ.get("OPENAI_API_KEY")}))
print("to stdout"); print("to stderr", file=sys.stderr)
"""


@pytest.mark.parametrize("use_bwrap", [pytest.param(True, marks=pytest.mark.skipif(
    not bwrap_works(), reason="bubblewrap cannot create namespaces here")), False])
def test_a_venv_in_tmp_runs_in_the_child_and_its_files_reach_the_parent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, use_bwrap: bool) -> None:
    """Through the one runner (run_process, vendor profile): the work dir is shared (the parent reads the cost
    report the compiler writes there), a venv under /tmp stays visible, the env is the allow-list."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    venv = Path("/tmp") / f"forge-venv-{tmp_path.name}-{int(use_bwrap)}"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        py = str(venv / "bin" / "python")
        work = tmp_path / "work"
        work.mkdir()
        script = tmp_path / "probe.py"
        script.write_text(PROBE)
        run = run_child(py, script, work / "request.json", work, Limits(wall_timeout_s=60), use_bwrap=use_bwrap)
        assert run.returncode == 0 and not run.timed_out, run.stderr_tail
        assert run.layers["bwrap"] is use_bwrap
        seen = json.loads((work / "result.json").read_text())
        assert seen["prefix"] == str(venv) and seen["cwd"] == seen["home"] == str(work)
        assert seen["plog"] == str(work / "plog") and seen["key"] is None
        assert "to stderr" in run.stderr_tail and "to stdout" not in run.stderr_tail
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def test_the_compiler_child_gets_the_sandbox_allow_list_plus_its_own_tools(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """One environment policy (issue 15): the toolchain child's env is ``child_env`` plus PATH and plog only."""
    from runtime.sandbox.env_policy import child_env
    from runtime.toolchain._launch import _env_extra

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("MKL_CBWR", "AVX2")
    base = child_env(tmp_path)
    env = {**base, **_env_extra(tmp_path)}  # as run_process composes them for the vendor profile
    assert {k: v for k, v in env.items() if k in base and k != "PATH"} == {k: v for k, v in base.items() if k != "PATH"}
    assert set(env) - set(base) == {"ASCEND_PROCESS_LOG_PATH", "ASCEND_GLOBAL_LOG_LEVEL"}
    assert env["PATH"].endswith(base["PATH"]) and env["MKL_CBWR"] == "AVX2"
    assert "sk-secret" not in str(env) and env["ASCEND_PROCESS_LOG_PATH"].startswith(str(tmp_path))


def test_only_the_vendor_profile_may_widen_the_environment(tmp_path: Path) -> None:
    from runtime.sandbox import Limits as ProcLimits
    from runtime.sandbox import run_process

    for profile in ("trusted", "untrusted"):
        with pytest.raises(ValueError, match="vendor"):
            run_process([sys.executable, "-c", "pass"], work=tmp_path, limits=ProcLimits(), profile=profile,
                        env_extra={"OPENAI_API_KEY": "sk"})
