"""Adapt ``runtime.verify.verify`` (the only authority that can verify a module) to :class:`VerifyOutcome`.

Why: the graph keeps a small summary in state and the full report on disk under
``.forge/run-<id>/reports/<report_hash>.json``, where ``python -m orchestrator audit`` finds it again.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from orchestrator.core.services import LintItem, VerifierFn, VerifyOutcome
from runtime.verdicts import Verdict
from runtime.verify import VerifyReport, VerifySettings, verify

log = logging.getLogger(__name__)


def _findings(report: VerifyReport) -> list[LintItem]:
    """Blocking lint findings of a report (S0/S1 FAIL items of ``report.lint.blocking``)."""
    items: list[LintItem] = []
    for f in report.lint.blocking if report.lint is not None else []:
        if str(f.get("status") or "FAIL") != "FAIL" or str(f.get("severity") or "S1") not in ("S0", "S1"):
            continue
        line = f.get("line")
        items.append(LintItem(rule_id=str(f.get("rule_id") or "?"), file=str(f.get("file") or ""),
                              line=line if isinstance(line, int) else None, message=str(f.get("message") or "")))
    return items


def outcome_from_report(report: VerifyReport, op_dir: Path, target: str, reports_dir: Path) -> VerifyOutcome:
    """Store the report as ``<reports_dir>/<report_hash>.json`` and summarise it."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    path = reports_dir / f"{report.report_hash}.json"
    path.write_text(report.to_json(), encoding="utf-8")
    return VerifyOutcome(verdict=report.verdict, target=target, hashes=dict(report.hashes),
                         report_hash=report.report_hash, evidence=report.evidence,
                         report_path=str(path.relative_to(op_dir)),
                         summary=report.summary, memory_row=report.memory_row(), lint_blocking=_findings(report),
                         reasons=list(report.reasons), sanitized=_jsonable(report.sanitized()))


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=str))


def real_verifier(op_dir: Path, target: str, *, previous_stage: str | None, reports_dir: Path,
                  unseen_seed: int | None = None, lint_stage: str | None = None) -> VerifyOutcome:
    """The production verifier function: ``runtime.verify.verify`` on the op dir (``unseen_seed``: the run's;
    ``lint_stage="performance"``: a variant of the perf stage)."""
    prev = op_dir / previous_stage if previous_stage else None
    settings = VerifySettings(lint_stage=lint_stage) if lint_stage else None
    report = verify(op_dir, op_dir / target, previous_stage=prev, reports_dir=reports_dir, unseen_seed=unseen_seed,
                    settings=settings)
    return outcome_from_report(report, op_dir, target, reports_dir)


def seeded_verifier(unseen_seed: int | None) -> VerifierFn:
    """:func:`real_verifier` bound to a run's unseen-case seed (every verification of a run sees the same
    unseen cases, and a replay the recording's)."""
    import functools

    return functools.partial(real_verifier, unseen_seed=unseen_seed)


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
    if outcome.verdict != Verdict.ERROR:
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
