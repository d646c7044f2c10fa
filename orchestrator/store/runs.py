"""Run bookkeeping on disk: run ids, ``run.json`` metadata, the pid lock, pending gates and decisions.

Why files: ``approve``/``reject`` run in a different process than the waiting run, and a killed run must
be resumable; the only shared medium is the op dir's ``.forge/`` folder.

Decisions are bound to a gate instance (:class:`orchestrator.gates.GateId`) and consumed once: the driver
claims ``decision.json`` by renaming it before reading, so two processes can never both apply it, and a
decision whose gate instance is not the one waiting is discarded with a message, never applied.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from orchestrator.command import cli_command, shell_path
from orchestrator.errors import ForgeError
from orchestrator.gates import ApproveMode, GateId, GateRequest, RecordedDecision
from orchestrator.store.paths import FORGE_DIR, LOCK_FILE, list_runs, run_dir


class RunMeta(BaseModel):
    """What ``resume`` needs to rebuild the services of a run."""

    run_id: str
    agents: str
    """``scripted:<abs script path>`` or ``factory`` (orchestrator.agent_factory.model_agents)."""
    approve: ApproveMode
    budget: int = 10
    module_gate: bool = True
    perf: bool = False
    """Run the performance stage after the final gate (``--perf``)."""
    perf_budget: int = 3
    toolchain_python: str | None = None
    require_sandbox: bool = False
    """Refuse to run model-written kernels without the OS sandbox (checked again on resume)."""
    verifier: str = "runtime"
    """``runtime`` (runtime.verify) or ``injected`` (tests; must be passed again on resume)."""
    model_options: dict[str, str] = Field(default_factory=dict)
    """CLI model choices (``model``, ``base_url``; never keys) so ``resume`` rebuilds the same agents."""
    clock_origin: str | None = None
    """Start of the run's logical clock (recorded model runs); ``resume`` continues it."""
    unseen_seed: int | None = None
    """Seed of the verifier's unseen cases for this run (runtime.opdir._unseen; drawn fresh for a new run,
    the recording's for a replay, kept on resume). Also in the trace manifest; never shown to agents."""
    created: str = ""
    inputs: dict[str, str] = Field(default_factory=dict)
    """sha256 of SPEC.md and golden.py when the run started (or when ``resume`` accepted an edit made before the
    run used the file): ``resume`` refuses to continue under another contract (orchestrator.core.edits). Empty
    for runs made before it was recorded (not checked)."""
    user_files: dict[str, str] = Field(default_factory=dict)
    """sha256 of the design files (DESIGN.md, module_interfaces.yaml) the user had put in the op dir when
    the run started: a later run tells the user's design from one an earlier run wrote."""


