"""Recording a human decision for the gate a run waits at (``approve``/``reject``), without loading the pipeline.

Why a module of its own: the decision is a file beside the run (``resume`` applies it); checking it needs the
gate the run waits at, which :func:`orchestrator.readonly.run_state` reads from the run's copy of its latest
checkpoint. Through :mod:`orchestrator.api` the command loaded LangGraph, the nodes and the agents first (~2.5 s
of CPU for ``approve op``, UX audit s46). ``orchestrator.api.approve``/``reject`` are these ones.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

from orchestrator.errors import ForgeError, no_op_dir
from orchestrator.gates import GateDecision, GateRequest, RecordedDecision
from orchestrator.readonly import run_state
from orchestrator.store.runs import latest_run, lock_holder, read_meta, record_decision


def _decide(op_dir: Path | str, decision: GateDecision, gate: str | None, run_id: str | None) -> GateRequest:
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(no_op_dir(op_dir))
    rid = run_id or latest_run(root, str(op_dir))
    read_meta(root, rid)  # a damaged run.json: the run cannot be resumed, so a decision for it is refused
    holder = lock_holder(root)
    _, _, interrupts = run_state(root, rid)  # the run's copy of its latest checkpoint while it is that one
    if holder and holder.get("run_id") == rid and int(holder.get("pid", 0)) != os.getpid():
        if not interrupts:  # UX audit s48: "answer at its prompt there" of a run working (or in --approve auto)
            raise ForgeError(f"run {rid} is in progress (pid {holder.get('pid')}) and not waiting at a gate: nothing "
                             f"to {decision.decision} now; its next gate is asked at its terminal, or stops it "
                             "(--approve stop) for a decision here")
        req = GateRequest.model_validate(interrupts[0])
        raise ForgeError(f"run {rid} is in progress waiting at gate {req.gate_id(rid).label()} in another terminal "
                         f"(pid {holder.get('pid')}): answer at its prompt there; a decision recorded here could land "
                         "on a later gate")
    if not interrupts:
        raise ForgeError(f"run {rid} is not waiting at a gate; nothing to {decision.decision}")
    req = GateRequest.model_validate(interrupts[0])
    if gate and gate != req.gate:
        raise ForgeError(f"run {rid} waits at gate '{req.gate}', not '{gate}'")
    if req.gate == "blocked" and decision.decision in ("approve", "reject"):
        # reject is no answer here, as at the prompt (UX audit s33: it was recorded as abort, which ended a run
        # whose user wanted another attempt with the note)
        raise ForgeError(f"the run is blocked: {decision.decision} is no answer at this gate, it needs --choice: "
                         "`approve --choice hint --note ...` (another attempt with a hint), `--choice raise_budget`, "
                         "`--choice rollback` or `--choice abort` (end the run)", code=2)
    if req.gate != "blocked" and decision.decision not in ("approve", "reject"):
        raise ForgeError(f"--choice applies to the blocked gate only (the run waits at '{req.gate}')", code=2)
    if decision.decision == "hint" and not decision.note.strip():
        raise ForgeError("a hint needs --note", code=2)
    record_decision(root, rid, RecordedDecision(decision=decision.encoded(), note=decision.note,
                                                for_gate=req.gate_id(rid), recorded=_dt.datetime.now(_dt.UTC).isoformat()))
    return req


def approve(op_dir: Path | str, *, gate: str | None = None, note: str = "", choice: str | None = None,
            budget: int | None = None, run_id: str | None = None) -> GateRequest:
    """Record approval (or a blocked-gate choice) for the gate instance the run waits at; ``resume`` applies it.

    Raises:
        ForgeError: the run is not waiting at a gate, another process is asking at that gate right now, a
            decision for this gate instance is already recorded, or the choice does not fit the gate.
    """
    dec = choice or "approve"
    if dec not in ("approve", "hint", "raise_budget", "rollback", "abort"):
        raise ForgeError(f"unknown choice {dec!r}: use hint, raise_budget, rollback or abort", code=2)
    if budget is not None and budget < 1:
        raise ForgeError("--budget must be at least 1", code=2)
    return _decide(op_dir, GateDecision.model_validate({"decision": dec, "note": note, "budget": budget}), gate, run_id)


def reject(op_dir: Path | str, *, note: str, gate: str | None = None, run_id: str | None = None) -> GateRequest:
    """Record a rejection with a note for the agents; ``resume`` applies it."""
    if not note or not note.strip():
        raise ForgeError("reject needs --note \"...\" (the agents read it)", code=2)
    return _decide(op_dir, GateDecision(decision="reject", note=note), gate, run_id)
