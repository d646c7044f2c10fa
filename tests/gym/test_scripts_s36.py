"""Device-host habits of test scripts that the gym's fifteen do not show (s36 harness audit: 41 scripts in the
style of the vendor's tests, 15 failed), run under ``python -m runtime.emulator`` as a gym user runs them.

- a per-case child started with an environment of its own (``env["PYTHONPATH"] = src``, or built from scratch) ran
  as plain Python: no ``pypto``, no ``torch_npu``;
- ``python3 child.py`` through a shell found the system's Python when the environment was not activated;
- ``torch_npu`` stand-in gaps: ``from torch_npu.npu.utils import get_soc_version`` (an empty module), ``x.new_zeros(...,
  device="npu")``, ``torch.load(map_location="npu:0")``, ``nn.Module.npu()``, ``pin_memory``, ``record_stream`` and
  ``npu_stream`` of a stream, a version check against ``torch_npu.__version__``, and a class imported from a
  ``torch_npu`` submodule the stand-in lacks (a module object came back).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_scripts import _run, needs_torch


def _script(tmp_path: Path, body: str, name: str = "s.py") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


@pytest.mark.parametrize("env", ["overwritten", "scratch"])
def test_a_child_started_with_its_own_environment_runs_under_the_emulator(tmp_path: Path, env: str) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mine.py").write_text("X = 7\n")
    make_env = ('env = dict(os.environ); env["PYTHONPATH"] = src' if env == "overwritten" else
                'env = {"PATH": os.environ.get("PATH", ""), "TILE_FWK_DEVICE_ID": "0", "PYTHONPATH": src}')
    _script(tmp_path, f"""
        import os, subprocess, sys
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src")
        {make_env}
        code = "import pypto, mine; print(pypto.frontend.jit.__module__, mine.X)"
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        print("CHILD", r.returncode, r.stdout.strip(), r.stderr.strip()[-300:])
    """)
    proc = _run(["s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "CHILD 0 runtime.emulator." in proc.stdout and proc.stdout.strip().endswith(" 7"), proc.stdout


@pytest.mark.slow  # four children that import torch: ~7 s of CPU
def test_children_keep_the_emulator_however_the_script_sets_their_environment(tmp_path: Path) -> None:
    """Second round of the audit: a script that sets ``os.environ["PYTHONPATH"]`` itself (then ``subprocess.run``
    without ``env``, ``os.system``, a spawned ``multiprocessing`` Pool - whose workers died at import and were
    restarted forever), ``env`` given positionally, and a shell or ``/usr/bin/env`` between the script and Python."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mine.py").write_text("X = 7\n")
    _script(tmp_path, """
        import os, subprocess, sys
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src")
        code = "import pypto, mine; print(pypto.frontend.jit.__module__.split('.')[0], mine.X)"
        os.environ["PYTHONPATH"] = src
        outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()]
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": src}
        outs.append(subprocess.run(f'python3 -c "{code}"', shell=True, env=env, capture_output=True,
                                   text=True).stdout.strip())
        outs.append(subprocess.run(["/usr/bin/env", "python3", "-c", code], env=env, capture_output=True,
                                   text=True).stdout.strip())
        p = subprocess.Popen([sys.executable, "-c", code], -1, None, None, subprocess.PIPE, None, None, True, False,
                             None, env, text=True)
        outs.append(p.communicate()[0].strip())
        print("OUTS", outs)
    """)
    proc = _run(["s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "OUTS ['runtime 7', 'runtime 7', 'runtime 7', 'runtime 7']" in proc.stdout, proc.stdout + proc.stderr


def test_python3_through_a_shell_is_this_interpreter(tmp_path: Path) -> None:
    _script(tmp_path, """
        import subprocess, sys
        out = subprocess.run("python3 -c 'import sys; print(sys.prefix)'", shell=True, capture_output=True, text=True)
        print("SAME", out.stdout.strip() == sys.prefix)
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}
    env["PATH"] = "/usr/bin:/bin"  # the environment not activated
    proc = subprocess.run([sys.executable, "-m", "runtime.emulator", "s.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "SAME True" in proc.stdout


@needs_torch
def test_torch_npu_habits_of_device_host_tests(tmp_path: Path) -> None:
    _script(tmp_path, """
        import torch, torch_npu
        from packaging.version import Version
        from torch_npu.npu.utils import get_soc_version
        import torch_npu.contrib.transfer_to_npu  # noqa: F401 - a common import with nothing to do here
        x = torch.randn(4, 8).npu()
        z = x.new_zeros((2, 3), device="npu:0")
        torch.save(x, "x.pt")
        y = torch.load("x.pt", map_location="npu:0")
        m = torch.nn.SiLU().npu()
        p = torch.empty(4, pin_memory=True).pin_memory()
        s = torch.npu.current_stream()
        x.record_stream(s)
        try:
            from torch_npu.contrib.module import LinearA8W8Quant  # noqa: F401 - a class the stand-in lacks
            missing = "imported"
        except ImportError as exc:
            missing = type(exc).__name__
        y2 = torch.load("x.pt", "npu:0")
        y3 = torch.load("x.pt", map_location={"cuda:0": "npu:0"})
        e = x.new_empty_strided((2, 2), (2, 1), device="npu")
        major, minor, patch = [int(v) for v in torch_npu.__version__.split(".")[:3]]
        print("OK", get_soc_version(), tuple(z.shape), bool(torch.equal(x, y)), tuple(m(x).shape), tuple(p.shape),
              s.npu_stream, Version(torch_npu.__version__) >= Version("2.1"), missing,
              bool(torch.equal(y2, y3)), tuple(e.shape), major >= 2)
    """)
    proc = _run(["s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK 220 (2, 3) True (4, 8) (4,) 0 True ImportError True (2, 2) True" in proc.stdout, proc.stdout
