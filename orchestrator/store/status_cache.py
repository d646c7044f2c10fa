"""A copy of a run's latest checkpoint state for read-only commands, valid only while the checkpoint is unchanged.

Why: the state of a run (values, the nodes to run next, the open gate) is read through the compiled LangGraph
graph (:mod:`orchestrator.core.snapshot`), and importing LangGraph and the nodes costs ~2 s of CPU before
``status`` prints anything (UX audit s45). The driver writes this copy when a run stops; ``status`` uses it
when the checkpoint database still holds exactly the checkpoint it was made from, and otherwise reads the
checkpoints as before (and refreshes the copy). The checkpoint stays the one authority: the copy names the
latest checkpoint id and a digest of the writes stored against it (an interrupt, a resume value), read with
plain SQLite, and any difference - a newer checkpoint, a write added or replaced, a pruned or damaged database
- makes it unused.

The same holds for the run's node timeline (``report``'s, :func:`orchestrator.core.snapshot.history`), kept in
``history.json`` under a key of every checkpoint of the run and every write (a prune that drops old checkpoints
changes the timeline but not the latest checkpoint). Both keys digest the checkpoint rows themselves, not only
their ids: a checkpoint altered in place (damaged, edited by hand) is read through LangGraph, which says so.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from orchestrator.store.paths import checkpoint_db, run_dir
from orchestrator.store.runs import read_json, write_json_atomic

log = logging.getLogger(__name__)

CACHE_FILE = "status.json"
VERSION = 2
HISTORY_FILE = "history.json"


def checkpoint_key(op_dir: Path, run_id: str) -> str | None:
    """The identity of the run's latest checkpoint and its writes, or None when it cannot be read cheaply.

    Read-only (``mode=ro``): a run that writes meanwhile is seen as a different key, never disturbed.
    """
    return _key(op_dir, run_id, every=False)


def history_key(op_dir: Path, run_id: str) -> str | None:
    """The identity of every checkpoint of the run and every write stored against them (None: unreadable).

    Why all of them: the timeline is read from every checkpoint, and ``prune`` removes old ones while the
    latest stays the same."""
    return _key(op_dir, run_id, every=True)


def _key(op_dir: Path, run_id: str, *, every: bool) -> str | None:
    db = checkpoint_db(op_dir, run_id)
    if not db.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=1.0)
    except (sqlite3.Error, ValueError):
        return None
    try:
        rows = conn.execute("SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
                            "WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC"
                            + ("" if every else " LIMIT 1"), (run_id,)).fetchall()
        if not rows:
            return None
        digest = hashlib.sha256(f"v{VERSION}".encode())
        for row in rows:
            digest.update(json.dumps([str(row[0]), str(row[1]), str(row[2]), len(row[3] or b""),
                                      len(row[4] or b"")]).encode())
            digest.update(bytes(row[3] or b""))
            digest.update(bytes(row[4] or b""))
            for write in conn.execute("SELECT task_id, idx, channel, type, value FROM writes WHERE thread_id = ? AND "
                                      "checkpoint_ns = '' AND checkpoint_id = ? ORDER BY task_id, idx",
                                      (run_id, row[0])):
                digest.update(json.dumps([str(write[0]), int(write[1]), str(write[2]), str(write[3]),
                                          len(write[4] or b"")]).encode())
                digest.update(bytes(write[4] or b""))
        return digest.hexdigest()
    except (sqlite3.Error, TypeError, ValueError):
        return None
    finally:
        conn.close()


def read_cached(op_dir: Path, run_id: str) -> tuple[dict, tuple, list] | None:
    """``(values, next nodes, interrupt payloads)`` as :func:`orchestrator.core.snapshot.snapshot` returned them
    for the checkpoint the database still holds; None when there is no valid copy."""
    data = _load(run_dir(op_dir, run_id) / CACHE_FILE)
    if data is None or data["key"] != checkpoint_key(op_dir, run_id):
        return None
    values, nxt, interrupts = data.get("values"), data.get("next"), data.get("interrupts")
    if not isinstance(values, dict) or not isinstance(nxt, list) or not isinstance(interrupts, list):
        return None
    return values, tuple(str(n) for n in nxt), interrupts


def write_cached(op_dir: Path, run_id: str, key: str, values: dict, nxt: tuple, interrupts: list) -> None:
    """Keep ``values, nxt, interrupts`` for the checkpoint ``key`` (best effort: a read-only op dir keeps none)."""
    try:
        payload = {"version": VERSION, "key": key, "values": to_jsonable_python(values, fallback=str),
                   "next": list(nxt), "interrupts": to_jsonable_python(list(interrupts), fallback=str)}
    except (ValueError, TypeError) as exc:
        log.debug("no status copy for run %s: %s", run_id, exc)
        return
    _store(run_dir(op_dir, run_id) / CACHE_FILE, payload)


def remember(op_dir: Path, run_id: str, read: Any) -> tuple[dict, tuple, list]:
    """``read()`` (the checkpoint read through the graph), kept for the next read-only command when the
    checkpoint did not change while it was read."""
    before = checkpoint_key(op_dir, run_id)
    values, nxt, interrupts = read()
    if before is not None and before == checkpoint_key(op_dir, run_id):
        write_cached(op_dir, run_id, before, values, nxt, interrupts)
    return values, nxt, interrupts


def read_history_cached(op_dir: Path, run_id: str) -> list[dict] | None:
    """The node timeline :func:`orchestrator.core.snapshot.history` returned for the checkpoints the database still
    holds, every one of them unchanged; None when there is no valid copy."""
    data = _load(run_dir(op_dir, run_id) / HISTORY_FILE)
    if data is None or data["key"] != history_key(op_dir, run_id):
        return None
    rows = data.get("history")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        return None
    return rows


def remember_history(op_dir: Path, run_id: str, read: Any) -> list[dict]:
    """``read()`` (the timeline read through the graph), kept for the next ``report`` when no checkpoint changed
    while it was read; returned as the copy will give it back (JSON values), so a first and a later report agree."""
    before = history_key(op_dir, run_id)
    rows = to_jsonable_python(read(), fallback=str)
    if before is not None and before == history_key(op_dir, run_id):
        _store(run_dir(op_dir, run_id) / HISTORY_FILE, {"version": VERSION, "key": before, "history": rows})
    return rows


def _load(path: Path) -> dict | None:
    data = read_json(path)
    if data is None or data.get("version") != VERSION or not data.get("key"):
        return None
    return data


def _store(path: Path, payload: dict) -> None:
    """Write ``payload`` atomically (best effort: a read-only op dir keeps no copy)."""
    try:
        write_json_atomic(path, payload, indent=None)
    except (OSError, ValueError, TypeError) as exc:
        log.debug("no copy %s: %s", path, exc)
