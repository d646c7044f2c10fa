"""Gym habits of round s46, run unmodified under ``python -m runtime.emulator`` as a gym user runs them.

Session 46 ran the fifteen real operators of ``shared/gym`` the other ways a gym user runs them (``--list``, every
case id / level, all cases, ``--run_mode sim``, ``--device npu`` / ``npu:0`` / an int, the pytest form with the
gym's root ``conftest.py`` and ``-k`` / ``-x`` / ``-n 2``, from another working directory, the op package
imported through ``pypto_gym.*``, ``-m`` of an impl module, spawned and forkserver workers, ``python3.11`` children;
docs/gym.md, "Habits of real gym test scripts (session 46)"). What failed there, each pinned here:

- ``@pypto.frontend.function()`` (the decorator called with no argument, which the wheel's ``function(func=None)``
  "allows": its docstring) was ``TypeError: function() missing 1 required positional argument: 'func'``, and
  ``pypto.topk(x, k, None)`` (the wheel's default ``dim=None``, the last axis) a raw ``TypeError`` of the emulator;
- torch_npu's ``torch_npu/npu/`` submodules a script reaches through ``torch.npu`` (``torch.npu.memory.
  memory_allocated()``, ``torch.npu.streams.Stream``, ``torch.npu.random.manual_seed``, ``from torch_npu.npu.memory
  import ...``) and ``torch_npu.version`` (``from torch_npu.version import __version__``) were ``NotProvidedError``
  although every function they name is provided;
- ``python -m runtime.emulator - < test.py`` (the program on stdin), a folder or a zip archive holding
  ``__main__.py`` were refused ("no such script" / "is a directory"), and a bundle of the interpreter's switches
  ending in one that takes a value (``-um pytest``, ``-Bc "..."``) was an unknown switch of the runner's;
  ``python`` runs each.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from test_scripts import needs_torch
from test_scripts_s38 import ROOT, _ok, _run, _write  # the runner as a gym user types it

SUBMODULES_AND_FUNCTION = r"""
import torch
import torch_npu
import pypto
from torch_npu.npu.memory import memory_allocated
from torch_npu.npu.streams import Event, Stream
from torch_npu.npu.random import manual_seed
import torch_npu.npu.graphs
from torch_npu.version import __version__

failures = []


def check(name, ok, detail=""):
    print(f"[{'PASS' if ok else 'FAIL'}] {name} {detail}")
    if not ok:
        failures.append(name)


x = torch.ones(1024, device="npu")
check("torch.npu.memory", torch.npu.memory.memory_allocated() == memory_allocated() > 0)
check("torch.npu.streams", torch.npu.streams.Stream is Stream is torch.npu.Stream and Event is torch.npu.Event)
manual_seed(7)
a = torch.randn(3)
torch.npu.random.manual_seed(7)
check("torch.npu.random", torch.equal(a, torch.randn(3)))
check("torch_npu.version", __version__ == torch_npu.__version__ == torch_npu.version.__version__,
      torch_npu.version.__version__)


@pypto.frontend.function()
def double(x: pypto.Tensor([16, 16], pypto.DT_FP32), y: pypto.Tensor([16, 16], pypto.DT_FP32)):
    y.move(pypto.add(x, x))


@pypto.frontend.function
def accumulate(x: pypto.Tensor([16, 16], pypto.DT_FP32), y: pypto.Tensor([16, 16], pypto.DT_FP32)):
    y.move(pypto.add(y, x))


