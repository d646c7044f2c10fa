"""Gym habits of round s49 (operators the gym has that we had not seen), run under ``python -m runtime.emulator``.

Session 49 wrote fifteen operators the way the pypto-gym teams write them (docs/gym.md, "Operators we had not seen
(session 49)") and ran each as a gym user does, then compiled each on the real pypto 0.2.0 wheel in SIM mode. What
failed, each pinned here with a small kernel or script of this file:

- a script asking the import system about the toolchain: ``importlib.util.find_spec("pypto")`` raised ``ValueError:
  pypto.__spec__ is None`` after ``runtime.emulator.install()`` (the verifier's sandbox), ``find_spec("pypto.enum")``
  (a wheel module name) the same under the runner, and ``importlib.metadata.version("pypto")`` /
  ``version("torch_npu")`` were ``PackageNotFoundError`` (no wheel metadata: the project's venv has neither);
- see tests/emulator/test_cumsum_dtype_s49.py for the kernel-side finding (cumsum of an integer tensor).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_scripts import needs_torch
from test_scripts_s38 import _ok, _run, _write  # the runner as a gym user types it

IMPORT_SYSTEM = r"""
import importlib
import importlib.metadata
import importlib.util
import sys

failures = []


def check(name, ok, detail=""):
    print(f"[{'PASS' if ok else 'FAIL'}] {name} {detail}")
    if not ok:
        failures.append(name)


# a gym conftest / test skips when PyPTO is missing, before importing it
check("find_spec pypto", importlib.util.find_spec("pypto") is not None)
import pypto  # noqa: E402
import pypto.enum  # noqa: E402
import torch  # noqa: E402
import torch_npu  # noqa: E402

check("find_spec pypto after import", importlib.util.find_spec("pypto") is pypto.__spec__)
check("find_spec pypto.enum", importlib.util.find_spec("pypto.enum") is not None)
check("find_spec pypto.op.math", importlib.util.find_spec("pypto.op.math") is not None)
# (the attribute `pypto.enum` is the standard library's enum on the wheel too: its __init__ imports it last)
enum_mod = sys.modules["pypto.enum"]
check("reload pypto.enum", importlib.reload(enum_mod) is enum_mod and hasattr(enum_mod, "DataType"))
ver = importlib.metadata.version("pypto")
check("version pypto", ver == pypto.__version__, ver)
meta = importlib.metadata.distribution("pypto").read_text("METADATA")
check("pypto metadata is the emulator's", "PTO Forge emulator" in meta, meta.splitlines()[-1])
npu_ver = importlib.metadata.version("torch-npu")
check("version torch-npu", npu_ver == torch_npu.__version__ == importlib.metadata.version("torch_npu"), npu_ver)
major, minor = (int(p) for p in npu_ver.split(".")[:2])
check("version gate", (major, minor) >= (2, 1))
check("entry points still listed", isinstance(importlib.metadata.entry_points(group="torch.backends"),
                                              importlib.metadata.EntryPoints))
print("ALL PASS" if not failures else f"FAILED {failures}")
sys.exit(1 if failures else 0)
"""


@needs_torch
def test_import_system_answers_for_pypto_and_torch_npu(tmp_path: Path) -> None:
    """Each check but the first failed before s49: ``find_spec`` of a wheel module name was a ValueError (its
    ``__spec__`` None), ``reload`` of it found no module, ``version("pypto")`` / ``version("torch-npu")`` were
    ``PackageNotFoundError`` (in this checkout's venv the real wheel may be installed: the metadata check asks for
    the emulator's distribution, which comes first)."""
    _write(tmp_path / "test_env.py", IMPORT_SYSTEM)
    out = _ok(_run(["test_env.py"], tmp_path), "ALL PASS", "[PASS] version pypto", "[PASS] version torch-npu",
              "[PASS] find_spec pypto.enum")
    assert "[FAIL]" not in out, out


@pytest.mark.slow
@needs_torch
def test_torch_npu_metadata_absent_without_the_stand_in(tmp_path: Path) -> None:
    """``--no-torch-npu`` removes the stand-in: its metadata goes with it, as on a host without torch_npu."""
    _write(tmp_path / "probe.py", """
        import importlib.metadata
        try:
            importlib.metadata.version("torch_npu")
            print("FOUND")
        except importlib.metadata.PackageNotFoundError:
            print("NOT FOUND")
        """)
    out = _ok(_run(["--no-torch-npu", "probe.py"], tmp_path), "NOT FOUND")
    assert "FOUND\n" not in out.replace("NOT FOUND", "")
