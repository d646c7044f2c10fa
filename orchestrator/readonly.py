"""The read-only side of the facade: what ``status``, ``show --gate``, ``report`` and ``audit`` need, without
loading the pipeline.

Why a module of its own: :mod:`orchestrator.api` imports the graph, the nodes, the agents and the verifier
(~2 s of CPU on a loaded machine, UX audit s45) - right for ``run``, not for a command that reads a few files.
:func:`status` reads the run's state from the copy the driver keeps of its latest checkpoint
(:mod:`orchestrator.store.status_cache`) and falls back to the checkpoints themselves (LangGraph, loaded only
then) whenever that copy is missing or not of the latest checkpoint (:func:`run_state`; :func:`run_history` the
same for the node timeline). ``orchestrator.api.status`` and ``orchestrator.api.audit`` are these ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.errors import ForgeError, no_op_dir
from orchestrator.store.results import RunResult, run_status
from orchestrator.store.runs import latest_run, read_meta
from orchestrator.store.status_cache import read_cached, read_history_cached, remember, remember_history

if TYPE_CHECKING:
    from orchestrator.store.gitaudit import HistoryAudit


def status(op_dir: Path | str, *, run_id: str | None = None) -> RunResult:
    """Summary of the latest run: modules, attempts, verdicts, costs, where it waits, pending decisions."""
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(no_op_dir(op_dir))
    rid = run_id or latest_run(root, str(op_dir))
    read_meta(root, rid)  # a damaged run.json is said at once, not found by the resume it would break
    return run_status(root, rid, *run_state(root, rid), shown_as=str(op_dir))


def run_state(root: Path, rid: str) -> tuple[dict, tuple, list]:
    """``(state values, next nodes, interrupt payloads)`` of the run's latest checkpoint, as
    :func:`orchestrator.core.snapshot.snapshot` gives them: from the copy while it is of that checkpoint, else
    read through LangGraph (and the copy refreshed). Values read from the copy are JSON (a ``Verdict`` is its
    string; every reader compares them as strings)."""
    state = read_cached(root, rid)
    if state is None:
        from orchestrator.core.snapshot import snapshot  # LangGraph: only when the copy cannot answer

        state = remember(root, rid, lambda: snapshot(root, rid))
    return state


def run_history(root: Path, rid: str) -> list[dict]:
    """The run's node timeline (:func:`orchestrator.core.snapshot.history`), from its copy while no checkpoint of
    the run changed, else read through LangGraph (and the copy refreshed)."""
    rows = read_history_cached(root, rid)
    if rows is None:
        from orchestrator.core.snapshot import history  # LangGraph: only when the copy cannot answer

        rows = remember_history(root, rid, lambda: history(root, rid))
    return rows


def audit(op_dir: Path | str) -> HistoryAudit:
    """Check every verified transition in the op dir's audit history against its stored PASS report.

    Reads the audit git dir, the traces and the stored reports; no checkpoint (``audit`` loaded the whole
    pipeline through orchestrator.api for none of it, ~2.5 s, UX audit s46)."""
    from orchestrator.store.gitaudit import audit as audit_history
    from orchestrator.store.results import verified_transitions

    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(no_op_dir(op_dir))
    if not (root / ".forge" / "git" / "HEAD").is_file():
        raise ForgeError(f"{op_dir} has no audit history (.forge/git); run it first")
    return audit_history(root, verified_transitions(root))
