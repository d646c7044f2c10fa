"""The read-only side of the facade: what ``status`` needs, without loading the pipeline.

Why a module of its own: :mod:`orchestrator.api` imports the graph, the nodes, the agents and the verifier
(~2 s of CPU on a loaded machine, UX audit s45) - right for ``run``, not for a command that reads a few files.
:func:`status` reads the run's state from the copy the driver keeps of its latest checkpoint
(:mod:`orchestrator.store.status_cache`) and falls back to the checkpoints themselves (LangGraph, loaded only
then) whenever that copy is missing or not of the latest checkpoint. ``orchestrator.api.status`` is this one.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.errors import ForgeError, no_op_dir
from orchestrator.store.results import RunResult, run_status
from orchestrator.store.runs import latest_run, read_meta
from orchestrator.store.status_cache import read_cached, remember


def status(op_dir: Path | str, *, run_id: str | None = None) -> RunResult:
    """Summary of the latest run: modules, attempts, verdicts, costs, where it waits, pending decisions."""
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(no_op_dir(op_dir))
    rid = run_id or latest_run(root, str(op_dir))
    read_meta(root, rid)  # a damaged run.json is said at once, not found by the resume it would break
    state = read_cached(root, rid)
    if state is None:
        from orchestrator.core.snapshot import snapshot  # LangGraph: only when the copy cannot answer

        state = remember(root, rid, lambda: snapshot(root, rid))
    return run_status(root, rid, *state, shown_as=str(op_dir))
