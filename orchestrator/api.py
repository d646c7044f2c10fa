"""The orchestrator's library API; the CLI (``orchestrator/cli``) is a thin layer over it.

``run`` starts a run, ``resume`` continues the latest one (after a crash, a stop or at a gate), ``approve``
/ ``reject`` record a human decision for the gate instance a run waits at, ``status`` summarises, ``audit``
proves the git history, ``prune`` bounds checkpoint growth, ``show`` / ``report`` render stored results.
Every user mistake raises :class:`ForgeError`.

This module is the facade over the layers (docs/architecture.md): :mod:`orchestrator.core.driver` (streams
the graph, gates, stops, signals), :mod:`orchestrator.core.snapshot` (a run's state from its checkpoints),
:mod:`orchestrator.core.clock_policy` (which clock a run reads), :mod:`orchestrator.store.results` (RunResult,
status, trace queries), :mod:`orchestrator.store.runs` (run files: meta, lock, pending gate, decisions),
:mod:`orchestrator.store.checkpoints` (pruning).
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from langgraph.types import Command

from agents.contracts import AgentSet, TraceSink
from orchestrator.agent_factory import agents_from_spec, model_agents, model_configured, preflight
from orchestrator.core import opdir_bridge
from orchestrator.core.clock_policy import CLOCK_FILE, make_trace, new_id, note_clock, recorded_clock
from orchestrator.core.driver import PromptFn, StartFn, UpdateFn, drive
from orchestrator.core.logical_clock import LogicalClock
from orchestrator.core.services import ApproveMode, Services, VerifierFn, utc_now
from orchestrator.core.snapshot import snapshot
from orchestrator.errors import ForgeError, RunStopped
from orchestrator.gates import GateDecision, GateRequest, RecordedDecision, parse_decision
from orchestrator.store.checkpoints import PruneResult
from orchestrator.store.checkpoints import prune as _prune
from orchestrator.store.gitaudit import HistoryAudit
from orchestrator.store.gitaudit import audit as _audit
from orchestrator.store.paths import list_runs, run_dir, sha256_file
from orchestrator.store.results import (
    ModuleSummary,
    RunResult,
    build_result,
    divergences,
    run_status,
    verified_transitions,
)
from orchestrator.store.runs import (
    RunLock,
    RunMeta,
    latest_run,
    lock_holder,
    pending_path,
    read_meta,
    record_decision,
    take_decision,
    write_meta,
    write_pending,
)

__all__ = [
    "DEFAULT_TRACE", "ModuleSummary", "PromptFn", "PruneResult", "RunResult", "RunStopped", "StartFn", "UpdateFn",
    "approve", "audit", "copy_op_inputs", "describe_agents", "prune", "reject", "replay", "resume", "run",
    "status", "verified_transitions",
]

log = logging.getLogger(__name__)

DEFAULT_TRACE = Path("traces") / "default"
"""The shipped trace that ``run`` replays when no model is configured."""
PRODUCED = ("DESIGN.md", "module_interfaces.yaml", "MEMORY.md", "README.md", "modules")
DESIGN_FILES = ("DESIGN.md", "module_interfaces.yaml")
"""Design files a user may provide (a valid design skips the design stage); a run may also write them."""
OP_INPUTS = ("SPEC.md", "golden.py")
"""What the user writes; a fresh run (and every replay) starts from these alone."""
INTAKE_TIMEOUT_S = 30.0
"""Seconds per case the golden run may take at ``run`` intake (an endless loop is reported, not waited on)."""


def _default_verifier() -> VerifierFn:
    from orchestrator.core.verifier_bridge import real_verifier

    return real_verifier


def _services(op_dir: Path, run_id: str, meta: RunMeta, *, agents: AgentSet | None, verifier: VerifierFn | None,
              trace: TraceSink | None, clock: Callable[[], _dt.datetime], approve: ApproveMode) -> Services:
    trace = trace or make_trace(op_dir, run_id, clock)
    if agents is None:
        agents = agents_from_spec(meta.agents, op_dir, trace, meta.model_options)
    if verifier is None:
        if meta.verifier != "runtime":
            raise ForgeError(f"run {run_id} used an injected verifier; pass it again to resume")
        verifier = _default_verifier()
    return Services(agents=agents, verifier=verifier, trace=trace, clock=clock, approve=approve,
                    module_gate=meta.module_gate, budget=meta.budget, perf=meta.perf, perf_budget=meta.perf_budget,
                    toolchain_python=meta.toolchain_python)


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


# ------------------------------------------------------------------------------------------ before a run

def check_op_dir(root: Path, *, on_start: StartFn | None = None) -> None:
    """Refuse what ``intake`` refuses, before any agent runs and before anything is written.

    Raises:
        ForgeError: missing or read-only dir, invalid SPEC.md / golden.py, a golden that raises, loops,
            returns the wrong shape or NaN, or cases too large for this machine (intake's messages).
    """
    opdir_bridge.load(root)
    if not os.access(root, os.W_OK) or not _writable(root):
        raise ForgeError(f"operator directory {root} is read-only: a run writes its artifacts and .forge/ there; "
                         "copy it to a writable place")
    from runtime.opdir import intake

    if on_start is not None:
        on_start("intake", {})
    report = intake(root, timeout=INTAKE_TIMEOUT_S)
    if not report.ok:
        lines = []
        for p in report.problems[:8]:
            where = p.file if p.line is None else f"{p.file}:{p.line}"
            lines.append(f"  {where}: {p.field + ': ' if p.field else ''}{p.message}")
        more = f"\n  ... {len(report.problems) - 8} more (`python -m orchestrator intake {root}`)" \
            if len(report.problems) > 8 else ""
        raise ForgeError(f"intake refused {root} ({len(report.problems)} problem(s)); nothing was run:\n"
                         + "\n".join(lines) + more)


def _writable(root: Path) -> bool:
    """Really try (root passes ``os.access`` even on a read-only mount)."""
    probe = root / f".forge-write-probe-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
        return True
    except OSError:
        return False


def _design_hashes(root: Path) -> dict[str, str]:
    return {n: h for n in DESIGN_FILES if (h := sha256_file(root / n)) is not None}


def _user_design_hashes(root: Path) -> set[str]:
    """Hashes of design files that earlier runs found in the op dir before they started (the user's)."""
    found: set[str] = set()
    for rid in list_runs(root):
        try:
            found |= set(read_meta(root, rid).user_files.values())
        except ForgeError:
            continue
    return found


def _produced_artifacts(root: Path, *, keep_user_design: bool) -> list[Path]:
    """Files an earlier run produced. With ``keep_user_design``, design files the user provided are not
    among them: the first run recorded their hashes as the user's (``RunMeta.user_files``); a design file
    in an op dir that has had runs is the user's only if its hash is one of those."""
    names = list(PRODUCED)
    try:
        names.append(f"{opdir_bridge.load(root).op_name}_impl.py")
    except ForgeError:
        pass
    found = [root / n for n in names if (root / n).exists()]
    if keep_user_design:
        had_runs = bool(list_runs(root))
        users = _user_design_hashes(root)
        found = [p for p in found if not (p.name in DESIGN_FILES and (not had_runs or sha256_file(p) in users))]
    return found


def _clear_previous_artifacts(root: Path, fresh: bool, *, keep_user_design: bool = False,
                              what: str = "a replay starts from SPEC.md + golden.py") -> None:
    found = _produced_artifacts(root, keep_user_design=keep_user_design)
    if not found:
        return
    listed = ", ".join(p.name for p in found)
    if not fresh:
        raise ForgeError(f"{root} holds artifacts of an earlier run ({listed}); {what}: pass --fresh to move "
                         "them to .forge/previous/ first")
    dest = root / ".forge" / "previous" / utc_now().strftime("%Y%m%dT%H%M%S%f")
    dest.mkdir(parents=True)
    for p in found:
        p.rename(dest / p.name)
    log.info("moved %s to %s", listed, dest)


# ------------------------------------------------------------------------------------------------- runs

def run(op_dir: Path | str, *, agents: AgentSet | None = None, agents_spec: str | None = None,
        approve: ApproveMode = "prompt", verifier: VerifierFn | None = None, trace: TraceSink | None = None,
        clock: Callable[[], _dt.datetime] = utc_now, budget: int = 10, module_gate: bool = True,
        run_id: str | None = None, prompt: PromptFn | None = None, on_update: UpdateFn | None = None,
        on_start: StartFn | None = None, model_options: dict | None = None, fresh: bool = False,
        check_intake: bool = True, perf: bool = False, perf_budget: int = 3,
        toolchain_python: str | None = None) -> RunResult:
    """Start a new run on ``op_dir`` (``perf``: performance stage after the final gate, docs/performance.md).

    Agents: ``agents`` (injected), ``agents_spec`` (``scripted:<script.yaml>``), else the configured model
    (``model_options``, ``FORGE_MODEL*``, forge.toml), recorded into the run's trace; with no model configured
    and a shipped trace in ``<op_dir>/traces/default``, the run replays it (see :func:`replay`).

    Before anything is written the op dir goes through intake (:func:`check_op_dir`; ``check_intake=False``
    only when the caller has just done it), and an op dir holding an earlier run's artifacts (a delivered
    kernel, a design an earlier run wrote) is refused unless ``fresh`` moves them to ``.forge/previous/``; a
    design the user provided stays and is used.

    Raises:
        ForgeError: invalid op dir, a run already in progress, unknown agents, no model configured.
    """
    root = Path(op_dir).resolve()
    if approve not in ("prompt", "auto", "stop"):
        raise ForgeError(f"unknown approval mode {approve!r}: use prompt, auto or stop")
    if agents is None and not agents_spec:
        opdir_bridge.load(root)
        kind, why = describe_agents(root, model_options)
        if kind == "replay":  # no model configured: the op dir's shipped trace plays the agents
            return replay(root, root / DEFAULT_TRACE, verifier=verifier, run_id=run_id, module_gate=module_gate,
                          budget=budget, fresh=fresh, on_update=on_update, on_start=on_start)
        if kind == "none":
            raise ForgeError(why)
    if check_intake:
        check_op_dir(root, on_start=on_start)
        _clear_previous_artifacts(root, fresh, keep_user_design=True,
                                  what="a new run starts from SPEC.md + golden.py (and a design you provide)")
    rid = run_id or new_id(clock)
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
                   created=clock().isoformat(), user_files=_design_hashes(root), perf=perf, perf_budget=perf_budget,
                   toolchain_python=toolchain_python)
    if agents is None:
        preflight(spec, root, options)
    with RunLock(root, rid):
        run_dir(root, rid).mkdir(parents=True, exist_ok=True)
        if agents is None and spec == "factory":
            trace = trace or make_trace(root, rid, clock)
            agents = model_agents(root, trace, options)
        note_clock(trace, clock)
        svc = _services(root, rid, meta, agents=agents, verifier=verifier, trace=trace, clock=clock, approve=approve)
        write_meta(root, meta)
        from orchestrator.store.gitaudit import AuditRepo

        AuditRepo(root).ensure()
        return drive(root, rid, svc, {"op_dir": str(root), "run_id": rid}, prompt=prompt, on_update=on_update,
                     on_start=on_start)


def replay(op_dir: Path | str, source: Path | str, *, agents: AgentSet | None = None,
           agents_spec: str | None = None, verifier: VerifierFn | None = None,
           clock: Callable[[], _dt.datetime] = utc_now, run_id: str | None = None, module_gate: bool = True,
           budget: int = 10, on_update: UpdateFn | None = None, on_start: StartFn | None = None,
           fresh: bool = False) -> RunResult:
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
    if not Path(source).is_dir():
        opdir_bridge.load(root)
        raise ForgeError(f"recorded trace not found: {source}")
    check_op_dir(root, on_start=on_start)
    _clear_previous_artifacts(root, fresh)
    if clock is utc_now:
        clock = recorded_clock(Path(source))
    rid = run_id or new_id(clock)
    if isinstance(clock, LogicalClock):  # persisted, so a replay stopped at a gate resumes at the right time
        clock = LogicalClock(clock.origin, state_file=run_dir(root, rid) / CLOCK_FILE)
    try:
        trace = Trace(run_dir(root, rid) / "trace", run_id=rid, mode="replay", source=source, op_dir=root)
    except TraceError as exc:
        raise ForgeError(f"cannot replay {source}: {exc}") from exc
    trace.update_manifest(replay_of=str(Path(source).resolve()))  # lets `resume` continue a stopped replay
    if agents is None and not agents_spec:
        agents = model_agents(root, trace, None, mode="replay")
    result = run(root, agents=agents, agents_spec=agents_spec, approve="stop", verifier=verifier, trace=trace,
                 clock=clock, run_id=rid, module_gate=module_gate, budget=budget, on_update=on_update,
                 on_start=on_start, check_intake=False)
    return result.model_copy(update={"message": (result.message + " " if result.message else "")
                                     + f"(replayed {source}; verification ran live)",
                                     "divergences": divergences(root, rid)})


def _replay_agents(root: Path, rid: str) -> tuple[AgentSet, TraceSink]:
    """Agents for resuming a replay that stopped at a gate: the same recorded trace, strict replay again."""
    import json

    from agents.trace import Trace, TraceError

    tdir = run_dir(root, rid) / "trace"
    try:
        source = json.loads((tdir / "manifest.json").read_text(encoding="utf-8")).get("replay_of")
    except (OSError, ValueError):
        source = None
    if not source or not Path(source).is_dir():
        raise ForgeError(f"run {rid} used agents given in code, which resume cannot rebuild: start it again with "
                         f"`python -m orchestrator run {root} --fresh`")
    try:
        trace = Trace(tdir, run_id=rid, mode="replay", source=source, op_dir=root)
    except TraceError as exc:
        raise ForgeError(f"cannot resume the replay of {source}: {exc}") from exc
    return model_agents(root, trace, None, mode="replay"), trace


def resume(op_dir: Path | str, *, agents: AgentSet | None = None, verifier: VerifierFn | None = None,
           trace: TraceSink | None = None, clock: Callable[[], _dt.datetime] = utc_now,
           approve: ApproveMode | None = None, run_id: str | None = None, prompt: PromptFn | None = None,
           on_update: UpdateFn | None = None, on_start: StartFn | None = None) -> RunResult:
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
    if agents is None and trace is None and meta.agents == "injected":
        agents, trace = _replay_agents(root, rid)
    with RunLock(root, rid):
        snap_values, nxt, interrupts = snapshot(root, rid)
        if not nxt and not interrupts:
            if snap_values.get("outcome"):
                raise ForgeError(f"nothing to resume: run {rid} already finished ({snap_values.get('outcome')})")
        svc = _services(root, rid, meta, agents=agents, verifier=verifier, trace=trace, clock=clock,
                        approve=mode)  # type: ignore[arg-type]
        if not snap_values:  # killed before the first checkpoint: start over under the same id
            return drive(root, rid, svc, {"op_dir": str(root), "run_id": rid}, prompt=prompt, on_update=on_update,
                         on_start=on_start)
        if interrupts:
            req = GateRequest.model_validate(interrupts[0])
            raw, why = take_decision(root, rid, req.gate_id(rid))
            decision = parse_decision(raw, req.gate) if raw is not None else None
            if decision is None and mode == "prompt" and prompt is not None:
                write_pending(root, rid, req, interactive=True)
                decision = prompt(req)
            if decision is None:
                write_pending(root, rid, req, interactive=False)
                svc.trace.close()
                hint = (f"still waiting at gate '{req.gate}' ({req.gate_id(rid).label()}): record a decision with "
                        f"`python -m orchestrator approve {op_dir}` or `reject ... --note`")
                return build_result(root, rid, snap_values, req).model_copy(update={
                    "message": f"{why}; {hint}" if why else hint})
            pending_path(root, rid).unlink(missing_ok=True)
            svc.answer_pending = True
            return drive(root, rid, svc, Command(resume=decision.model_dump()), prompt=prompt, on_update=on_update,
                         on_start=on_start)
        return drive(root, rid, svc, None, prompt=prompt, on_update=on_update, on_start=on_start)


# -------------------------------------------------------------------------------------------- decisions

def _decide(op_dir: Path | str, decision: GateDecision, gate: str | None, run_id: str | None) -> GateRequest:
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(f"operator directory not found: {op_dir}")
    rid = run_id or latest_run(root)
    holder = lock_holder(root)
    _, _, interrupts = snapshot(root, rid)
    if holder and holder.get("run_id") == rid and int(holder.get("pid", 0)) != os.getpid():
        where = ""
        if interrupts:
            req = GateRequest.model_validate(interrupts[0])
            where = f" waiting at gate {req.gate_id(rid).label()}"
        raise ForgeError(f"run {rid} is in progress{where} in another terminal (pid {holder.get('pid')}): "
                         "answer at its prompt there; a decision recorded here could land on a later gate")
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
    record_decision(root, rid, RecordedDecision(decision=decision.encoded(), note=decision.note,
                                                for_gate=req.gate_id(rid), recorded=utc_now().isoformat()))
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
        raise ForgeError(f"unknown choice {dec!r}: use hint, raise_budget, rollback or abort")
    if budget is not None and budget < 1:
        raise ForgeError("--budget must be at least 1")
    return _decide(op_dir, GateDecision(decision=dec, note=note, budget=budget), gate, run_id)  # type: ignore[arg-type]


def reject(op_dir: Path | str, *, note: str, gate: str | None = None, run_id: str | None = None) -> GateRequest:
    """Record a rejection with a note for the agents; ``resume`` applies it."""
    if not note or not note.strip():
        raise ForgeError("reject needs --note \"...\" (the agents read it)")
    return _decide(op_dir, GateDecision(decision="reject", note=note), gate, run_id)


# ---------------------------------------------------------------------------------------------- queries

def status(op_dir: Path | str, *, run_id: str | None = None) -> RunResult:
    """Summary of the latest run: modules, attempts, verdicts, costs, where it waits, pending decisions."""
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(f"operator directory not found: {op_dir}")
    rid = run_id or latest_run(root)
    return run_status(root, rid, *snapshot(root, rid), shown_as=str(op_dir))


def audit(op_dir: Path | str) -> HistoryAudit:
    """Check every verified transition in the op dir's audit history against its stored PASS report."""
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(f"operator directory not found: {op_dir}")
    if not (root / ".forge" / "git" / "HEAD").is_file():
        raise ForgeError(f"{op_dir} has no audit history (.forge/git); run it first")
    return _audit(root, verified_transitions(root))


def prune(op_dir: Path | str, *, keep: int = 20) -> PruneResult:
    """Keep only the last ``keep`` checkpoints per thread in every run's checkpoints.sqlite."""
    if keep < 1:
        raise ForgeError("--keep must be at least 1 (the latest checkpoint is needed to resume)")
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(f"operator directory not found: {op_dir}")
    return _prune(root, keep)