def new_run_id(now: datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(2)


def write_meta(op_dir: Path, meta: RunMeta) -> None:
    d = run_dir(op_dir, meta.run_id)
    d.mkdir(parents=True, exist_ok=True)
    (d / "run.json").write_text(meta.model_dump_json(indent=2) + "\n", encoding="utf-8")


def read_meta(op_dir: Path, run_id: str) -> RunMeta:
    """The run's ``run.json``.

    Raises:
        ForgeError: missing or damaged (one line naming the file and the first problem, never pydantic's
            multi-line dump): what the run was started with is unknown, so it cannot be continued.
    """
    path = run_dir(op_dir, run_id) / "run.json"
    try:
        return RunMeta.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ForgeError(f"run {run_id} cannot be read: {path} is {_meta_problem(exc)}, so how the run was started "
                         f"is unknown and it cannot be continued; start a new run with `{cli_command()} run "
                         f"{shell_path(op_dir)} --fresh` (the files of run {run_id} stay in {path.parent.relative_to(op_dir)}/)"
                         ) from None


def _meta_problem(exc: Exception) -> str:
    """One line for why run.json could not be read."""
    from pydantic import ValidationError

    if isinstance(exc, FileNotFoundError):
        return "missing"
    if isinstance(exc, OSError):
        return f"unreadable ({exc.strerror or exc})"
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"damaged ({where + ': ' if where else ''}{first.get('msg', 'invalid')}{more})"
    return f"damaged ({str(exc).splitlines()[0]})"


def latest_run(op_dir: Path, shown_as: str | None = None) -> str:
    """The id of the op dir's latest run; with none, the error says how to start one (``status``, ``approve``
    and ``resume`` of a folder that never ran said only "no run found", UX audit s44/s45)."""
    runs = [r for r in list_runs(op_dir) if (run_dir(op_dir, r) / "run.json").is_file()]
    if not runs:
        raise ForgeError(f"no run found under {op_dir / FORGE_DIR}; start a run with "
                         f"`{cli_command()} run {shell_path(shown_as if shown_as is not None else op_dir)}`")
    return runs[-1]


class RunLock:
    """``.forge/lock``: an exclusive ``flock`` held by the process that drives (or prepares) a run.

    Why ``flock``: two processes started at the same moment must not both pass the check (a read-then-write
    pid file let a ``run --fresh`` move a live run's files away); the kernel gives the lock to exactly one,
    and releases it when the holder dies (``kill -9`` leaves no stale lock). The file also says who holds it
    (pid, run id) for messages and ``status``. Re-entrant within one process (a replay started by ``run``).
    """

    _held: dict[Path, tuple[int, int]] = {}
    """This process's locks: path -> (fd, depth)."""

    def __init__(self, op_dir: Path, run_id: str) -> None:
        self.path = (Path(op_dir) / LOCK_FILE).resolve()
        self.run_id = run_id

    def __enter__(self) -> RunLock:
        if self.path in RunLock._held:
            fd, depth = RunLock._held[self.path]
            RunLock._held[self.path] = (fd, depth + 1)
            return self
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # UX audit s33: `prune` on a read-only op dir printed this as a traceback
            raise ForgeError(f"cannot take the run lock {self.path}: {exc.strerror or exc} (a read-only file system "
                             "or a directory you cannot write); copy the operator directory to a writable place to "
                             "continue or change its runs") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ForgeError(_in_progress(self.path.parent.parent, _read_holder(self.path))) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps({"pid": os.getpid(), "run_id": self.run_id}) + "\n").encode(), 0)
        RunLock._held[self.path] = (fd, 1)
        return self

    def __exit__(self, *exc: object) -> None:
        fd, depth = RunLock._held[self.path]
        if depth > 1:
            RunLock._held[self.path] = (fd, depth - 1)
            return
        del RunLock._held[self.path]
        try:  # the file stays (unlinking a locked file lets a third process lock a new inode beside it)
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # releases the flock


