"""Conditional edges: pure functions of the state (verdicts, statuses, the blocked marker).

Why separate: routing is code, never model prose; each function is unit-testable without a graph.
"""

from __future__ import annotations

from orchestrator.core.state import ForgeState, ModuleRecord
from runtime.verdicts import AGENT_ERROR, Verdict


def _active(state: ForgeState) -> ModuleRecord:
    k = int(state.get("active", 0))
    mods = state.get("modules", [])
    return mods[k - 1] if 1 <= k <= len(mods) else ModuleRecord()


def after_intake(state: ForgeState) -> str:
    return "design_check" if state.get("design", {}).get("existing") else "design"


def after_design(state: ForgeState) -> str:
    if state.get("blocked"):
        return "gate_blocked"
    return "design" if state.get("design", {}).get("status") == "agent_error" else "design_check"


def after_design_check(state: ForgeState) -> str:
    d = state.get("design", {})
    if state.get("blocked"):
        return "gate_blocked"
    if d.get("status") == "approved":  # a valid design given by the user: the design stage is skipped
        return "plan_stages"
    if d.get("status") == "checked":
        return "gate_design"
    return "design"


def after_gate_design(state: ForgeState) -> str:
    return "plan_stages" if state.get("design", {}).get("status") == "approved" else "design"


def after_implement(state: ForgeState) -> str:
    if state.get("blocked"):
        return "gate_blocked"
    return "verify" if _active(state).get("written") else "implement"


def after_verify(state: ForgeState) -> str:
    if state.get("blocked"):
        return "gate_blocked"
    m = _active(state)
    if m.get("status") == "verified":
        return "audit"
    return "implement" if m.get("verdict") in (Verdict.FAIL_LINT, AGENT_ERROR) else "debug"


def after_audit(state: ForgeState) -> str:
    if state.get("blocked"):
        return "gate_blocked"
    if _active(state).get("audit") != "ok":
        return "implement"
    return "cleanup" if state.get("level") == "L0" else "gate_module"


def after_gate_module(state: ForgeState) -> str:
    return "cleanup" if state.get("phase") == "cleanup" else "implement"


def after_cleanup(state: ForgeState) -> str:
    return "gate_final" if state.get("level") == "L0" else "verify_final"


def after_verify_final(state: ForgeState) -> str:
    return "gate_blocked" if state.get("blocked") else "gate_final"


def after_gate_final(state: ForgeState) -> str:
    if state.get("outcome") != "delivered":
        return "implement"
    perf = state.get("perf") or {}
    return "gate_perf_start" if perf.get("requested") and perf.get("status", "pending") == "pending" else "report"


def after_gate_blocked(state: ForgeState) -> str:
    if state.get("outcome") == "aborted":
        return "report"
    return "design" if state.get("phase") == "design" else "implement"
