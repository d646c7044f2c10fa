"""The orchestrator's library API; the CLI (``orchestrator/cli``) is a thin layer over it.

``run`` starts a run, ``resume`` continues the latest one (after a crash or at a gate), ``approve`` /
``reject`` record a human decision for a waiting run, ``status`` summarises, ``audit`` proves the git
history, ``prune`` bounds checkpoint growth. Every user mistake raises :class:`ForgeError`.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
from pydantic import BaseModel, Field

from agents.contracts import AgentSet, TraceSink
from orchestrator import opdir_bridge
from orchestrator.agent_factory import agents_from_spec, build_agents, model_configured, preflight
from orchestrator.errors import ForgeError
from orchestrator.gates import GateDecision, GateRequest, parse_decision
from orchestrator.gitaudit import AuditResult
from orchestrator.gitaudit import audit as _audit
from orchestrator.graph import compile_graph
from orchestrator.logical_clock import LogicalClock
from orchestrator.paths import checkpoint_db, list_runs, run_dir, trace_dir
from orchestrator.runs import (
    RunLock,
    RunMeta,
    decision_path,
    latest_run,
    lock_holder,
    new_run_id,
    pending_path,
    read_meta,
    write_meta,
)
from orchestrator.services import ApproveMode, Services, VerifierFn, utc_now

log = logging.getLogger(__name__)

PromptFn = Callable[[GateRequest], GateDecision | None]
"""Asks a human at a gate; None leaves the run waiting there (e.g. no terminal)."""
UpdateFn = Callable[[dict], None]


class ModuleSummary(BaseModel):
    id: int
    name: str
    status: str
    attempts: int
    budget: int
    verdict: str | None = None
    report_hash: str | None = None
    stage_file: str = ""


class RunResult(BaseModel):
    """Where a run stands after ``run``/``resume`` returns (or what ``status`` reports)."""

    run_id: str
    status: str
    """``delivered`` | ``aborted`` | ``waiting`` (at a gate) | ``interrupted`` (killed, resumable)."""
    phase: str | None = None
    node: str | None = None
    gate: GateRequest | None = None
    modules: list[ModuleSummary] = Field(default_factory=list)
    final: dict = Field(default_factory=dict)
    agent_calls: dict[str, int] = Field(default_factory=dict)
    cost_usd: float | None = None
    timers: dict[str, float] = Field(default_factory=dict)
    transitions: int = 0
    message: str = ""
    divergences: list[str] = Field(default_factory=list)
    """On replay: live verdicts that differ from the recorded ones (each also an ``error`` trace event)."""


def _make_trace(op_dir: Path, run_id: str, clock: Callable[[], _dt.datetime]) -> TraceSink:
    from agents.trace import Trace

    if isinstance(clock, LogicalClock):  # event timestamps stay wall-clock; the run's own times are logical
        return Trace(trace_dir(op_dir, run_id), run_id=run_id, mode="record", op_dir=op_dir)
    return Trace(trace_dir(op_dir, run_id), run_id=run_id, mode="record", op_dir=op_dir,
                 clock=lambda: clock().isoformat(timespec="milliseconds"))


def _default_verifier() -> VerifierFn:
    from orchestrator.verifier_bridge import real_verifier

    return real_verifier


def _result(op_dir: Path, run_id: str, values: dict, gate: GateRequest | None, svc: Services | None,
            transitions: int = 0, interrupted: bool = False) -> RunResult:
    outcome = values.get("outcome")
    if gate is not None:
        status = "waiting"
    elif outcome in ("delivered", "aborted") and values.get("phase") in ("done", "aborted"):
        status = outcome
    else:
        status = "interrupted" if interrupted else "running"
    calls: dict[str, int] = {}
    for c in values.get("agent_calls", []):
        calls[c.get("role", "?")] = calls.get(c.get("role", "?"), 0) + 1
    mods = [ModuleSummary(id=m["id"], name=m.get("name", ""), status=m.get("status", "?"),
                          attempts=m.get("attempts", 0), budget=m.get("budget", 0), verdict=m.get("verdict"),
                          report_hash=m.get("report_hash"), stage_file=m.get("stage_file", ""))
            for m in values.get("modules", [])]
    return RunResult(run_id=run_id, status=status, phase=values.get("phase"), node=values.get("node"), gate=gate,
                     modules=mods, final=values.get("final", {}), agent_calls=calls,
                     cost_usd=_trace_cost(op_dir, run_id), timers=dict(svc.timers) if svc else {},
                     transitions=transitions)


def _trace_events(op_dir: Path, run_id: str) -> list[dict]:
    """The events of a run's trace (unreadable lines skipped; no trace: none)."""
    path = trace_dir(op_dir, run_id) / "events.jsonl"
    events = []
    for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else []:
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def _trace_cost(op_dir: Path, run_id: str) -> float | None:
    costs = [float(e["cost_usd"]) for e in _trace_events(op_dir, run_id)
             if e.get("kind") == "llm_call" and e.get("cost_usd") is not None]
    return sum(costs) if costs else None


