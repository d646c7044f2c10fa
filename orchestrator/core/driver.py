"""The gate driver: stream the graph until it finishes, waits at a gate, stops, or is interrupted.

A gate the recording did not decide is answered in one place, :func:`answer_gate`: ``decision.json``
(recorded by ``approve``/``reject`` for that exact gate instance, consumed once), the approval mode
``auto``, or the interactive prompt; else the run waits there (``run``, ``resume`` and replays alike). A failure that is not the candidate's
(:class:`RunStopped`: golden.py, the op dir, the machine) ends the drive with its cause and leaves the
run resumable at the node that failed. Whatever ends the drive (a result, an exception, Ctrl-C, SIGTERM,
a closed pipe) the run's private temp dir is removed and no child process is left running.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from langgraph.types import Command

from orchestrator.command import cli_command, shell_path
from orchestrator.core.graph import compile_graph
from orchestrator.core.services import Services
from orchestrator.core.snapshot import history, snapshot
from orchestrator.errors import RunStopped
from orchestrator.gates import (
    AnswerSource,
    ApproveMode,
    GateDecision,
    GateRequest,
    parse_decision,
    resume_value,
)
from orchestrator.store.artifacts import snapshot_design
from orchestrator.store.checkpoints import RunSaver
from orchestrator.store.paths import checkpoint_db
from orchestrator.store.results import RunResult, build_result
from orchestrator.store.runs import (
    pending_path,
    stopped_path,
    take_decision,
    write_json_atomic,
    write_pending,
)
from orchestrator.store.status_cache import remember, remember_history

log = logging.getLogger(__name__)

PromptFn = Callable[[GateRequest], GateDecision | None]
"""Asks a human at a gate; None leaves the run waiting there (e.g. no terminal)."""
UpdateFn = Callable[[dict], None]
"""Called with the state after every node."""
StartFn = Callable[[str, dict], None]
"""Called with a node's name and its input state when the node starts (live progress)."""


def drive(op_dir: Path, run_id: str, svc: Services, first_input: object, *, prompt: PromptFn | None,
          on_update: UpdateFn | None, on_start: StartFn | None = None, notices: list[str] | None = None,
          shown_as: str | None = None) -> RunResult:
    """Drive the run; always closes the trace, removes the run's temp dir and leaves no child running."""
    present = _children()  # the caller's own children (a Ray cluster in a campaign, a notebook's) are not the run's
    saved_tempdir, saved_env = tempfile.tempdir, os.environ.get("TMPDIR")
    private_tmp = tempfile.mkdtemp(prefix=f"forge-run-{run_id}-")
    tempfile.tempdir = private_tmp  # golden runs, sandboxes and bisects make their temp dirs in here
    os.environ["TMPDIR"] = private_tmp
    clean = False
    try:
        result = _drive_graph(op_dir, run_id, svc, first_input, prompt=prompt, on_update=on_update,
                              on_start=on_start, notices=list(notices or []), shown_as=shown_as or str(op_dir))
        clean = True
        _keep_status(op_dir, run_id)
        return result
    finally:
        if not clean:
            reap_children(spare=present)
        svc.trace.close()
        tempfile.tempdir = saved_tempdir
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env
        _join_helpers()
        shutil.rmtree(private_tmp, ignore_errors=True)


def _keep_status(op_dir: Path, run_id: str) -> None:
    """A copy of the stopped run's state for ``status``, ``show --gate`` and ``approve``, and of its timeline for
    ``report`` (orchestrator.store.status_cache: they read them without loading LangGraph; the timeline of the
    demo's delivered run is ~0.05 s to read here, with the graph loaded). Never fails the run: without the
    copies, those commands read the checkpoints."""
    try:
        remember(op_dir, run_id, lambda: snapshot(op_dir, run_id))
        remember_history(op_dir, run_id, lambda: history(op_dir, run_id))
    except Exception:  # noqa: BLE001 - e.g. a checkpoint made unreadable meanwhile: status says so itself
        log.debug("no status copy for run %s", run_id, exc_info=True)


def answer_gate(op_dir: Path, run_id: str, req: GateRequest, approve: ApproveMode,
                prompt: PromptFn | None) -> tuple[GateDecision | None, AnswerSource, str]:
    """Who answers a gate the recording did not decide: ``(decision or None, source, notice)``.

    In order: a decision recorded for this gate instance with ``approve``/``reject`` (consumed once), the
    approval mode ``auto`` (approve; abort at the blocked gate), the terminal prompt (mode ``prompt``).
    None leaves the run waiting at the gate. The notice says why a recorded decision was not applied.
    """
    raw, why = take_decision(op_dir, run_id, req.gate_id(run_id))
    if raw is not None:
        return parse_decision(raw, req.gate), "human", why
    if approve == "auto":
        return GateDecision(decision="abort" if req.gate == "blocked" else "approve", note="auto"), "auto", why
    if approve == "prompt" and prompt is not None:
        write_pending(op_dir, run_id, req, interactive=True)
        decision = prompt(req)
        if decision is not None:
            return decision, "human", why
    return None, "human", why


