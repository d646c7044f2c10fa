"""Device-host habits of recent test scripts (s37), run under ``python -m runtime.emulator`` as a gym user runs them.

- ``torch.Generator(device="npu")``, ``torch.accelerator``, ``torch.Event``, ``torch.autocast("npu")`` died in torch's
  C++ ("Please register PrivateUse1HooksInterface") or cast nothing (`runtime.emulator._torch_npu_agnostic`);
- ``.npu()``/``.to("npu")``/``.cpu()`` returned the tensor itself, so an in-place kernel on ``y.npu()`` changed the
  ``y`` the golden was then computed from (``_torch_npu._moved``);
- ``from torch_npu.testing.testcase import TestCase, run_tests`` failed (`runtime.emulator._torch_npu_testing`);
- a child started with ``python -I``/``-E`` (also through ``os.execv``/``os.spawn*``) ran as plain Python
  (``_device_host.isolated_argv``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_scripts import needs_torch

from runtime.emulator import _device_host as host
from runtime.emulator._torch_npu_agnostic import accelerator_names, mapped_type

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The runner of this checkout (``PYTHONPATH``: an installed one may be another checkout's)."""
    env = {k: v for k, v in os.environ.items() if k != "PTO_FORGE_EMULATOR_CHILD"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "runtime.emulator", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=180, check=False)


def _script(tmp_path: Path, body: str, name: str = "s.py") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


