"""Shared helpers of the orchestrator tests (fixture paths, generated agent scripts, clock, verifier choice)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import yaml

HERE = Path(__file__).parent
FIX = HERE / "fixtures"
AGENTS = FIX / "agents"


def fixed_clock() -> dt.datetime:
    return dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def write_script(path: Path, op: str, *, implement: dict, design: list | None = None, **extra) -> Path:
    """An agent script with absolute file paths (``implement``: module -> list of fixture names)."""
    base = AGENTS / op
    designs = design or [("DESIGN.md", "module_interfaces.yaml")]
    data = {
        "design": [{"design_md": str(base / d), "module_interfaces_yaml": str(base / y),
                    "rationale": "fixture: split on purpose" if op == "sqrecip" else None} for d, y in designs],
        "implement": {k: [str(base / f) for f in files] for k, files in implement.items()},
        **extra,
    }
    path.write_text(yaml.safe_dump(data, sort_keys=True), encoding="utf-8")
    return path


def make_verifier(kind: str | None = None):
    """``real``: runtime.verify (the authority), recorded; ``double``: orch_doubles.FakeVerifier.

    The core path tests use the real verifier; tests of orchestration-only logic (budgets, gates, audit
    tampering, CLI errors) use the double to stay inside the test-time budget (~1.5 s per real verify).
    """
    from orch_doubles import FakeVerifier, Recording

    kind = kind or os.environ.get("FORGE_TEST_VERIFIER", "real")
    if kind == "double":
        return FakeVerifier()
    from orchestrator.core.verifier_bridge import real_verifier

    return Recording(real_verifier)