@pypto.frontend.jit
def kernel(x: pypto.Tensor([16, 16], pypto.DT_FP32), y: pypto.Tensor([16, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 16)
    double(x, y)
    accumulate(x, y)


x = torch.randn(16, 16, device="npu:0")
y = torch.empty_like(x)
kernel(x, y)
check("frontend.function() inlined", torch.equal(y.cpu(), x.cpu() * 2 + x.cpu()))


@pypto.frontend.jit
def top4(x: pypto.Tensor([16, 16], pypto.DT_FP32), v: pypto.Tensor([16, 4], pypto.DT_FP32),
         i: pypto.Tensor([16, 4], pypto.DT_INT32)):
    pypto.set_vec_tile_shapes(16, 16)
    values, indices = pypto.topk(x, 4, None)  # the wheel's default dim=None: the last axis
    v[:] = values
    i[:] = indices


v = torch.empty(16, 4, device="npu")
i = torch.empty(16, 4, dtype=torch.int32, device="npu")
top4(x, v, i)
ref = torch.topk(x.cpu(), 4)
check("topk dim=None", torch.equal(v.cpu(), ref.values) and torch.equal(i.cpu().long(), ref.indices))
print("ALL PASS" if not failures else f"FAILED: {failures}")
"""


@needs_torch
def test_torch_npu_submodules_version_and_the_function_decorator_called(tmp_path: Path) -> None:
    """Each check failed before s46: the submodules and ``torch_npu.version`` were NotProvidedError at the import,
    ``@pypto.frontend.function()`` a TypeError at its line, ``topk(x, 4, None)`` a TypeError inside the emulator."""
    _write(tmp_path / "test_habits.py", SUBMODULES_AND_FUNCTION)
    out = _ok(_run(["test_habits.py"], tmp_path), "ALL PASS", "[PASS] frontend.function() inlined",
              "[PASS] torch.npu.memory", "[PASS] torch_npu.version", "[PASS] topk dim=None")
    assert "[FAIL]" not in out, out


SHOW = "import sys\nprint('argv', sys.argv, 'path0', repr(sys.path[0]), 'file', globals().get('__file__'), __name__)\n"


def _runner(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "runtime.emulator", "--quiet", *args], cwd=cwd, env=env,
                          input=stdin, capture_output=True, text=True, timeout=120, check=False)


def test_stdin_folder_zip_and_bundled_switches_run_as_python_runs_them(tmp_path: Path) -> None:
    """``python - a`` (stdin: argv[0] "-", path0 ""), ``python app b`` and ``python app.zip c`` (their
    ``__main__.py``, argv[0] as typed, the folder / archive first on the path) and ``python -uBm mod d`` (``-u -B -m
    mod``): each refused before s46. A folder without ``__main__.py`` is still the usage error that names a test
    script in it."""
    out = _ok(_runner(["-", "a"], tmp_path, stdin=SHOW))
    assert "argv ['-', 'a'] path0 '' file <stdin> __main__" in out, out
    _write(tmp_path / "app" / "__main__.py", SHOW)
    out = _ok(_runner(["app", "b"], tmp_path))
    assert f"argv ['app', 'b'] path0 '{tmp_path / 'app'}' file {tmp_path / 'app' / '__main__.py'} __main__" in out
    with zipfile.ZipFile(tmp_path / "app.zip", "w") as zf:
        zf.writestr("__main__.py", SHOW)
    out = _ok(_runner(["app.zip", "c"], tmp_path))
    assert f"argv ['app.zip', 'c'] path0 '{tmp_path / 'app.zip'}' file {tmp_path / 'app.zip' / '__main__.py'}" in out
    _write(tmp_path / "showmod.py", SHOW + "print('flags', sys.flags.dont_write_bytecode, int(sys.stdout.write_through))\n")
    out = _ok(_runner(["-uBm", "showmod", "d"], tmp_path))  # python's bundle: -u -B -m showmod
    assert f"argv ['{tmp_path / 'showmod.py'}', 'd']" in out and "flags 1 1" in out, out
    _write(tmp_path / "tests" / "test_x.py", "print(1)\n")
    proc = _runner(["tests"], tmp_path)
    assert proc.returncode == 2 and "tests is a directory" in proc.stderr and "test_x.py" in proc.stderr, proc.stderr
