"""report: close the run — the final delivery commit (when delivered) and the closing trace event."""

from __future__ import annotations

from langgraph.runtime import Runtime

from orchestrator.core.nodes._common import commit, dev, node, services
from orchestrator.core.state import FinalState, ForgeState


@node("report")
def report(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    outcome = state.get("outcome") or "aborted"
    update: dict = {"phase": "done" if outcome == "delivered" else "aborted", "outcome": outcome}
    if outcome == "delivered":
        f = FinalState(**state.get("final", {}))
        update["dev_log"] = [dev(svc, "report", "delivery", f"{f.get('file')} + README.md delivered", "none")]
        sha = commit(state, update, f"final: {state['op_name']} delivered, PASS report {str(f.get('report_hash'))[:16]}",
                     {"forge-kind": "final", "forge-file": str(f.get("file")), "forge-verdict": str(f.get("verdict")),
                      "forge-report-hash": str(f.get("report_hash")), "forge-run": state.get("run_id", "")},
                     when=svc.clock())
        f["commit"] = sha
        update["final"] = f
    else:
        update["dev_log"] = [dev(svc, "report", "run aborted", "no delivery", "none")]
    svc.trace.emit("state_transition", node="report", **{"from": state.get("phase"), "to": update["phase"]})
    svc.trace.flush()
    return update
