"""Where things live inside an operator directory (one place for every naming convention)."""

from __future__ import annotations

import hashlib
from pathlib import Path

FORGE_DIR = ".forge"
GIT_DIR = ".forge/git"
LOCK_FILE = ".forge/lock"


def run_dir(op_dir: Path, run_id: str) -> Path:
    return op_dir / FORGE_DIR / f"run-{run_id}"


def checkpoint_db(op_dir: Path, run_id: str) -> Path:
    return run_dir(op_dir, run_id) / "checkpoints.sqlite"


def reports_dir(op_dir: Path, run_id: str) -> Path:
    return run_dir(op_dir, run_id) / "reports"


def trace_dir(op_dir: Path, run_id: str) -> Path:
    return run_dir(op_dir, run_id) / "trace"


def list_runs(op_dir: Path) -> list[str]:
    """Run ids under ``.forge/``, oldest first (run ids sort by creation time)."""
    base = op_dir / FORGE_DIR
    if not base.is_dir():
        return []
    return sorted(p.name[len("run-"):] for p in base.iterdir() if p.is_dir() and p.name.startswith("run-"))


def sha256_file(path: Path) -> str | None:
    """sha256 hex of a file's bytes, or None when it does not exist."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
