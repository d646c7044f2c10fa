"""One planted bug in a copy of a small op dir: what the bisect rule tests of each corpus round do."""

from __future__ import annotations

import shutil
from pathlib import Path


def plant(data: Path, tmp: Path, name: str, old: str, new: str, key: str | None = None) -> tuple[Path, int]:
    """Copy ``data/name`` into ``tmp``, replace the one occurrence of ``old`` in ``<name>_impl.py`` with ``new``, and
    return the copy and the (1-based) first line holding ``key`` (default: ``new``; a replacement of several lines
    names one of them)."""
    op_dir = tmp / name
    shutil.copytree(data / name, op_dir)
    p = op_dir / f"{name}_impl.py"
    src = p.read_text()
    assert src.count(old) == 1
    src = src.replace(old, new)
    p.write_text(src)
    return op_dir, next(i for i, ln in enumerate(src.splitlines(), 1) if (new if key is None else key) in ln)
