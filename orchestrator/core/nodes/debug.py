"""debug(k): the debugger reads the failing file and the sanitized report and proposes a patch.

It never writes production files: its proposals become feedback for the next implementer dispatch.
"""

from __future__ import annotations

import json
import logging

from langgraph.runtime import Runtime

from agents.contracts import AgentError, DebugContext
from orchestrator.core.nodes._common import dev, node, op_path, read_text, services, timed
from orchestrator.core.state import ForgeState, replace_module
from orchestrator.store.artifacts import keep_bisect
from orchestrator.store.reports import read_report
from runtime.verdicts import Verdict

log = logging.getLogger(__name__)


def _sanitized_report(state: ForgeState) -> dict:
    """The last report's agent-visible view (``VerifyReport.sanitized``); only the verdict when it is unreadable."""
    rel = state.get("last_report")
    stored = read_report(op_path(state) / rel) if rel else None
    report: dict = dict(stored.sanitized()) if stored is not None else {"verdict": state.get("last_verdict")}
    return json.loads(json.dumps(report, default=str))


def first_divergence(svc, root, stage_file: str, verdict: str | None) -> dict | None:
    """runtime.bisect's sanitized first-divergence report for a numeric failure (None when unavailable)."""
    if verdict != Verdict.FAIL_NUMERIC or not svc.config.bisect:
        return None
    try:
        from runtime.bisect import bisect

        report = timed(svc, "verifier", bisect, root, root / stage_file)
        ctx = report.to_agent_context()
        return json.loads(json.dumps(ctx, default=str))
    except Exception:  # bisection is an aid for the debugger, never a gate
        log.warning("bisect failed for %s", stage_file, exc_info=True)
        return None


@node("debug")
def debug(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    k = int(state["active"])
    m = state["modules"][k - 1]
    found = first_divergence(svc, root, m["stage_file"], state.get("last_verdict"))
    keep_bisect(root, state.get("run_id", "run"), k, m.get("attempts"), found)  # for the run report only
    ctx = DebugContext(op_dir=str(root), op_name=state["op_name"], module=k, failing_file=m["stage_file"],
                       source=read_text(root / m["stage_file"]), report=_sanitized_report(state),
                       bisect=found,
                       memory_md=read_text(root / "MEMORY.md"), attempt=int(m.get("attempts", 1)))
    try:
        result = timed(svc, "agents", svc.agents.debug, ctx)
    except AgentError as exc:
        return {"agent_calls": [{"role": "debugger", "module": k, "attempt": m.get("attempts")}],
                "dev_log": [dev(svc, "debug", f"debug M{k}", f"debugger failed: {exc.reason}", "re-implement")]}
    notes = [f"debugger: {result.diagnosis}"]
    for p in result.proposals:
        notes.append(f"patch {p.file}:{p.line_start}-{p.line_end}: replace {p.current_snippet!r} with "
                     f"{p.proposed_snippet!r} (expected: {p.expected_effect})")
    return {"modules": replace_module(state, k, feedback=list(m.get("feedback", [])) + notes),
            "agent_calls": [{"role": "debugger", "module": k, "attempt": m.get("attempts")}],
            "dev_log": [dev(svc, "debug", f"debug M{k}", f"{result.diagnosis} ({len(result.proposals)} proposal(s))",
                            "re-implement with the patch proposal")]}
