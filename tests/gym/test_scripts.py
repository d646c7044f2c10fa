"""Gym-style scripts run unmodified under ``python -m runtime.emulator``.

The corpus scripts (tests/gym/corpus_data) need torch: they build torch tensors on ``npu:0`` through the
``torch_npu`` stand-in. The runner behaviours that do not involve torch (absolute ``__file__``, child
processes under the emulator, error locations, the CLI switches) are tested without it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "corpus_data"
OPS = ("softmax", "rms_norm", "adamw", "silu", "bias_leaky")
HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="the gym scripts build torch tensors; torch is not installed "
                                 "(pip install torch==2.13.0, a CPU build)")


def _run(args: list[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}
    return subprocess.run([sys.executable, "-m", "runtime.emulator", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


@needs_torch
@pytest.mark.parametrize("op", OPS)
def test_corpus_script_runs_unmodified_from_its_folder(op: str) -> None:
    # a relative script path: the preamble walks up from os.path.dirname(__file__) and loops forever when
    # __file__ is relative (plain python makes it absolute; so must the emulator)
    proc = _run([f"test_{op}.py"], cwd=CORPUS / op)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[PRECISION_PASS]" in proc.stdout


def _script(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "s.py"
    p.write_text(textwrap.dedent(body))
    return p


def test_file_is_absolute_and_argv_is_as_given(tmp_path: Path) -> None:
    _script(tmp_path, """
        import os, sys
        print("FILE", os.path.isabs(__file__), "ARGV", sys.argv)
    """)
    proc = _run(["s.py", "a", "--b"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "FILE True ARGV ['s.py', 'a', '--b']" in proc.stdout


def test_child_python_processes_run_under_the_emulator(tmp_path: Path) -> None:
    _script(tmp_path, """
        import subprocess, sys
        code = "import pypto; print(pypto.__version__, pypto.frontend.jit.__module__)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        print("CHILD", out.strip())
    """)
    proc = _run(["s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "CHILD 0.2.0 runtime.emulator." in proc.stdout  # the emulator, though its version reads like pypto's


def test_child_keeps_the_cli_options(tmp_path: Path) -> None:
    _script(tmp_path, """
        import subprocess, sys
        code = "import pypto; print(pypto.platform.npuarch)"
        print("CHILD", subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip())
    """)
    proc = _run(["--npuarch", "DAV_3510", "s.py"], cwd=tmp_path)
    assert "CHILD DAV_3510" in proc.stdout, proc.stderr


def test_script_error_points_at_the_users_line_not_into_a_library(tmp_path: Path) -> None:
    _script(tmp_path, """
        import json

        def load():
            return json.loads("{not json")   # line 5

        load()
    """)
    proc = _run(["s.py"], cwd=tmp_path)
    assert proc.returncode == 3
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith(f"ERROR {tmp_path / 's.py'}:5: JSONDecodeError"), line


@needs_torch
def test_torch_error_points_at_the_users_line(tmp_path: Path) -> None:
    _script(tmp_path, """
        import torch
        import torch_npu

        x = torch.ones(2, 3, device="npu:0")
        y = torch.ones(4, 5).npu()
        z = x @ y   # line 7: shape mismatch raised inside torch
    """)
    proc = _run(["s.py"], cwd=tmp_path)
    assert proc.returncode == 3
    assert f"ERROR {tmp_path / 's.py'}:7: RuntimeError" in proc.stderr


def test_kernel_error_points_at_the_kernel_line(tmp_path: Path) -> None:
    _script(tmp_path, """
        import numpy as np
        import pypto

        @pypto.frontend.jit
        def k(x: pypto.Tensor([4, 16], pypto.DT_FP32), y: pypto.Tensor([4, 16], pypto.DT_FP32)):
            y[:] = pypto.exp(x)    # line 7: no tile shapes set

        k(np.ones((4, 16), np.float32), np.zeros((4, 16), np.float32))
    """)
    proc = _run(["s.py"], cwd=tmp_path)
    assert proc.returncode == 1
    assert "s.py:7:" in proc.stderr and "F21004" in proc.stderr


def test_help_lists_the_strictness_switches() -> None:
    proc = subprocess.run([sys.executable, "-m", "runtime.emulator", "--help"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0
    for flag in ("--compat", "--out-of-bounds", "--poison-check", "--npuarch", "--record", "--no-torch-npu"):
        assert flag in proc.stdout


def test_missing_script_is_a_usage_error(tmp_path: Path) -> None:
    proc = _run(["nope.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "no such script" in proc.stderr


def test_a_directory_is_a_usage_error_naming_its_test_script(tmp_path: Path) -> None:
    """User trial: `python -m runtime.emulator <op folder>` said "no such script" for a folder that exists."""
    (tmp_path / "op").mkdir()
    (tmp_path / "op" / "test_op.py").write_text("print('hi')\n")
    proc = _run(["op"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "op is a directory; give the script to run (e.g. op/test_op.py)" in proc.stderr, proc.stderr


def test_install_alone_does_not_provide_torch_npu() -> None:
    code = ("import runtime.emulator as e, importlib.util; e.install(); "
            "print(importlib.util.find_spec('torch_npu') is None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "True"