def _drive(op_dir: Path, run_id: str, svc: Services, first_input: object, *, prompt: PromptFn | None,
           on_update: UpdateFn | None) -> RunResult:
    """Stream the graph until it finishes or waits at a gate; decisions come from files or the prompt."""
    try:
        return _drive_graph(op_dir, run_id, svc, first_input, prompt=prompt, on_update=on_update)
    finally:
        close = getattr(svc.trace, "close", None)
        if callable(close):
            close()


def _drive_graph(op_dir: Path, run_id: str, svc: Services, first_input: object, *, prompt: PromptFn | None,
                 on_update: UpdateFn | None) -> RunResult:
    transitions = 0
    with SqliteSaver.from_conn_string(str(checkpoint_db(op_dir, run_id))) as saver:
        graph = compile_graph(saver)
        config = {"configurable": {"thread_id": run_id}, "recursion_limit": 100_000}
        inp = first_input
        while True:
            for values in graph.stream(inp, config, context=svc, stream_mode="values", durability="sync"):
                transitions += 1 if values.get("node") else 0  # the initial input is not a transition
                if on_update is not None:
                    on_update(values)
            snap = graph.get_state(config)
            values = dict(snap.values)
            if not snap.interrupts:
                svc.trace.flush()
                pending_path(op_dir, run_id).unlink(missing_ok=True)
                return _result(op_dir, run_id, values, None, svc, transitions)
            req = GateRequest.model_validate(snap.interrupts[0].value)
            pp = pending_path(op_dir, run_id)
            if not pp.exists():
                svc.trace.emit("interrupt", node=f"gate_{req.gate}", module=req.module, gate=req.gate,
                               payload={"title": req.title, "choices": req.choices})
                pp.write_text(req.model_dump_json(indent=2) + "\n", encoding="utf-8")
            svc.trace.flush()
            decision = _take_decision(op_dir, run_id, req)
            if decision is None and svc.approve == "prompt" and prompt is not None:
                decision = prompt(req)
            if decision is None:
                return _result(op_dir, run_id, values, req, svc, transitions)
            pp.unlink(missing_ok=True)
            svc.answer_pending = True
            inp = Command(resume=decision.model_dump())


def _take_decision(op_dir: Path, run_id: str, req: GateRequest) -> GateDecision | None:
    path = decision_path(op_dir, run_id)
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raw = None
    path.unlink()
    return parse_decision(raw, req.gate)


def _services(op_dir: Path, run_id: str, meta: RunMeta, *, agents: AgentSet | None, verifier: VerifierFn | None,
              trace: TraceSink | None, clock: Callable[[], _dt.datetime], approve: ApproveMode) -> Services:
    trace = trace or _make_trace(op_dir, run_id, clock)
    if agents is None:
        agents = agents_from_spec(meta.agents, op_dir, trace, meta.model_options)
    if verifier is None:
        if meta.verifier != "runtime":
            raise ForgeError(f"run {run_id} used an injected verifier; pass it again to resume")
        verifier = _default_verifier()
    return Services(agents=agents, verifier=verifier, trace=trace, clock=clock, approve=approve,
                    module_gate=meta.module_gate, budget=meta.budget)


CLOCK_FILE = "clock.json"
"""Where a recorded run keeps its logical clock's reading count (so a resume continues it)."""
DEFAULT_TRACE = Path("traces") / "default"
"""The shipped trace that ``run`` replays when no model is configured."""
PRODUCED = ("DESIGN.md", "module_interfaces.yaml", "MEMORY.md", "README.md", "modules")


OP_INPUTS = ("SPEC.md", "golden.py")
"""What the user writes; a fresh run (and every replay) starts from these alone."""


