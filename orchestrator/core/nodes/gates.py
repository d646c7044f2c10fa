"""The four gate nodes: ``gate_design``, ``gate_module``, ``gate_final``, ``gate_blocked``.

LangGraph re-executes a node from its start when the run resumes, so nothing with side effects happens
before :func:`interrupt` here: the decision is first looked up in a recorded trace (replay), else asked
with ``interrupt()`` (the driver answers: a recorded decision, ``auto``, or the prompt). Effects (trace event, state update)
come after. Malformed decisions are denied (:func:`orchestrator.gates.parse_decision`).
"""

from __future__ import annotations

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from orchestrator.core.nodes._common import dev, node, op_path, services
from orchestrator.core.second_opinion import from_state as second_opinion_from_state
from orchestrator.core.services import Services
from orchestrator.core.state import DesignState, ForgeState, GateRecord, replace_module
from orchestrator.gates import DEFAULT_RAISE, GateDecision, GateRequest, answer_source, parse_decision
from orchestrator.store.reports import report_reasons


def decide(state: ForgeState, svc: Services, request: GateRequest) -> tuple[GateDecision, dict]:
    """The decision at a gate plus the state update that counts it.

    A replay takes the recorded decision; otherwise the gate asks with ``interrupt()`` and the driver's
    :func:`orchestrator.core.driver.answer_gate` answers (a recorded ``approve``/``reject``, the approval
    mode ``auto``, or the terminal prompt) - the one place that knows how a gate is answered.
    """
    key = f"{request.gate}:{request.module}"
    occurrence = int(state.get("gate_counts", {}).get(key, 0))
    # the gate instance: every opening in the run gets the next number (a redesign's gate is a new one)
    request = request.model_copy(update={"seq": sum(int(v) for v in state.get("gate_counts", {}).values()) + 1})
    recorded = svc.trace.recorded_decision(request.gate, request.module, occurrence)
    if recorded is not None:
        decision, source = parse_decision(recorded, request.gate), "replay"
    else:
        raw = interrupt(request.model_dump())
        decision, source = parse_decision(raw, request.gate), answer_source(raw)
    svc.trace.emit("resume", node=f"gate_{request.gate}", module=request.module, gate=request.gate,
                   decision=decision.encoded(), note=decision.note, source=source)
    counts = dict(state.get("gate_counts", {}))
    counts[key] = occurrence + 1
    return decision, {"gate_counts": counts,
                      "gate": GateRecord(gate=request.gate, module=request.module, decision=decision.encoded(),
                                         note=decision.note, source=source)}


