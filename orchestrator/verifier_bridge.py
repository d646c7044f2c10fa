"""Adapt ``runtime.verify.verify`` (the only authority that can verify a module) to :class:`VerifyOutcome`.

Why: the graph keeps a small summary in state and the full report on disk under
``.forge/run-<id>/reports/<report_hash>.json``, where ``python -m orchestrator audit`` finds it again.
"""

from __future__ import annotations

import logging
from pathlib import Path

from orchestrator.services import LintItem, VerifyOutcome

log = logging.getLogger(__name__)


def _findings(report: object) -> list[LintItem]:
    """Blocking lint findings of a report (``report.lint.blocking``; S0/S1 FAIL items of a plain list)."""
    section = getattr(report, "lint", None)
    if section is None:
        return []
    if isinstance(section, dict):
        found = section.get("blocking", section.get("findings", []))
    elif isinstance(section, list):
        found = section
    else:
        found = getattr(section, "blocking", None) or []
    items: list[LintItem] = []
    for f in found or []:
        def get(k: str, _f: object = f) -> object:
            return _f.get(k) if isinstance(_f, dict) else getattr(_f, k, None)

        if str(get("status") or "FAIL") != "FAIL" or str(get("severity") or "S1") not in ("S0", "S1"):
            continue
        line = get("line")
        items.append(LintItem(rule_id=str(get("rule_id") or "?"), file=str(get("file") or ""),
                              line=int(line) if isinstance(line, int) else None, message=str(get("message") or "")))
    return items


def outcome_from_report(report: object, op_dir: Path, target: str, reports_dir: Path) -> VerifyOutcome:
    """Store the report as ``<reports_dir>/<report_hash>.json`` and summarise it."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    report_hash = str(report.report_hash)
    path = reports_dir / f"{report_hash}.json"
    path.write_text(report.to_json(), encoding="utf-8")
    try:
        row = str(report.memory_row())
    except Exception:  # the row is informative only
        row = ""
    try:
        sanitized = dict(report.sanitized())
    except Exception:
        sanitized = {"verdict": str(report.verdict)}
    summary = str(getattr(report, "summary", "") or "")
    return VerifyOutcome(verdict=str(report.verdict), target=target, hashes=dict(report.hashes),
                         report_hash=report_hash, evidence=str(getattr(report, "evidence", "") or ""),
                         report_path=str(path.relative_to(op_dir)),
                         summary=summary, memory_row=row, lint_blocking=_findings(report),
                         reasons=[str(r) for r in getattr(report, "reasons", []) or []],
                         sanitized=_jsonable(sanitized))


def _jsonable(obj):
    import json

    return json.loads(json.dumps(obj, default=str))


def real_verifier(op_dir: Path, target: str, *, previous_stage: str | None, reports_dir: Path) -> VerifyOutcome:
    """The production verifier function: ``runtime.verify.verify`` on the op dir."""
    from runtime.verify import verify  # type: ignore[attr-defined]

    prev = op_dir / previous_stage if previous_stage else None
    report = verify(op_dir, op_dir / target, previous_stage=prev, reports_dir=reports_dir)
    return outcome_from_report(report, op_dir, target, reports_dir)


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


# Reason prefixes of runtime.verify's ERROR reports whose cause is not the candidate (pinned by
# tests/orchestrator/test_orch_stops.py against the real verifier, so a change of wording fails a test).
_NOT_THE_CANDIDATE: tuple[tuple[str, str], ...] = (
    ("golden.py failed", "golden"),
    ("golden run failed", "golden"),
    ("operator directory invalid", "op_dir"),
    ("opdir package not available", "tool"),
    ("require_sandbox", "machine"),
    ("sandbox:", "machine"),
    ("lint did not run", "tool"),
    ("lint package", "tool"),
    ("verifier could not run", "tool"),
    ("emulator", "tool"),
    ("boundary tensor", "design"),
)


def error_cause(outcome: VerifyOutcome) -> str:
    """Whose failure an outcome is: ``candidate`` (the debugger's business) or ``golden`` | ``op_dir`` |
    ``machine`` | ``tool`` (stop the run: never the debugger's) | ``design`` (the interfaces name a tensor
    golden.py does not have: the blocked gate, where the human can roll back to design).

    Only an ERROR verdict can be anything but ``candidate``: FAIL_* verdicts are the candidate's by definition.
    """
    if outcome.verdict != "ERROR":
        return "candidate"
    texts = list(outcome.reasons) or [outcome.summary]
    for text in texts:
        body = text.split(": ", 1)[1] if text.startswith("ERROR ") and ": " in text else text
        for prefix, cause in _NOT_THE_CANDIDATE:
            if body.startswith(prefix):
                return cause
    if not outcome.reasons and not outcome.report_hash:  # the verifier itself never produced a report
        return "tool"
    return "candidate"
