"""The device process imports no candidate code, no torch, no tracer: numpy, ml_dtypes, the device executor and
this package's leaf modules only.

Why: the verdict rests on what the device computed and recorded (docs/verification.md, "Where the verdict comes
from"). If the device imported the tracer, the frontend or torch, a hostile kernel program could reach code that
interprets candidate-controlled Python, and the boundary would be nominal. Two checks: the imports of the device's
modules (read with ``ast``, function-local ones included) stay inside an allow-list, and a fresh interpreter that
loads everything the device loads has none of the forbidden modules in ``sys.modules``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEVICE_FILES = ["_device.py", "_desc.py", "_shm.py", "_channel.py", "_wire.py"]
ALLOWED = ("numpy", "ml_dtypes", "runtime.emulator.device", "runtime.dtypes", "runtime.testmodes",
           "runtime.sandbox._shm", "runtime.sandbox._desc", "runtime.sandbox._channel", "runtime.sandbox._wire")
FORBIDDEN = ("torch", "pypto", "runtime.emulator._trace", "runtime.emulator._frontend", "runtime.emulator._module",
             "runtime.emulator._lower", "runtime.emulator._executor", "runtime.emulator._ops_core",
             "runtime.sandbox._runner", "runtime.sandbox._finder", "runtime.sandbox._exec", "runtime.verify",
             "runtime.opdir", "gelu_impl")


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            out += [f"{base}.{a.name}" if base in ("runtime", "runtime.sandbox") else base for a in node.names]
    return out


def test_device_modules_import_only_the_allow_list() -> None:
    bad = []
    for name in DEVICE_FILES:
        for mod in _imports(ROOT / "runtime" / "sandbox" / name):
            top = mod.split(".")[0]
            if top in sys.stdlib_module_names or mod == "__future__" or mod.startswith(ALLOWED):
                continue
            bad.append(f"{name}: {mod}")
    assert bad == []


def test_a_fresh_device_interpreter_loads_nothing_forbidden() -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "from runtime.sandbox import _shm, _channel, _desc, _device\n"
            "from runtime.emulator.device import decode, execute, ExecOptions, Limits, keys_read\n"
            "from runtime import testmodes\n"
            "print('\\n'.join(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-s", "-B", "-c", code, str(ROOT)], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert "runtime.sandbox._device" in out and "runtime.emulator.device" in out
    assert [m for m in out if m.startswith(FORBIDDEN)] == []