def _drive_graph(op_dir: Path, run_id: str, svc: Services, first_input: object, *, prompt: PromptFn | None,
                 on_update: UpdateFn | None, on_start: StartFn | None, notices: list[str], shown_as: str) -> RunResult:
    transitions = 0
    stopped_path(op_dir, run_id).unlink(missing_ok=True)
    with RunSaver.from_conn_string(str(checkpoint_db(op_dir, run_id))) as saver:  # node writes + checkpoint: 1 commit
        graph = compile_graph(saver)
        config = {"configurable": {"thread_id": run_id}, "recursion_limit": 100_000}
        inp = first_input
        # resuming a run that waits at a gate: answer that gate first (nothing to stream until then)
        at_gate = first_input is None and bool(graph.get_state(config).interrupts)
        resumed_at_gate = at_gate
        while True:
            if not at_gate:
                try:
                    for mode, chunk in graph.stream(inp, config, context=svc, stream_mode=["values", "tasks"],
                                                    durability="sync"):
                        if mode == "tasks":
                            if on_start is not None and "input" in chunk and isinstance(chunk.get("input"), dict):
                                on_start(str(chunk.get("name")), chunk["input"])
                            continue
                        transitions += 1 if chunk.get("node") else 0  # the initial input is not a transition
                        if on_update is not None:
                            on_update(chunk)
                except RunStopped as exc:
                    svc.trace.emit("error", node="stopped", message=exc.message, cause=exc.cause)
                    svc.trace.flush()
                    write_json_atomic(stopped_path(op_dir, run_id), {"cause": exc.cause, "message": exc.message})
                    values = dict(graph.get_state(config).values)
                    return build_result(op_dir, run_id, values, None, svc.timers, transitions, stopped=exc.message,
                                        message=_join(notices))
            at_gate = False
            snap = graph.get_state(config)
            values = dict(snap.values)
            if not snap.interrupts:
                svc.trace.flush()
                pending_path(op_dir, run_id).unlink(missing_ok=True)
                return build_result(op_dir, run_id, values, None, svc.timers, transitions, message=_join(notices))
            req = GateRequest.model_validate(snap.interrupts[0].value)
            pending = pending_path(op_dir, run_id)
            if req.gate == "design":
                snapshot_design(op_dir, run_id, req.seq)
            if not pending.exists():
                svc.trace.emit("interrupt", node=f"gate_{req.gate}", module=req.module, gate=req.gate,
                               payload={"title": req.title, "choices": req.choices})
            svc.trace.flush()
            decision, source, why = answer_gate(op_dir, run_id, req, svc.config.approve, prompt)
            if why:
                notices.append(why)
            if decision is None:
                write_pending(op_dir, run_id, req, interactive=False)
                if resumed_at_gate:
                    # UX audit s48: at the blocked gate this named `approve op` / `reject`, both refused there
                    how = (f"`{cli_command()} approve {shell_path(shown_as)} --choice hint|raise_budget|rollback|abort`"
                           if req.gate == "blocked" else
                           f"`{cli_command()} approve {shell_path(shown_as)}` or `reject ... --note`")
                    notices.append(f"still waiting at gate '{req.gate}' ({req.gate_id(run_id).label()}): record a "
                                   f"decision with {how}")
                return build_result(op_dir, run_id, values, req, svc.timers, transitions, message=_join(notices))
            pending.unlink(missing_ok=True)
            resumed_at_gate = False
            inp = Command(resume=resume_value(decision, source))


def _join(notices: list[str]) -> str:
    return "; ".join(dict.fromkeys(notices))


def _children() -> dict[int, str]:
    """This process's live children: pid -> start time (clock ticks since boot, from /proc; a reused pid differs)."""
    me = os.getpid()
    out: dict[int, str] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:  # no procfs: nothing we can enumerate
        return out
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) < 20 or int(fields[1]) != me or fields[0] == "Z":
            continue
        out[int(name)] = fields[19]
    return out


def reap_children(spare: dict[int, str] | None = None) -> list[int]:
    """Kill every child process of this process still alive (with its process group when it leads one), but those
    in ``spare`` (the children the caller had before the run began).

    The safety net behind each subprocess runner's own cleanup: a child started in its own session (the
    golden run, the sandbox) does not get the terminal's Ctrl-C, so an interrupted run must end it itself. Only the
    run's own: ``orchestrator.api.run`` called in a process that has other children (a test worker holding an
    embedded Ray cluster, a notebook) killed them all - Ray's GCS and raylet went, and the process with them (the
    slow tier's xdist worker crashed, session 30).
    """
    killed: list[int] = []
    for pid, start in _children().items():
        if spare and spare.get(pid) == start:
            continue
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except (ProcessLookupError, PermissionError):
            continue
    if killed:
        log.info("stopped %d child process(es) left by the interrupted run: %s", len(killed), killed)
    return killed


def _join_helpers(timeout: float = 3.0) -> None:
    """Give helper threads (the golden run beside the candidate) a moment to clean up after their child died."""
    for t in threading.enumerate():
        if t is not threading.current_thread() and t.name == "golden" and t.is_alive():
            t.join(timeout)