def copy_op_inputs(src: Path | str, dest: Path | str, *, traces: bool = True) -> Path:
    """Make ``dest`` a fresh op dir holding ``src``'s inputs (and its shipped ``traces/`` unless told not to).

    ``dest`` must not exist yet; nothing produced by an earlier run is copied.
    """
    src, dest = Path(src), Path(dest)
    dest.mkdir(parents=True)
    for name in OP_INPUTS:
        shutil.copy2(src / name, dest / name)
    if traces and (src / "traces").is_dir():
        shutil.copytree(src / "traces", dest / "traces")
    return dest


def describe_agents(op_dir: Path | str, model_options: dict | None = None) -> tuple[str, str]:
    """Which agents a plain ``run`` would use: ``("model", ...)``, ``("replay", ...)`` or ``("none", why)``."""
    root = Path(op_dir).resolve()
    if model_configured(root, model_options):
        return "model", "agents: the configured model (every call recorded in the run's trace)"
    if (root / DEFAULT_TRACE / "manifest.json").is_file():
        return "replay", (f"no model configured: replaying {DEFAULT_TRACE} (recorded agent answers and human "
                          "decisions; the verification tool runs live)")
    return "none", ("no model configured and no shipped trace in traces/default: set FORGE_MODEL (or forge.toml "
                    "[models]) and OPENAI_BASE_URL/OPENAI_API_KEY, or use --agents scripted:<script.yaml>")


def _produced_artifacts(root: Path) -> list[Path]:
    names = list(PRODUCED)
    try:
        names.append(f"{opdir_bridge.load(root).op_name}_impl.py")
    except ForgeError:
        pass
    return [root / n for n in names if (root / n).exists()]


def _clear_previous_artifacts(root: Path, fresh: bool) -> None:
    found = _produced_artifacts(root)
    if not found:
        return
    listed = ", ".join(p.name for p in found)
    if not fresh:
        raise ForgeError(f"{root} holds artifacts of an earlier run ({listed}); a replay starts from SPEC.md + "
                         "golden.py: pass --fresh to move them to .forge/previous/ first")
    dest = root / ".forge" / "previous" / utc_now().strftime("%Y%m%dT%H%M%S%f")
    dest.mkdir(parents=True)
    for p in found:
        p.rename(dest / p.name)
    log.info("moved %s to %s", listed, dest)


