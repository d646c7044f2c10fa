"""Pruning a run's LangGraph checkpoints (``.forge/run-<id>/checkpoints.sqlite``).

Reading state needs the compiled graph (``orchestrator.core.snapshot``). Pruning is the one place with SQL on the saver's
tables: ``SqliteSaver.prune`` exists in langgraph-checkpoint-sqlite but raises NotImplementedError
(checked against 1.x), so we delete old rows ourselves, only of the root namespace and keeping the newest.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pydantic import BaseModel

from orchestrator.store.paths import checkpoint_db, list_runs


class PruneResult(BaseModel):
    runs: int
    deleted: int
    kept: int


def prune(root: Path, keep: int) -> PruneResult:
    """Keep only the last ``keep`` checkpoints per thread in every run's checkpoints.sqlite."""
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