@needs_torch
def test_generators_accelerator_events_and_autocast_on_the_npu(tmp_path: Path) -> None:
    _script(tmp_path, """
        import torch, torch_npu
        torch_npu.npu.manual_seed_all(5)
        g = torch.Generator(device=torch.device("npu:0")).manual_seed(3)
        a = torch.randn(4, generator=g, device="npu")
        b = torch.randn(4, generator=torch.Generator(device="npu").manual_seed(3), device="npu:0")
        acc = torch.accelerator.current_accelerator()
        x = torch.ones(2).to(acc)
        torch.accelerator.synchronize()
        with torch.accelerator.device_index(0):
            idx = torch.accelerator.current_device_index()
        e0, e1 = torch.Event(enable_timing=True), torch.Event(enable_timing=True)
        e0.record(); e1.record()
        with torch.autocast(device_type=acc.type, dtype=torch.float16):
            c = torch.randn(4, 4, device=acc) @ torch.randn(4, 4, device=acc)
        print("OK", bool(torch.equal(a, b)), isinstance(g, torch.Generator), isinstance(torch.default_generator,
              torch.Generator), acc.type, torch.accelerator.is_available(), torch.accelerator.device_count(), idx,
              x.device.type, e0.elapsed_time(e1) >= 0, c.dtype, torch.get_device_module() is torch.npu,
              torch.accelerator.memory_allocated(), torch.npu.default_generators[0] is torch.default_generator)
    """)
    proc = _run(["--quiet", "s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # memory_allocated: the blocks of the NPU tensors alive at that line (s39; 0 before, an empty device);
    # x.device.type of `torch.ones(2).to(acc)`: "npu", as on a device host (s40; "cpu" before)
    assert "OK True True True npu True 1 0 npu True torch.float16 True 2048 True" in proc.stdout, proc.stdout


def test_mapped_type_calls_its_maker_and_answers_isinstance_for_the_real_type() -> None:
    class Real:
        def __init__(self, device: str = "cpu") -> None:
            self.device = device

    stand_in = mapped_type(Real, lambda device="cpu": Real("cpu" if device == "npu" else device))
    assert stand_in(device="npu").device == "cpu" and type(stand_in("meta")) is Real
    assert isinstance(Real(), stand_in) and issubclass(Real, stand_in) and not isinstance(1, stand_in)

    class Mine(stand_in):  # type: ignore[misc, valid-type]  # a user subclass is a subclass of the real type
        pass

    assert isinstance(Mine(), Real) and not isinstance(Real(), Mine)


def test_accelerator_calls_go_to_the_npu_namespace() -> None:
    torch = pytest.importorskip("torch")
    calls: list[object] = []
    npu = type("Npu", (), {"current_device": staticmethod(lambda: 2),
                           "set_device": staticmethod(calls.append),
                           "synchronize": staticmethod(lambda *a: calls.append(("sync", *a))),
                           "memory_allocated": staticmethod(lambda *a: 0)})
    names = accelerator_names(torch, npu)
    assert names["current_device_index"]() == 2
    names["synchronize"]("npu:1")
    with names["device_index"](1):
        pass
    assert calls == [("sync", 1), 1, 2] and names["memory_allocated"]() == 0


@needs_torch
def test_moving_to_the_npu_and_back_copies_as_on_a_device_host(tmp_path: Path) -> None:
    _script(tmp_path, """
        import torch, torch_npu
        y = torch.zeros(4)
        y_npu = y.npu()
        y_npu.add_(1)              # an in-place kernel on the device copy
        z = torch.zeros(4, device="npu:0")
        keep = z.cpu()
        z.add_(2)                  # the next call overwrites the device buffer
        print("OK", float(y.sum()), float(keep.sum()), y_npu.npu() is y_npu, z.to("npu") is z,
              y.to("npu:0") is y, y.cpu() is y)
    """)
    proc = _run(["--quiet", "s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK 0.0 0.0 True True False True" in proc.stdout, proc.stdout


@needs_torch
def test_torch_npu_testing_unittest_style(tmp_path: Path) -> None:
    _script(tmp_path, """
        import numpy as np, torch
        from torch_npu.testing.testcase import TestCase, run_tests
        from torch_npu.testing.common_utils import create_common_tensor, SupportedDevices, skipIfUnsupportMultiNPU

        class T(TestCase):
            def test_close(self):
                cpu, npu = create_common_tensor([np.float16, 29, (8, 16)], -1, 1)
                npu.mul_(2)
                self.assertRtolEqual(cpu * 2, npu.cpu())
                self.assertEqual(torch.ones(3), torch.ones(3) + 1e-6)
                self.assertEqual(np.arange(3), torch.arange(3))
                self.assertEqual([1, 2], [1, 2])
            def test_far(self):
                self.assertRtolEqual(torch.ones(100), torch.ones(100) * 1.01)
            @SupportedDevices(["Ascend910B"])
            def test_910b(self):
                pass
            @skipIfUnsupportMultiNPU(2)
            def test_two(self):
                pass

        if __name__ == "__main__":
            run_tests()
    """)
    proc = _run(["--quiet", "s.py", "-v"], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stderr
    assert "test_close (__main__.T.test_close) ... ok" in out and "test_910b (__main__.T.test_910b) ... ok" in out
    assert "test_two (__main__.T.test_two) ... skipped" in out and "result error: 100 of 100" in out, out
    assert "FAILED (failures=1, skipped=1)" in out, out


def test_isolated_argv_rewrites_only_isolated_python_children(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(host.CHILD_ENV, "{}")
    py = sys.executable
    got = host.isolated_argv([py, "-I", "t.py", "a"])
    assert got is not None and got[:3] == [py, "-I", "-c"] and got[4:] == ["t.py", "a"]
    assert host.isolated_argv(["python3", "-W", "ignore", "-sE", "-m", "pytest"])[-2:] == ["-m", "pytest"]
    assert host.isolated_argv([py, "t.py"]) is None  # its sitecustomize does the job
    assert host.isolated_argv([py, "-X", "importtime", "t.py"]) is None  # -X's argument is no switch of its own
    assert host.isolated_argv(["/bin/sh", "-E", "x"]) is None and host.isolated_argv("python -I t.py") is None
    assert host.isolated_argv([py, "-I"]) is None and host.isolated_argv([py, "-I", "-"]) is None
    monkeypatch.delenv(host.CHILD_ENV)
    assert host.isolated_argv([py, "-I", "t.py"]) is None  # not under the runner


def test_isolated_children_and_exec_run_under_the_emulator(tmp_path: Path) -> None:
    """No torch in the children: they report whether the emulator's finder is installed, their flags, argv and
    first path entry (as plain ``python`` sets them under those flags)."""
    _script(tmp_path, """
        import json, sys
        print("CHILD", json.dumps([any(type(f).__name__ == "PyptoFinder" for f in sys.meta_path),
                                   sys.flags.isolated, sys.flags.ignore_environment, sys.argv[1:],
                                   sys.path[0] == __import__("os").path.dirname(__file__)]))
    """, name="child.py")
    _script(tmp_path, """
        import os, subprocess, sys
        child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
        env = {"PATH": os.environ.get("PATH", "")}
        for flags in (["-I"], ["-E"]):
            print(subprocess.run([sys.executable, *flags, child, "p"], env=env, capture_output=True,
                                 text=True).stdout.strip(), flush=True)
        os.spawnv(os.P_WAIT, sys.executable, [sys.executable, "-I", child, "spawn"])
        pid = os.fork()
        if pid == 0:
            os.execve(sys.executable, [sys.executable, child, "exec"], env)
        os.waitpid(pid, 0)
    """)
    proc = _run(["--quiet", "s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = [json.loads(ln.split(" ", 1)[1]) for ln in proc.stdout.splitlines() if ln.startswith("CHILD")]
    assert got == [[True, 1, 1, ["p"], False], [True, 0, 1, ["p"], True], [True, 1, 1, ["spawn"], False],
                   [True, 0, 0, ["exec"], True]], proc.stdout + proc.stderr
