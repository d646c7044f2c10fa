"""What the KernelBench import rounds' tests share: a task text written to a file, the imported op dir's SPEC, and
the torch guard (rounds 5-8 each had their own copy of these three)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def write_task(tmp_path: Path, text: str, name: str) -> Path:
    """``text`` (a task file of our own) as ``tmp_path / name``."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def spec_of(dest: Path) -> dict[str, Any]:
    """The SPEC of the op dir an import wrote at ``dest``, as plain data."""
    from runtime.opdir import load_op_dir

    return load_op_dir(dest).spec.model_dump()