@node("gate_design")
def gate_design(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    d = state.get("design", {})
    details = [f"module_count = {state.get('module_count')} ({state.get('level')}); computed "
               f"{state.get('complexity', {}).get('module_count')}"]
    if d.get("rationale"):
        details.append(f"designer rationale: {d['rationale']}")
    details += [f"M{m['id']}: {m.get('name')} -> {', '.join(m.get('outputs', []))}" for m in state.get("modules", [])]
    req = GateRequest(gate="design", title="Approve the design (DESIGN.md + module_interfaces.yaml)?",
                      details=details)
    decision, update = decide(state, svc, req)
    d = DesignState(**d)
    if decision.decision == "approve":
        d["status"] = "approved"
        update["dev_log"] = [dev(svc, "gate_design", "design gate", "approved", "plan stages")]
    else:
        d["status"] = "rejected"
        d["notes"] = list(d.get("notes", [])) + [decision.note or "rejected without a note"]
        update["rejected"] = [{"approach": f"design attempt {d.get('attempts', 0)}",
                               "evidence": f"rejected at the design gate: {decision.note}", "when": svc.stamp()}]
        update["dev_log"] = [dev(svc, "gate_design", "design gate", f"rejected: {decision.note}", "redesign")]
    update["design"] = d
    return update


@node("gate_module")
def gate_module(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    k = int(state["active"])
    m = state["modules"][k - 1]
    n = len(state["modules"])
    if svc.config.module_gate:
        req = GateRequest(gate="module", module=k, title=f"Accept verified module M{k} ({m.get('stage_file')})?",
                          details=[f"report {str(m.get('report_hash'))[:16]}", f"attempts {m.get('attempts')}",
                                   f"audit: {m.get('audit')}"])
        decision, update = decide(state, svc, req)
    else:
        decision, update = GateDecision(decision="approve", note="module gate disabled"), {}
    if decision.decision == "approve":
        if k < n:
            update.update(active=k + 1, phase="construction")
            nxt = f"implement M{k + 1}"
        else:
            update.update(phase="cleanup")
            nxt = "cleanup"
        update["dev_log"] = [dev(svc, "gate_module", f"module gate M{k}", "approved", nxt)]
        return update
    note = decision.note or "rejected without a note"
    update["modules"] = replace_module(state, k, status="in_progress", audit=None,
                                       feedback=list(m.get("feedback", [])) + [f"human at module gate: {note}"])
    update["rejected"] = [{"approach": f"M{k} as in {m.get('stage_file')} (evidence {str(m.get('evidence'))[:12]})",
                           "evidence": f"rejected at the module gate: {note}", "when": svc.stamp()}]
    update["dev_log"] = [dev(svc, "gate_module", f"module gate M{k}", f"rejected: {note}", f"re-implement M{k}")]
    return update


@node("gate_final")
def gate_final(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    f = state.get("final", {})
    details = [f"final verdict {f.get('verdict')}", f"report {str(f.get('report_hash'))[:16]}"]
    opinion = second_opinion_from_state(dict(state))
    if opinion is not None:
        details += opinion.gate_lines()
    req = GateRequest(gate="final", title=f"Deliver {state['op_name']}_impl.py and README.md?", details=details)
    decision, update = decide(state, svc, req)
    if decision.decision == "approve":
        update.update(outcome="delivered", phase="final")
        update["dev_log"] = [dev(svc, "gate_final", "final gate", "approved", "report")]
        return update
    k = len(state["modules"])
    m = state["modules"][k - 1]
    note = decision.note or "rejected without a note"
    update.update(active=k, phase="construction")
    update["modules"] = replace_module(state, k, status="in_progress", audit=None,
                                       feedback=list(m.get("feedback", [])) + [f"human at final gate: {note}"])
    update["dev_log"] = [dev(svc, "gate_final", "final gate", f"rejected: {note}", f"re-implement M{k}")]
    return update


def stop_reason(state: ForgeState, blocked: dict, decision: GateDecision) -> str:
    """Why an aborted run ended: the blocked reason plus the first reasons of the last report."""
    reason = str(blocked.get("reason") or "blocked")
    extra = [r for r in report_reasons(op_path(state), state.get("last_report"))[:2] if r not in reason]
    who = "approval mode auto aborts at the blocked gate" if decision.note == "auto" else (
        f"aborted at the blocked gate{': ' + decision.note if decision.note else ''}")
    return "; ".join([reason, *extra, who])


@node("gate_blocked")
def gate_blocked(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    b = state.get("blocked") or {}
    module = b.get("module")
    req = GateRequest(gate="blocked", module=module, title=f"Blocked: {b.get('reason')}",
                      details=["hint: add a note for the implementer/designer and retry",
                               f"raise_budget: allow N more attempts (default {DEFAULT_RAISE})",
                               "rollback: go back to the design stage", "abort: stop the run"],
                      choices=["hint", "raise_budget", "rollback", "abort"])
    decision, update = decide(state, svc, req)
    update["blocked"] = None
    note = decision.note
    if decision.decision == "abort":
        # for the human only (RunResult.cause, status, report); MEMORY.md and the agents never see it
        update.update(outcome="aborted", stop_reason=stop_reason(state, b, decision))
        update["dev_log"] = [dev(svc, "gate_blocked", "blocked gate", f"abort {note}".strip(), "report")]
        return update
    if decision.decision == "rollback" or module is None:
        d = DesignState(**state.get("design", {}))
        d["notes"] = list(d.get("notes", [])) + ([note] if note else [])
        d["budget"] = int(d.get("attempts", 0)) + (decision.budget or DEFAULT_RAISE)
        d["status"] = "rolled_back"
        d["existing"] = False
        update.update(design=d, phase="design", active=0, modules=[])
        if module is not None:
            update["rejected"] = [{"approach": "design before rollback", "evidence": str(b.get("reason")),
                                   "when": svc.stamp()}]
        update["dev_log"] = [dev(svc, "gate_blocked", "blocked gate", f"{decision.decision}: back to design",
                                 "design")]
        return update
    k = int(module)
    m = state["modules"][k - 1]
    extra = decision.budget or DEFAULT_RAISE
    feedback = list(m.get("feedback", [])) + ([f"human hint: {note}"] if note else [])
    update["modules"] = replace_module(state, k, budget=int(m.get("attempts", 0)) + extra, lint_streak=0,
                                       lint_key=None, feedback=feedback, status="in_progress")
    update.update(active=k, phase="construction")
    update["dev_log"] = [dev(svc, "gate_blocked", f"blocked gate M{k}", f"{decision.encoded()} {note}".strip(),
                             f"re-implement M{k} with {extra} more attempt(s)")]
    return update
