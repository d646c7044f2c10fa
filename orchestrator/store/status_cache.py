"""A copy of a run's latest checkpoint state for read-only commands, valid only while the checkpoint is unchanged.

Why: the state of a run (values, the nodes to run next, the open gate) is read through the compiled LangGraph
graph (:mod:`orchestrator.core.snapshot`), and importing LangGraph and the nodes costs ~2 s of CPU before
``status`` prints anything (UX audit s45). The driver writes this copy when a run stops; ``status`` uses it
when the checkpoint database still holds exactly the checkpoint it was made from, and otherwise reads the
checkpoints as before (and refreshes the copy). The checkpoint stays the one authority: the copy names the
latest checkpoint id and a digest of the writes stored against it (an interrupt, a resume value), read with
plain SQLite, and any difference - a newer checkpoint, a write added or replaced, a pruned or damaged database
- makes it unused.
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

log = logging.getLogger(__name__)

CACHE_FILE = "status.json"
VERSION = 1


def checkpoint_key(op_dir: Path, run_id: str) -> str | None:
    """The identity of the run's latest checkpoint and its writes, or None when it cannot be read cheaply.

    Read-only (``mode=ro``): a run that writes meanwhile is seen as a different key, never disturbed.
    """
    db = checkpoint_db(op_dir, run_id)
    if not db.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=1.0)
    except (sqlite3.Error, ValueError):
        return None
    try:
        row = conn.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
                           "ORDER BY checkpoint_id DESC LIMIT 1", (run_id,)).fetchone()
        if row is None:
            return None
        digest = hashlib.sha256(str(row[0]).encode())
        for write in conn.execute("SELECT task_id, idx, channel, type, value FROM writes WHERE thread_id = ? AND "
                                  "checkpoint_ns = '' AND checkpoint_id = ? ORDER BY task_id, idx",
                                  (run_id, row[0])):
            digest.update(json.dumps([str(write[0]), int(write[1]), str(write[2]), str(write[3])]).encode())
            digest.update(bytes(write[4] or b""))
        return digest.hexdigest()
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def read_cached(op_dir: Path, run_id: str) -> tuple[dict, tuple, list] | None:
    """``(values, next nodes, interrupt payloads)`` as :func:`orchestrator.core.snapshot.snapshot` returned them
    for the checkpoint the database still holds; None when there is no valid copy."""
    path = run_dir(op_dir, run_id) / CACHE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION or not data.get("key"):
        return None
    if data["key"] != checkpoint_key(op_dir, run_id):
        return None
    values, nxt, interrupts = data.get("values"), data.get("next"), data.get("interrupts")
    if not isinstance(values, dict) or not isinstance(nxt, list) or not isinstance(interrupts, list):
        return None
    return values, tuple(str(n) for n in nxt), interrupts


def write_cached(op_dir: Path, run_id: str, key: str, values: dict, nxt: tuple, interrupts: list) -> None:
    """Keep ``values, nxt, interrupts`` for the checkpoint ``key`` (best effort: a read-only op dir keeps none)."""
    path = run_dir(op_dir, run_id) / CACHE_FILE
    try:
        payload = {"version": VERSION, "key": key, "values": to_jsonable_python(values, fallback=str),
                   "next": list(nxt), "interrupts": to_jsonable_python(list(interrupts), fallback=str)}
        tmp = path.with_name(f".{CACHE_FILE}.tmp")
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        tmp.replace(path)
    except (OSError, ValueError, TypeError) as exc:
        log.debug("no status copy for run %s: %s", run_id, exc)


def remember(op_dir: Path, run_id: str, read: Any) -> tuple[dict, tuple, list]:
    """``read()`` (the checkpoint read through the graph), kept for the next read-only command when the
    checkpoint did not change while it was read."""
    before = checkpoint_key(op_dir, run_id)
    values, nxt, interrupts = read()
    if before is not None and before == checkpoint_key(op_dir, run_id):
        write_cached(op_dir, run_id, before, values, nxt, interrupts)
    return values, nxt, interrupts
