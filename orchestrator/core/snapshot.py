"""Reading a run's state back from its LangGraph checkpoints (``.forge/run-<id>/checkpoints.sqlite``).

Why in core: LangGraph derives a checkpoint's pending nodes and open interrupts from the compiled graph
(``graph.get_state``), so reading state needs the graph. The file itself, and pruning it, belong to
:mod:`orchestrator.store.checkpoints`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from orchestrator.command import cli_command, shell_path
from orchestrator.core.graph import MODULE_NODES, compile_graph
from orchestrator.errors import ForgeError
from orchestrator.store.checkpoints import RunSaver
from orchestrator.store.paths import FORGE_DIR, checkpoint_db, run_dir


def start_over_hint(root: Path, rid: str) -> str:
    """What a user can do with a run whose state is gone: start a new one (``--fresh`` moves the old run's
    artifacts aside; nothing of the old run is deleted)."""
    return (f"start a new run with `{cli_command()} run {shell_path(root)} --fresh` (the files of run {rid} stay in "
            f"{FORGE_DIR}/{run_dir(root, rid).name}/)")


@contextmanager
def _graph_of(root: Path, rid: str) -> Iterator[Any]:
    """The compiled graph over a run's checkpoint database, which must exist and be readable.

    Why refuse a missing file: ``run`` creates checkpoints.sqlite before it writes run.json
    (``orchestrator.api._start``), so a run.json without it means the file was deleted or moved. Reading it as
    "no checkpoint yet" made ``resume`` restart the graph from the start: the design stage saw the design the
    agents had written, took it as the user's and skipped the design gate nobody had answered.
    """
    db = checkpoint_db(root, rid)
    if not db.is_file():
        raise ForgeError(f"run {rid} cannot be read: its checkpoint {db} is missing (deleted or moved), so where "
                         f"the run stopped and which gates were decided is unknown; {start_over_hint(root, rid)}")
    try:
        with RunSaver.from_conn_string(str(db)) as saver:  # its serializer knows the project's types
            yield compile_graph(saver)
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            raise ForgeError(f"run {rid}: its checkpoint {db} is busy ({exc}); try again in a moment") from None
        raise _unreadable(root, rid, db, exc) from None
    except sqlite3.DatabaseError as exc:
        raise _unreadable(root, rid, db, exc) from None


def _unreadable(root: Path, rid: str, db: Path, exc: Exception) -> ForgeError:
    if not os.access(db.parent, os.W_OK) or not os.access(db, os.W_OK):
        # UX audit s33: an intact checkpoint on a read-only mount was called damaged, and `run --fresh` advised
        return ForgeError(f"run {rid} cannot be read here: its checkpoint {db} is on a read-only file system or not "
                          f"writable by you ({exc}; SQLite needs to write beside it even to read); copy the operator "
                          "directory to a writable place to look at the run or continue it - nothing is damaged")
    return ForgeError(f"run {rid} cannot be read: its checkpoint {db} is damaged ({exc}), so the run cannot be "
                      f"continued; {start_over_hint(root, rid)}")


def snapshot(root: Path, rid: str) -> tuple[dict, tuple, list]:
    """``(state values, next nodes, interrupt payloads)`` of a run's latest checkpoint (empty when the run has
    none yet: killed before its first node).

    Raises:
        ForgeError: the checkpoint database is missing or damaged (one line; the run cannot be continued).
    """
    with _graph_of(root, rid) as graph:
        snap = graph.get_state({"configurable": {"thread_id": rid}})
        return dict(snap.values), tuple(snap.next), [i.value for i in snap.interrupts]


def history(root: Path, rid: str) -> list[dict]:
    """The node timeline from LangGraph's checkpoint history (oldest first; one row per step and node)."""
    out = []
    with _graph_of(root, rid) as graph:
        for snap in graph.get_state_history({"configurable": {"thread_id": rid}}):
            v = snap.values or {}
            node = v.get("node")
            if not node:
                continue
            k = int(v.get("active") or 0)
            mods = v.get("modules") or []
            m = mods[k - 1] if 1 <= k <= len(mods) else {}
            out.append({"when": snap.created_at, "node": node, "module": k or None,
                        "attempt": m.get("attempts"), "verdict": v.get("last_verdict") if node.startswith("verify")
                        else None, "step": (snap.metadata or {}).get("step")})
    out.reverse()
    seen, unique = set(), []
    for row in out:  # a resumed node can appear twice (the checkpoint before a crash and after)
        key = (row["step"], row["node"])
        if key not in seen:
            seen.add(key)
            unique.append(row)
    # a checkpoint holds the state AFTER its node: a module gate has already moved on to the next module (UX audit
    # s33: M1's gate was shown as "gate_module M2"). A node is shown with the module it worked on - the one active
    # when it started -, and the stages after the modules with none.
    before: dict | None = None
    for row in unique:
        after = dict(row)
        if row["node"] not in MODULE_NODES:
            row["module"] = row["attempt"] = None
        elif before is not None and before["module"] and before["module"] != row["module"]:
            row["module"], row["attempt"] = before["module"], before["attempt"]
        before = after
    return unique

