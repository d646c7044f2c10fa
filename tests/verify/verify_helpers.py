"""Shared helpers for the verifier tests (a plain module, not conftest: other test dirs have their own)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from runtime.sandbox import SandboxPolicy
from runtime.verify import VerifySettings

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
HOSTILE = HERE / "hostile"
KERNELS = HERE / "kernels"
EMULATOR = "runtime.emulator"
"""The production emulator: the verifier is tested against the emulator it runs with (no stand-in)."""


def no_lint(paths, **kw):  # the lint package is tested by its owners; here it must not mask runtime checks
    return []


def settings(*, lint=no_lint, wall: float = 20.0, cpu: int = 20, emulator: str = EMULATOR) -> VerifySettings:
    return VerifySettings(emulator=emulator, lint=lint,
                          sandbox=SandboxPolicy(wall_timeout_s=wall, cpu_timeout_s=cpu))


def make_op(tmp_path: Path, fixture: str, files: dict[str, str] | None = None) -> Path:
    """Copy fixture op dir ``fixture`` to tmp and overwrite/add ``files`` (``{OP_DIR}`` is substituted)."""
    op = tmp_path / fixture
    shutil.copytree(FIXTURES / fixture, op)
    for rel, text in (files or {}).items():
        (op / rel).parent.mkdir(parents=True, exist_ok=True)
        (op / rel).write_text(text.replace("{OP_DIR}", str(op.resolve())))
    return op


def header(text: str, key: str, default: str = "") -> str:
    m = re.search(rf"^# {key}: (\S+)", text, flags=re.M)
    return m.group(1) if m else default
