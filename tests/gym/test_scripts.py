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
# softmax and rms_norm in CI, the others in the slow tier: each script run costs a python with torch, 5-14 s (silu's
# starts one more per dtype; a child process under the emulator is tested on its own below)
@pytest.mark.parametrize("op", [o if o in ("softmax", "rms_norm") else pytest.param(o, marks=pytest.mark.slow)
                                for o in OPS])
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


@pytest.mark.slow  # over ~6 s of a 2-core CI (session 21's budget cut; `make test-all` runs it)
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


@pytest.mark.slow  # over ~6 s of a 2-core CI (session 21's budget cut; `make test-all` runs it)
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


@pytest.fixture(scope="module")
def emulator_help() -> subprocess.CompletedProcess:
    """One ``python -m runtime.emulator --help`` process for the tests that read its text (~0.5 s of CPU each)."""
    return subprocess.run([sys.executable, "-m", "runtime.emulator", "--help"], capture_output=True, text=True,
                          timeout=60, check=False)


def test_help_lists_the_strictness_switches(emulator_help: subprocess.CompletedProcess) -> None:
    proc = emulator_help
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


# ---------------------------------------------------------------------------------------------------------------
# issue #25: the runner behaves like `python` on a device host


def test_dash_m_runs_a_module_like_python(tmp_path: Path) -> None:
    (tmp_path / "mod_under_test.py").write_text(textwrap.dedent("""
        import os, sys
        print("ARGV0", sys.argv[0] == os.path.abspath("mod_under_test.py"), "ARGS", sys.argv[1:])
        print("PATH0", sys.path[0] == os.getcwd(), "NAME", __name__)
    """))
    proc = _run(["-m", "mod_under_test", "x", "-y"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "ARGV0 True ARGS ['x', '-y']" in proc.stdout and "PATH0 True NAME __main__" in proc.stdout


@pytest.mark.slow
def test_dash_m_pytest_runs_a_pytest_only_test_under_the_emulator(tmp_path: Path) -> None:
    (tmp_path / "test_k.py").write_text(textwrap.dedent("""
        import numpy as np
        import pypto

        @pypto.frontend.jit
        def k(x: pypto.Tensor([4, 16], pypto.DT_FP32), y: pypto.Tensor([4, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(4, 16)
            y[:] = pypto.add(x, 1.0)

        def test_k():
            x = np.ones((4, 16), np.float32)
            y = np.zeros_like(x)
            k(x, y)
            assert "runtime/emulator" in pypto.set_vec_tile_shapes.__code__.co_filename and (y == 2).all()
    """))
    proc = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_k.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


@pytest.mark.slow  # over ~6 s of a 2-core CI (session 21's budget cut; `make test-all` runs it)
def test_dash_c_runs_a_command_like_python(tmp_path: Path) -> None:
    proc = _run(["--compat", "0.2.0", "-c", "import sys, pypto; print(sys.argv, repr(sys.path[0]), hasattr(pypto, 'tanh'))",
                 "a"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "['-c', 'a'] '' False" in proc.stdout  # tanh is HEAD API: absent under the 0.2.0 target


def test_dash_m_without_a_value_is_a_usage_error(tmp_path: Path) -> None:
    proc = _run(["-m"], cwd=tmp_path)
    assert proc.returncode == 2 and "argument -m: expected one argument" in proc.stderr


CHILD_PATH_SCRIPT = """
import os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
env = os.environ.copy()
env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")  # the gym's per-case re-exec
r = subprocess.run([sys.executable, os.path.join(here, "child.py")], env=env, cwd=os.path.join(here, "work"),
                   capture_output=True, text=True)
print("CHILD", r.returncode, r.stdout.strip() or r.stderr.strip().splitlines()[-1])
"""


@pytest.mark.slow
@pytest.mark.parametrize("user_path", [None, "elsewhere"])
def test_child_python_path_means_what_it_means_to_python(tmp_path: Path, user_path: str | None) -> None:
    """A child's PYTHONPATH of ``test_dir + ":" + os.environ.get("PYTHONPATH", "")`` ends in an empty entry (the
    working directory) when the user set none: the runner's own folders on the variable must not change that."""
    (tmp_path / "s.py").write_text(CHILD_PATH_SCRIPT)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "in_cwd.py").write_text("X = 42\n")
    (tmp_path / "child.py").write_text("import in_cwd\nprint('IMPORTED', in_cwd.X)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}
    if user_path:
        env["PYTHONPATH"] = str(tmp_path / user_path)
    plain = subprocess.run([sys.executable, "s.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=120, check=False)
    emulated = subprocess.run([sys.executable, "-m", "runtime.emulator", "s.py"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=180, check=False)
    want = "CHILD 0 IMPORTED 42" if user_path is None else "CHILD 1 ModuleNotFoundError"
    assert want in plain.stdout, plain.stdout + plain.stderr
    assert want in emulated.stdout, emulated.stdout + emulated.stderr


def test_import_pypto_configures_logging_like_the_real_module(tmp_path: Path) -> None:
    """pypto 0.2.0 calls logging.basicConfig(level=DEBUG) at import: a PASS line logged at INFO shows."""
    _script(tmp_path, """
        import logging
        import pypto
        logging.getLogger(__name__).info("[PRECISION_PASS]")
    """)
    proc = _run(["s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "INFO:__main__:[PRECISION_PASS]" in proc.stderr


@pytest.mark.slow
@needs_torch
def test_torch_loads_the_stand_in_by_itself(tmp_path: Path) -> None:
    """On a device host torch auto-loads torch_npu: 'npu:0' and device=0 work without importing it."""
    _script(tmp_path, """
        import torch
        a = torch.ones(2, 3, device="npu:0")
        b = torch.zeros(2, 3, device=0)
        c = torch.randn(2, 3).to(0)
        torch.npu.set_device(0)
        print("DEV", a.device, b.device, c.device, torch.npu.current_device(), "torch_npu" in __import__("sys").modules)
    """)
    proc = _run(["s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "DEV npu:0 npu:0 npu:0 0 True" in proc.stdout  # as on a device host (s40: it said cpu)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"  # torch's own switch turns the autoload off
    off = subprocess.run([sys.executable, "-m", "runtime.emulator", "s.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=180, check=False)
    assert off.returncode == 3, off.stdout + off.stderr


@pytest.mark.slow
@needs_torch
def test_stand_in_covers_the_torch_npu_calls_of_the_gym(tmp_path: Path) -> None:
    _script(tmp_path, """
        import torch, torch_npu
        torch_npu.npu.config.allow_internal_format = True
        print("SOC", torch_npu.npu.get_soc_version(), torch.npu.get_soc_version())
        x = torch.randn(4, 64)
        g = torch.randn(64)
        y, rstd = torch_npu.npu_rms_norm(x, g, epsilon=1e-6)
        ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g
        print("RMS", bool(torch.allclose(y, ref, atol=1e-5)), tuple(rstd.shape))
        nz = torch_npu.npu_format_cast(x, 29)
        print("FMT", torch_npu.get_npu_format(x), torch_npu.get_npu_format(nz), int(torch_npu.Format.FRACTAL_NZ),
              bool(torch.equal(nz, x)))
        torch.npu.synchronize()
    """)
    proc = _run(["--npuarch", "DAV_3510", "s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "SOC 260 260" in proc.stdout  # Ascend 950; DAV_2201 (the default) reports 220 (Ascend910B1)
    assert "RMS True (4, 1)" in proc.stdout and "FMT 2 29 29 True" in proc.stdout


def test_help_names_head_as_the_default_target(emulator_help: subprocess.CompletedProcess) -> None:
    proc = emulator_help
    assert "default head" in proc.stdout and "-m module" in proc.stdout and "-c command" in proc.stdout


def test_the_interpreters_own_switches_before_the_script_take_effect(tmp_path: Path) -> None:
    """s25 gym sweep: `python -u test.py | tee log` is a device host's habit; `python -m runtime.emulator -u test.py`
    stopped with "unrecognized arguments: -u" (and -B, -O, -W ignore, -X faulthandler). They now reach the
    interpreter, the emulator's own switches and the script's arguments stay where they were."""
    _script(tmp_path, """
        import sys
        print("FLAGS", sys.flags.optimize, sys.flags.dont_write_bytecode, sys.warnoptions, "ARGV", sys.argv)
    """)
    proc = _run(["-OO", "-B", "--quiet", "-W", "ignore", "-Xfaulthandler", "s.py", "-u", "x"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "FLAGS 2 1 ['ignore'] ARGV ['s.py', '-u', 'x']" in proc.stdout


def test_split_python_flags_leaves_the_emulators_own_switches() -> None:
    from runtime.emulator.__main__ import split_python_flags

    assert split_python_flags(["-u", "--compat", "0.2.0", "-Wignore", "t.py", "-B"]) == \
        (["-u", "-Wignore"], ["--compat", "0.2.0", "t.py", "-B"])
    assert split_python_flags(["-m", "pytest", "-u"]) == ([], ["-m", "pytest", "-u"])
    assert split_python_flags(["-h"]) == ([], ["-h"])  # the runner's own help


@needs_torch
@pytest.mark.slow  # a python with torch: ~4 s of CPU
def test_sim_mode_and_npu_event_timings_are_flagged(tmp_path: Path) -> None:
    """s25 gym sweep: `test_sigmoid.py --run_mode sim` printed PRECISION_PASS here; the real 0.2.0 SIM mode writes no
    outputs (max diff 2.4e26 there). And `--test_type performance` printed the emulator's CPU time as "NPU Kernel"
    time. Both still run (the emulator computes; a timing is a number), and both now say what they are."""
    _script(tmp_path, """
        import torch
        import pypto

        @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
        def add_one(x: pypto.Tensor([16, 16], pypto.DT_FP32), y: pypto.Tensor([16, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(16, 16)
            y[:] = pypto.add(x, 1.0)

        x, y = torch.randn(16, 16).npu(), torch.zeros(16, 16).npu()
        start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
        start.record()
        add_one(x, y)
        end.record()
        print("ok", bool(torch.allclose(y, x + 1)), start.elapsed_time(end) >= 0)
    """)
    proc = _run(["s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "ok True True" in proc.stdout
    assert "EMU_SIM_NUMBERS" in proc.stderr and "s.py:6:" in proc.stderr
    assert "EMU_TIMING" in proc.stderr and "s.py:15:" in proc.stderr