def _recorded_clock(source: Path) -> LogicalClock:
    """The recording's logical clock (``clock_origin`` in its manifest)."""
    try:
        manifest = json.loads((Path(source) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ForgeError(f"cannot replay {source}: unreadable manifest.json ({exc})") from None
    origin = manifest.get("clock_origin")
    if not origin:  # e.g. a scripted run's trace: only its decisions replay, times do not matter
        log.warning("%s has no clock_origin: the replay reads the wall clock (model calls that saw times in "
                    "MEMORY.md will not match)", source)
        return LogicalClock(utc_now())
    return LogicalClock.parse(origin)


def _new_id(clock: Callable[[], _dt.datetime]) -> str:
    """A run id; never from a logical clock (a reading there would shift every later time of the run)."""
    return new_run_id(utc_now() if isinstance(clock, LogicalClock) else clock())


def _note_clock(trace: TraceSink | None, clock: Callable[[], _dt.datetime]) -> None:
    update = getattr(trace, "update_manifest", None)
    if isinstance(clock, LogicalClock) and callable(update) and getattr(trace, "mode", "record") != "replay":
        update(clock_origin=clock.origin.isoformat())


def run(op_dir: Path | str, *, agents: AgentSet | None = None, agents_spec: str | None = None,
        approve: ApproveMode = "prompt", verifier: VerifierFn | None = None, trace: TraceSink | None = None,
        clock: Callable[[], _dt.datetime] = utc_now, budget: int = 10, module_gate: bool = True,
        run_id: str | None = None, prompt: PromptFn | None = None, on_update: UpdateFn | None = None,
        model_options: dict | None = None, fresh: bool = False) -> RunResult:
    """Start a new run on ``op_dir``.

    Agents: ``agents`` (injected), ``agents_spec`` (``scripted:<script.yaml>``), else the configured model
    (``model_options``, ``FORGE_MODEL*``, forge.toml), recorded into the run's trace; with no model configured
    and a shipped trace in ``<op_dir>/traces/default``, the run replays it (see :func:`replay`).

    Raises:
        ForgeError: invalid op dir, a run already in progress, unknown agents, no model configured.
    """
    root = Path(op_dir).resolve()
    opdir_bridge.load(root)  # one clear message before anything is written
    if approve not in ("prompt", "auto", "stop"):
        raise ForgeError(f"unknown approval mode {approve!r}: use prompt, auto or stop")
    if agents is None and not agents_spec:
        kind, why = describe_agents(root, model_options)
        if kind == "replay":  # no model configured: the op dir's shipped trace plays the agents
            return replay(root, root / DEFAULT_TRACE, verifier=verifier, run_id=run_id, module_gate=module_gate,
                          budget=budget, fresh=fresh, on_update=on_update)
        if kind == "none":
            raise ForgeError(why)
    rid = run_id or _new_id(clock)
    if rid in list_runs(root) and (run_dir(root, rid) / "run.json").exists():
        raise ForgeError(f"run {rid} already exists in {root}")
    spec = agents_spec or ("injected" if agents is not None else "factory")
    if spec.startswith("scripted:"):
        spec = "scripted:" + str(Path(spec[len("scripted:"):]).resolve())
    options = {k: str(v) for k, v in (model_options or {}).items() if k in ("model", "base_url") and v}
    if agents is None and spec == "factory" and clock is utc_now:
        # a recorded model run reads logical time, so that its trace replays exactly (also across a resume)
        clock = LogicalClock(utc_now(), state_file=run_dir(root, rid) / CLOCK_FILE)
    meta = RunMeta(run_id=rid, agents=spec, approve=approve, budget=budget, module_gate=module_gate,
                   verifier="injected" if verifier is not None else "runtime", model_options=options,
                   clock_origin=clock.origin.isoformat() if isinstance(clock, LogicalClock) else None,
                   created=clock().isoformat())
    if agents is None:
        preflight(spec, root, options)
    with RunLock(root, rid):
        run_dir(root, rid).mkdir(parents=True, exist_ok=True)
        if agents is None and spec == "factory":
            trace = trace or _make_trace(root, rid, clock)
            agents = build_agents(root, trace, options)
        _note_clock(trace, clock)
        svc = _services(root, rid, meta, agents=agents, verifier=verifier, trace=trace, clock=clock, approve=approve)
        write_meta(root, meta)
        from orchestrator.gitaudit import AuditRepo

        AuditRepo(root).ensure()
        return _drive(root, rid, svc, {"op_dir": str(root), "run_id": rid}, prompt=prompt, on_update=on_update)


def replay(op_dir: Path | str, source: Path | str, *, agents: AgentSet | None = None,
           agents_spec: str | None = None, verifier: VerifierFn | None = None,
           clock: Callable[[], _dt.datetime] = utc_now, run_id: str | None = None, module_gate: bool = True,
           budget: int = 10, on_update: UpdateFn | None = None, fresh: bool = False) -> RunResult:
    """Run again with the human decisions (and, for model agents, the model calls) of a recorded trace.

    A replay starts from SPEC.md + golden.py: artifacts of an earlier run in the op dir would change the
    path (an existing valid design skips the design stage), so they make the replay refuse to start unless
    ``fresh`` moves them to ``.forge/previous/`` (nothing is deleted). Time is the recording's logical clock,
    so a replay rebuilds the recorded MEMORY.md, prompts and audit history byte for byte.

    Gate decisions come from ``trace.recorded_decision``; a gate the recording never decided stops the run
    there (approval mode ``stop``). The verification tool runs live, as in any run.
    """
    from agents.trace import Trace, TraceError

    root = Path(op_dir).resolve()
    opdir_bridge.load(root)
    if not Path(source).is_dir():
        raise ForgeError(f"recorded trace not found: {source}")
    _clear_previous_artifacts(root, fresh)
    if clock is utc_now:
        clock = _recorded_clock(Path(source))
    rid = run_id or _new_id(clock)
    try:
        trace = Trace(trace_dir(root, rid), run_id=rid, mode="replay", source=source, op_dir=root)
    except TraceError as exc:
        raise ForgeError(f"cannot replay {source}: {exc}") from exc
    if agents is None and not agents_spec:
        agents = build_agents(root, trace, None, mode="replay")
    result = run(root, agents=agents, agents_spec=agents_spec, approve="stop", verifier=verifier, trace=trace,
                 clock=clock, run_id=rid, module_gate=module_gate, budget=budget, on_update=on_update)
    return result.model_copy(update={"message": (result.message + " " if result.message else "")
                                     + f"(replayed {source}; verification ran live)",
                                     "divergences": _divergences(root, rid)})


def _divergences(root: Path, rid: str) -> list[str]:
    return [str(e.get("message")) for e in _trace_events(root, rid)
            if e.get("kind") == "error" and e.get("divergence")]


def resume(op_dir: Path | str, *, agents: AgentSet | None = None, verifier: VerifierFn | None = None,
           trace: TraceSink | None = None, clock: Callable[[], _dt.datetime] = utc_now,
           approve: ApproveMode | None = None, run_id: str | None = None, prompt: PromptFn | None = None,
           on_update: UpdateFn | None = None) -> RunResult:
    """Continue the latest run (or ``run_id``) from its last checkpoint.

    Raises:
        ForgeError: nothing to resume (no run, or the run already finished), run in progress.
    """
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(f"operator directory not found: {op_dir}")
    try:
        rid = run_id or latest_run(root)
    except ForgeError as exc:
        raise ForgeError(f"nothing to resume: {exc.message}") from exc
    meta = read_meta(root, rid)
    mode = approve or meta.approve  # type: ignore[assignment]
    if meta.clock_origin and clock is utc_now:  # continue the run's logical clock where it stopped
        clock = LogicalClock.resume(meta.clock_origin, run_dir(root, rid) / CLOCK_FILE)
    with RunLock(root, rid):
        snap_values, nxt, interrupts = _snapshot(root, rid)
        if not nxt and not interrupts:
            if snap_values.get("outcome"):
                raise ForgeError(f"nothing to resume: run {rid} already finished ({snap_values.get('outcome')})")
        svc = _services(root, rid, meta, agents=agents, verifier=verifier, trace=trace, clock=clock,
                        approve=mode)  # type: ignore[arg-type]
        if not snap_values:  # killed before the first checkpoint: start over under the same id
            return _drive(root, rid, svc, {"op_dir": str(root), "run_id": rid}, prompt=prompt, on_update=on_update)
        if interrupts:
            req = GateRequest.model_validate(interrupts[0])
            decision = _take_decision(root, rid, req)
            if decision is None and mode == "prompt" and prompt is not None:
                decision = prompt(req)
            if decision is None:
                close = getattr(svc.trace, "close", None)
                if callable(close):
                    close()
                return _result(root, rid, snap_values, req, svc).model_copy(update={
                    "message": f"still waiting at gate '{req.gate}': record a decision with "
                               f"`python -m orchestrator approve {op_dir}` or `reject ... --note`"})
            pending_path(root, rid).unlink(missing_ok=True)
            svc.answer_pending = True
            return _drive(root, rid, svc, Command(resume=decision.model_dump()), prompt=prompt, on_update=on_update)
        return _drive(root, rid, svc, None, prompt=prompt, on_update=on_update)


def _snapshot(root: Path, rid: str) -> tuple[dict, tuple, list]:
    db = checkpoint_db(root, rid)
    if not db.is_file():
        return {}, (), []
    with SqliteSaver.from_conn_string(str(db)) as saver:
        graph = compile_graph(saver)
        snap = graph.get_state({"configurable": {"thread_id": rid}})
        return dict(snap.values), tuple(snap.next), [i.value for i in snap.interrupts]


def _decide(op_dir: Path | str, decision: GateDecision, gate: str | None, run_id: str | None) -> GateRequest:
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(f"operator directory not found: {op_dir}")
    rid = run_id or latest_run(root)
    _, _, interrupts = _snapshot(root, rid)
    if not interrupts:
        raise ForgeError(f"run {rid} is not waiting at a gate; nothing to {decision.decision}")
    req = GateRequest.model_validate(interrupts[0])
    if gate and gate != req.gate:
        raise ForgeError(f"run {rid} waits at gate '{req.gate}', not '{gate}'")
    if req.gate == "blocked" and decision.decision in ("approve", "reject"):
        if decision.decision == "reject":
            decision = GateDecision(decision="abort", note=decision.note)
        else:
            raise ForgeError("the run is blocked: approve needs --choice hint|raise_budget|rollback|abort")
    if req.gate != "blocked" and decision.decision not in ("approve", "reject"):
        raise ForgeError(f"--choice applies to the blocked gate only (the run waits at '{req.gate}')")
    if decision.decision == "hint" and not decision.note.strip():
        raise ForgeError("a hint needs --note")
    decision_path(root, rid).write_text(json.dumps({"decision": decision.encoded(), "note": decision.note}) + "\n",
                                        encoding="utf-8")
    return req


def approve(op_dir: Path | str, *, gate: str | None = None, note: str = "", choice: str | None = None,
            budget: int | None = None, run_id: str | None = None) -> GateRequest:
    """Record approval (or a blocked-gate choice) for the waiting run; ``resume`` applies it."""
    dec = choice or "approve"
    if dec not in ("approve", "hint", "raise_budget", "rollback", "abort"):
        raise ForgeError(f"unknown choice {dec!r}: use hint, raise_budget, rollback or abort")
    return _decide(op_dir, GateDecision(decision=dec, note=note, budget=budget), gate, run_id)  # type: ignore[arg-type]


def reject(op_dir: Path | str, *, note: str, gate: str | None = None, run_id: str | None = None) -> GateRequest:
    """Record a rejection with a note for the agents; ``resume`` applies it."""
    if not note or not note.strip():
        raise ForgeError("reject needs --note \"...\" (the agents read it)")
    return _decide(op_dir, GateDecision(decision="reject", note=note), gate, run_id)


def status(op_dir: Path | str, *, run_id: str | None = None) -> RunResult:
    """Summary of the latest run: modules, attempts, verdicts, costs, where it waits."""
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(f"operator directory not found: {op_dir}")
    rid = run_id or latest_run(root)
    values, nxt, interrupts = _snapshot(root, rid)
    gate = GateRequest.model_validate(interrupts[0]) if interrupts else None
    res = _result(root, rid, values, gate, None, interrupted=bool(nxt) and not interrupts)
    holder = lock_holder(root)
    if res.status == "interrupted" and holder and holder.get("run_id") == rid:
        res.status = "running"
        res.message = f"run {rid} is in progress (pid {holder.get('pid')})"
    elif res.status == "interrupted":
        res.message = f"run {rid} stopped before {', '.join(nxt)}; continue it with `python -m orchestrator resume`"
    return res


def audit(op_dir: Path | str) -> AuditResult:
    """Check every verified transition in the op dir's audit history against its stored PASS report."""
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(f"operator directory not found: {op_dir}")
    if not (root / ".forge" / "git" / "HEAD").is_file():
        raise ForgeError(f"{op_dir} has no audit history (.forge/git); run it first")
    return _audit(root, verified_transitions(root))


def verified_transitions(root: Path) -> list[tuple[str, int, str]]:
    """(run id, module, report hash) of every transition to "verified" recorded in the run traces."""
    out = []
    for rid in list_runs(root):
        path = trace_dir(root, rid) / "events.jsonl"
        if not path.is_file():
            continue
        events = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue  # a torn last line after a crash
        by_seq = {e.get("seq"): e for e in events}
        for e in events:
            if e.get("kind") == "state_transition" and e.get("to") == "verified":
                just = by_seq.get(e.get("justified_by"), {})
                out.append((rid, int(e.get("module") or 0), str(just.get("report_hash") or "")))
    return out


class PruneResult(BaseModel):
    runs: int
    deleted: int
    kept: int


def prune(op_dir: Path | str, *, keep: int = 20) -> PruneResult:
    """Keep only the last ``keep`` checkpoints per thread in every run's checkpoints.sqlite."""
    if keep < 1:
        raise ForgeError("--keep must be at least 1 (the latest checkpoint is needed to resume)")
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(f"operator directory not found: {op_dir}")
    deleted = kept = runs = 0
    for rid in list_runs(root):
        db = checkpoint_db(root, rid)
        if not db.is_file():
            continue
        runs += 1
        con = sqlite3.connect(str(db))
        try:
            threads = [r[0] for r in con.execute("SELECT DISTINCT thread_id FROM checkpoints")]
            for tid in threads:
                ids = [r[0] for r in con.execute(
                    "SELECT checkpoint_id FROM checkpoints WHERE thread_id=? AND checkpoint_ns='' "
                    "ORDER BY checkpoint_id DESC", (tid,))]
                drop = ids[keep:]
                kept += len(ids) - len(drop)
                for cid in drop:
                    con.execute("DELETE FROM checkpoints WHERE thread_id=? AND checkpoint_id=?", (tid, cid))
                    con.execute("DELETE FROM writes WHERE thread_id=? AND checkpoint_id=?", (tid, cid))
                deleted += len(drop)
            con.commit()
            con.execute("VACUUM")
        finally:
            con.close()
    return PruneResult(runs=runs, deleted=deleted, kept=kept)
