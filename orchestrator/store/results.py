"""Where a run stands, read back from its checkpoint and its trace (no graph execution here).

:class:`RunResult` is what ``run``/``resume``/``status`` return; the trace queries (cost, divergences,
verified transitions) read the run's ``events.jsonl`` through one function, :func:`trace_events`.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from agents.trace import read_events
from orchestrator.command import cli_command, shell_path
from orchestrator.gates import GateRequest, RecordedDecision
from orchestrator.store.paths import list_runs, trace_dir
from orchestrator.store.runs import lock_holder, read_decision, read_json, read_pending, stopped_path
from runtime.verdicts import Verdict


class ModuleSummary(BaseModel):
    id: int
    name: str
    status: str
    attempts: int
    budget: int
    verdict: str | None = None
    report_hash: str | None = None
    stage_file: str = ""
    last_failure: str | None = None
    """The reason the module's last failed attempt gave, in one line (its attempt log has every one)."""


class RunResult(BaseModel):
    """Where a run stands after ``run``/``resume`` returns (or what ``status`` reports)."""

    run_id: str
    status: str
    """``delivered`` | ``aborted`` | ``waiting`` (at a gate) | ``interrupted`` (killed or signalled,
    resumable) | ``stopped`` (a failure that is not the candidate's: golden.py, the op dir, the machine;
    fix it, then resume) | ``running`` (another process drives it now)."""
    phase: str | None = None
    node: str | None = None
    gate: GateRequest | None = None
    modules: list[ModuleSummary] = Field(default_factory=list)
    final: dict = Field(default_factory=dict)
    agent_calls: dict[str, int] = Field(default_factory=dict)
    """Dispatches per role (each a designer/implementer/verifier/debugger task, answered or failed)."""
    model_calls: dict[str, int] = Field(default_factory=dict)
    """Model calls per role (:func:`model_calls`: one ``llm_call`` trace event each)."""
    attempts: list[dict] = Field(default_factory=list)
    """Every finished module attempt: ``{module, attempt, verdict, reason, model_calls}`` (the attempt log)."""
    cost_usd: float | None = None
    timers: dict[str, float] = Field(default_factory=dict)
    transitions: int = 0
    message: str = ""
    divergences: list[str] = Field(default_factory=list)
    """On replay: live verdicts that differ from the recorded ones (each also an ``error`` trace event)."""
    pending_decision: RecordedDecision | None = None
    """A decision recorded with ``approve``/``reject`` that the next ``resume`` applies."""
    cause: str = ""
    """Why the run ended without delivering (aborted: the blocked gate's reason; stopped: the failure)."""


def run_state(values: dict, gate: GateRequest | None, *, interrupted: bool = False,
              stopped: str | None = None) -> str:
    """The status of a run from its checkpoint values: the one definition (see :class:`RunResult`).

    ``gate``: the gate it waits at; ``interrupted``: the checkpoint has nodes left to run (a kill, a signal);
    ``stopped``: why a failure that is not the candidate's stopped it (``stopped.json``).
    """
    if gate is not None:
        return "waiting"
    if values.get("outcome") in ("delivered", "aborted") and values.get("phase") in ("done", "aborted"):
        return str(values["outcome"])
    if stopped:
        return "stopped"
    return "interrupted" if interrupted else "running"


def build_result(op_dir: Path, run_id: str, values: dict, gate: GateRequest | None, timers: dict | None = None,
                 transitions: int = 0, interrupted: bool = False, *, stopped: str | None = None,
                 message: str = "") -> RunResult:
    """A :class:`RunResult` from checkpoint values (status by :func:`run_state`)."""
    status = run_state(values, gate, interrupted=interrupted, stopped=stopped)
    calls: dict[str, int] = {}
    for c in values.get("agent_calls", []):
        calls[c.get("role", "?")] = calls.get(c.get("role", "?"), 0) + 1
    log = list(values.get("attempt_log", []))
    failures = {r.get("module"): r.get("reason") for r in log if r.get("verdict") != Verdict.PASS and r.get("reason")}
    mods = [ModuleSummary(id=m["id"], name=m.get("name", ""), status=m.get("status", "?"),
                          attempts=m.get("attempts", 0), budget=m.get("budget", 0), verdict=m.get("verdict"),
                          report_hash=m.get("report_hash"), stage_file=m.get("stage_file", ""),
                          last_failure=failures.get(m["id"]))
            for m in values.get("modules", [])]
    cause = str(values.get("stop_reason") or "") if status == "aborted" else (stopped or "" if status == "stopped"
                                                                                else "")
    return RunResult(run_id=run_id, status=status, phase=values.get("phase"), node=values.get("node"), gate=gate,
                     modules=mods, final=values.get("final", {}), agent_calls=calls,
                     model_calls=model_calls_by_role(op_dir, run_id), attempts=log,
                     cost_usd=trace_cost(op_dir, run_id), timers=dict(timers or {}), transitions=transitions,
                     cause=cause, message=message)


