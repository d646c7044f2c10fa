"""Small helpers for reading what a run left on disk."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from orchestrator.store.gitaudit import AuditRepo


def git_subjects(op_dir: Path) -> list[str]:
    """Audit-repo commit subjects, oldest first."""
    return [c.subject for c in reversed(AuditRepo(op_dir).log())]


def git_trailers(op_dir: Path) -> list[dict]:
    return [c.trailers for c in reversed(AuditRepo(op_dir).log())]


def events(op_dir: Path, run_id: str) -> list[dict]:
    path = op_dir / ".forge" / f"run-{run_id}" / "trace" / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def outer_git_status(path: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=path, capture_output=True, text=True).stdout
