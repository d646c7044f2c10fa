"""Bisect on the workspace's own failing implementer attempts (real emulator).

``workspace/<op>/authoring/script.yaml`` records, for every failed attempt, the debugger's patch proposal
(file, line_start..line_end): the place a careful human found. For attempts that failed numerically or at
run time (not lint), bisect must name a line inside that range.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
import yaml

from runtime.bisect import bisect

WORKSPACE = Path(__file__).resolve().parents[2] / "workspace"


def _cases() -> list[tuple[str, str, str, int, int]]:
    out = []
    for script in sorted(WORKSPACE.glob("*/authoring/script.yaml")):
        data = yaml.safe_load(script.read_text()) or {}
        for mod, entries in (data.get("debug") or {}).items():
            for e in entries or []:
                verdict = (data.get("verdicts") or {}).get(mod, [None] * e["attempt"])[e["attempt"] - 1]
                if verdict not in ("FAIL_NUMERIC", "FAIL_RUNTIME") or not e.get("proposals"):
                    continue
                p = e["proposals"][0]
                attempt = data["implement"][mod][e["attempt"] - 1]
                out.append((script.parents[1].name, attempt, p["file"], int(p["line_start"]), int(p["line_end"])))
    return out


@pytest.mark.slow  # bisects every failed workspace attempt
def test_bisect_finds_the_debuggers_line_in_failed_workspace_attempts(tmp_path: Path, golden_cache: dict) -> None:
    cases = _cases()
    assert cases, "the workspace has no numerically failing attempt with a debug proposal"
    hits, misses = 0, []
    for op, attempt, target, lo, hi in cases:
        src = WORKSPACE / op
        op_dir = tmp_path / f"{op}-{Path(attempt).stem}"
        shutil.copytree(src, op_dir, ignore=shutil.ignore_patterns("authoring", "traces", ".forge"))
        if (src / "authoring" / "module_interfaces.yaml").exists():
            shutil.copy(src / "authoring" / "module_interfaces.yaml", op_dir)
        stage = op_dir / target
        stage.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / "authoring" / attempt, stage)
        report = bisect(op_dir, stage, golden_cache=golden_cache)
        got = report.first_divergence.line if report.first_divergence else None
        if got is not None and lo <= got <= hi:
            hits += 1
        else:
            misses.append(f"{op}/{attempt}: expected {lo}-{hi}, got {got} ({report.status}: {report.summary})")
    print(f"\nworkspace attempts: {hits}/{len(cases)}; misses: {misses}")
    assert hits >= math.ceil(0.75 * len(cases)), "\n".join(misses)