def run_status(op_dir: Path, rid: str, values: dict, nxt: tuple, interrupts: list, *,
               shown_as: str | None = None) -> RunResult:
    """Where a stored run stands (``status``), from its checkpoint snapshot and its run files.

    ``values, nxt, interrupts`` are the run's latest checkpoint (``orchestrator.core.snapshot``); the run
    files say whether a live process drives it (the lock), why it stopped (``stopped.json``), whether a
    terminal is asking at its gate (``pending_gate.json``) and which decision waits (``decision.json``).
    """
    where = shown_as or str(op_dir)
    gate = GateRequest.model_validate(interrupts[0]) if interrupts else None
    holder = lock_holder(op_dir)
    live = bool(holder and holder.get("run_id") == rid)
    stopped = read_json(stopped_path(op_dir, rid))
    interrupted = bool(nxt) and not interrupts
    res = build_result(op_dir, rid, values, gate, interrupted=interrupted and not live,
                       stopped=str(stopped.get("message")) if stopped and interrupted and not live else None)
    res.pending_decision = read_decision(op_dir, rid)
    if gate is not None:
        pend = read_pending(op_dir, rid) or {}
        asking = live and (pend.get("holder") or {}).get("interactive")
        res.message = (f"gate {gate.gate_id(rid).label()} is open at an interactive prompt (pid {holder['pid']}); "
                       "answer it there" if asking and holder else "")
    elif res.status == "running" and live and holder:
        res.message = f"run {rid} is in progress (pid {holder.get('pid')})"
    elif res.status == "stopped":
        res.message = f"fix the cause, then continue with `{cli_command()} resume {shell_path(where)}`"
    elif res.status == "interrupted":
        # "stopped before design" after a Ctrl-C during the designer's model call read as if design never began
        # (UX audit s48/s49): the checkpoint cannot tell, so say what resume does with a step cut short
        steps = ", ".join(nxt)
        res.message = (f"run {rid} was interrupted during or just before {steps} (resume runs it again from its "
                       f"start; a model call cut short is made again); continue it with "
                       f"`{cli_command()} resume {shell_path(where)}`")
    return res


def trace_events(op_dir: Path, run_id: str) -> list[dict]:
    """The events of a run's trace, in order (unreadable lines, e.g. a torn last line after a kill, skipped)."""
    events, _ = read_events(trace_dir(op_dir, run_id) / "events.jsonl", torn_ok=True)
    return [e.model_dump(mode="json") for e in events]


def model_calls(op_dir: Path, run_id: str, agent: str | None = None, module: int | None = None,
                attempt: int | None = None) -> int:
    """How many model calls the run made (of ``agent``, ``module``, ``attempt`` when given): the one definition
    that status, the run report, the progress lines and the attempt log share. A model call is one ``llm_call``
    trace event: one request answered (or failed for good); the HTTP retries of a call are its ``retries``."""
    return sum(1 for e in trace_events(op_dir, run_id) if e.get("kind") == "llm_call"
               and (agent is None or e.get("agent") == agent) and (module is None or e.get("module") == module)
               and (attempt is None or e.get("attempt") == attempt))


def model_calls_by_role(op_dir: Path, run_id: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in trace_events(op_dir, run_id):
        if e.get("kind") == "llm_call":
            out[str(e.get("agent"))] = out.get(str(e.get("agent")), 0) + 1
    return out


def trace_cost(op_dir: Path, run_id: str) -> float | None:
    costs = [float(e["cost_usd"]) for e in trace_events(op_dir, run_id)
             if e.get("kind") == "llm_call" and e.get("cost_usd") is not None]
    return sum(costs) if costs else None


def divergences(op_dir: Path, run_id: str) -> list[str]:
    return [str(e.get("message")) for e in trace_events(op_dir, run_id)
            if e.get("kind") == "error" and e.get("divergence")]


def verified_transitions(root: Path) -> list[tuple[str, int, str]]:
    """(run id, module, report hash) of every transition to "verified" recorded in the run traces."""
    out = []
    for rid in list_runs(root):
        events = trace_events(root, rid)
        by_seq = {e.get("seq"): e for e in events}
        for e in events:
            if e.get("kind") == "state_transition" and e.get("to") == "verified":
                just = by_seq.get(e.get("justified_by"), {})
                out.append((rid, int(e.get("module") or 0), str(just.get("report_hash") or "")))
    return out