def _read_holder(path: Path) -> dict | None:
    try:
        held = json.loads(path.read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    return held if isinstance(held, dict) else None


def _locked_elsewhere(path: Path) -> bool:
    """Whether another process holds the flock (probed with a shared non-blocking lock, released at once)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _in_progress(op_dir: Path, held: dict | None) -> str:
    who = f"run {held.get('run_id')}, pid {held.get('pid')}" if held else "another process"
    # UX audit s44: "stop it first" did not say how, nor that stopping loses nothing
    how = f" (Ctrl-C in its terminal, or `kill {held.get('pid')}`: it stays resumable)" if held else ""
    return f"a run is already in progress in {op_dir} ({who}); wait for it or stop it first{how}"


def refuse_if_locked(op_dir: Path) -> None:
    """Raise what `RunLock` would raise when another process holds the op dir's run lock, without taking it
    (nothing is written): a new run says so before intake runs golden.py on every case (s35 UX audit)."""
    path = (Path(op_dir) / LOCK_FILE).resolve()
    if path not in RunLock._held and _locked_elsewhere(path):
        raise ForgeError(_in_progress(Path(op_dir).resolve(), _read_holder(path)))


def lock_holder(op_dir: Path) -> dict | None:
    """``{"pid", "run_id"}`` of the process holding the op dir's run lock (this one included), else None."""
    path = (Path(op_dir) / LOCK_FILE).resolve()
    if path not in RunLock._held and not _locked_elsewhere(path):
        return None
    return _read_holder(path) or {"pid": 0, "run_id": None}


def pending_path(op_dir: Path, run_id: str) -> Path:
    return run_dir(op_dir, run_id) / "pending_gate.json"


def decision_path(op_dir: Path, run_id: str) -> Path:
    return run_dir(op_dir, run_id) / "decision.json"


def stopped_path(op_dir: Path, run_id: str) -> Path:
    """Why a run stopped on a failure that is not the candidate's (golden.py, the op dir, the machine)."""
    return run_dir(op_dir, run_id) / "stopped.json"


def write_json_atomic(path: Path, data: object, *, indent: int | None = 2) -> None:
    """Write JSON so that a reader never sees half a file (temp file + rename; the temp file is removed when the
    write fails). ``indent=None``: compact (the run's copies of its checkpoints, read by programs only)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=indent) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_json(path: Path) -> dict | None:
    """A JSON object file, or None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_pending(op_dir: Path, run_id: str) -> dict | None:
    """The pending-gate record (``request`` + ``holder``) of a waiting run, or None."""
    try:
        return json.loads(pending_path(op_dir, run_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_pending(op_dir: Path, run_id: str, req: GateRequest, *, interactive: bool) -> None:
    """Mark the gate as open; ``interactive`` means this process is asking a human at a terminal now."""
    write_json_atomic(pending_path(op_dir, run_id), {
        "request": req.model_dump(), "gate_id": req.gate_id(run_id).model_dump(),
        "holder": {"pid": os.getpid(), "interactive": interactive}})


def read_decision(op_dir: Path, run_id: str) -> RecordedDecision | None:
    """The decision recorded for the run, if any (not consumed)."""
    path = decision_path(op_dir, run_id)
    try:
        return RecordedDecision.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def record_decision(op_dir: Path, run_id: str, decision: RecordedDecision) -> None:
    """Write ``decision.json``; refuses when a decision for the same gate instance is already waiting."""
    existing = read_decision(op_dir, run_id)
    if existing is not None and existing.for_gate == decision.for_gate:
        raise ForgeError(f"a decision ({existing.decision}) is already recorded for gate "
                         f"{existing.for_gate.label()} of run {run_id}; `{cli_command()} resume "
                         f"{shell_path(op_dir)}` applies it (a decision is taken once)")
    write_json_atomic(decision_path(op_dir, run_id), decision.model_dump())


def take_decision(op_dir: Path, run_id: str, gate: GateId) -> tuple[dict | None, str]:
    """Consume the recorded decision for ``gate``: ``(raw decision, "")`` or ``(None, why not)``.

    The file is claimed by an atomic rename first, so it is applied at most once even if two processes
    race. A decision bound to another gate instance (the gate it was given for has closed) or to no gate
    at all is discarded and the reason returned; nothing is applied.
    """
    path = decision_path(op_dir, run_id)
    claimed = path.with_name(f"decision.taken-{os.getpid()}.json")
    try:
        os.rename(path, claimed)
    except FileNotFoundError:
        return None, ""
    try:
        text = claimed.read_text(encoding="utf-8")
    finally:
        claimed.unlink(missing_ok=True)
    try:
        rec = RecordedDecision.model_validate_json(text)
    except ValueError:
        return None, (f"ignored {path.name}: it names no gate instance (record decisions with "
                      f"`{cli_command()} approve|reject`)")
    if rec.for_gate != gate:
        return None, (f"ignored a decision ({rec.decision}) recorded for gate {rec.for_gate.label()}: that gate "
                      f"has closed; the run now waits at gate {gate.label()}")
    return {"decision": rec.decision, "note": rec.note}, ""
