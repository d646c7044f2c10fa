"""Stored verify reports (``.forge/run-<id>/reports/<report_hash>.json``): the one place that reads them.

Why one reader: the views, the HTML report, the perf stage and the nodes all need a report back after the
verifier wrote it; each used to parse the JSON its own way.
"""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.store.paths import reports_dir


def load_report(op_dir: Path, run_id: str, report_hash: str | None) -> dict | None:
    """A stored verify report as JSON data, or None when there is none (or it cannot be read)."""
    if not report_hash:
        return None
    return read_report(reports_dir(op_dir, run_id) / f"{report_hash}.json")


def read_report(path: Path) -> dict | None:
    """The report stored at ``path`` as JSON data, or None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def report_reasons(op_dir: Path, rel: str | None) -> list[str]:
    """The reasons of the report stored at ``op_dir/rel`` (a state's ``last_report``), or []."""
    if not rel:
        return []
    data = read_report(op_dir / rel)
    return [str(r) for r in data.get("reasons", [])] if data else []


def hash_for(hashes: dict[str, str], rel: str, op_dir: Path) -> str | None:
    """Find the verifier's hash of ``rel`` whatever key style it uses (relative, absolute, basename)."""
    candidates = [rel, rel.replace("\\", "/"), str(op_dir / rel), str((op_dir / rel).resolve()), Path(rel).name]
    for key in candidates:
        if key in hashes:
            return hashes[key]
    for key, value in hashes.items():
        if key.replace("\\", "/").endswith("/" + rel) or key.endswith(rel):
            return value
    return None
