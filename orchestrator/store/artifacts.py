"""Files a run keeps beside its checkpoints for humans: design snapshots and per-attempt copies.

Why here: nodes and the driver write them while a run goes (stage files are overwritten by the next
attempt, DESIGN.md by the next design), and the views read them later (the design diff at a later design
gate, the HTML report's attempt diffs and bisect findings). Nothing here reaches an agent.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from orchestrator.store.paths import run_dir


def snapshot_dir(op_dir: Path, run_id: str) -> Path:
    """Where the design shown at each design gate is kept (``<seq>-design/``)."""
    return run_dir(op_dir, run_id) / "gates"


def snapshot_design(op_dir: Path, run_id: str, seq: int) -> None:
    """Keep the design shown at design gate ``seq`` (so a later design gate can diff against it)."""
    dest = snapshot_dir(op_dir, run_id) / f"{seq:03d}-design"
    if dest.exists():
        return
    dest.mkdir(parents=True)
    for name in ("DESIGN.md", "module_interfaces.yaml"):
        if (op_dir / name).is_file():
            shutil.copy2(op_dir / name, dest / name)


def previous_design(op_dir: Path, run_id: str, seq: int) -> Path | None:
    """The snapshot of the last design gate before ``seq``, or None."""
    base = snapshot_dir(op_dir, run_id)
    if not base.is_dir():
        return None
    earlier = sorted(p for p in base.iterdir() if p.name.endswith("-design") and int(p.name[:3]) < seq)
    return earlier[-1] if earlier else None


def attempts_dir(op_dir: Path, run_id: str) -> Path:
    """Copies of every verified file per attempt and the bisect findings (for the HTML run report only)."""
    return run_dir(op_dir, run_id) / "attempts"


def keep_attempt(op_dir: Path, run_id: str, module: int | str, attempt: int | None, target: str) -> None:
    """Keep the file as it was verified at this attempt (stage files are overwritten by the next attempt)."""
    src = op_dir / target
    if not src.is_file():
        return
    dest = attempts_dir(op_dir, run_id) / f"M{module}" / f"attempt{int(attempt or 0):02d}-{Path(target).name}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)


def keep_bisect(op_dir: Path, run_id: str, module: int, attempt: int | None, findings: dict | None) -> None:
    """Keep runtime.bisect's first-divergence findings given to the debugger at this attempt."""
    if not findings:
        return
    dest = attempts_dir(op_dir, run_id) / f"M{module}" / f"attempt{int(attempt or 0):02d}-bisect.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(findings, indent=2, default=str), encoding="utf-8")
