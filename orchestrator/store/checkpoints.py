"""A run's LangGraph checkpoints (``.forge/run-<id>/checkpoints.sqlite``): the saver the driver writes them
with (:class:`RunSaver`), and pruning.

Reading state needs the compiled graph (``orchestrator.core.snapshot``). Pruning is the one place with SQL on the saver's
tables: ``SqliteSaver.prune`` exists in langgraph-checkpoint-sqlite but raises NotImplementedError
(checked against 1.x), so we delete old rows ourselves, only of the root namespace and keeping the newest.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import BaseModel

from orchestrator.errors import ForgeError
from orchestrator.store.paths import checkpoint_db, list_runs

CHECKPOINT_TYPES: tuple[tuple[str, str], ...] = (
    ("runtime.verdicts", "Verdict"),
)
"""The project's own types a checkpoint holds (msgpack ext values), beyond LangGraph's safe types and the types
it derives from the state schema (``ForgeState`` is TypedDicts of plain data; a ``Verdict`` reaches state through
verification outcomes, e.g. ``last_verdict``). Found by running the graph's paths with
``LANGGRAPH_STRICT_MSGPACK=true``; tests/orchestrator/test_checkpoint_types.py decodes every checkpoint and write
of a run through every gate, a debug loop and a resume, and fails on a type outside this list."""


def checkpoint_serde() -> JsonPlusSerializer:
    """LangGraph's serializer with :data:`CHECKPOINT_TYPES` registered.

    Why: LangGraph's default allows any type and logs "Deserializing unregistered type ..." for each one it meets
    (and says it will block them in a future version). With an explicit list it reconstructs exactly these (plus
    its own safe ones) and leaves anything else as its raw data: a checkpoint cannot name arbitrary classes.
    """
    return JsonPlusSerializer(allowed_msgpack_modules=CHECKPOINT_TYPES)


class RunSaver(SqliteSaver):
    """LangGraph's SQLite saver, committing a node's writes in the same transaction as the checkpoint after it.

    Why: with durability ``"sync"`` LangGraph stores every node transition twice, the node's writes (``put_writes``,
    so that the other tasks of an interrupted superstep need not run again) and then the checkpoint (``put``),
    each in its own transaction, i.e. its own fsync of the WAL (0.1 ms on an idle disk, 4-8 ms on a busy one).
    This graph runs one task per step, so the writes of a finished step are folded into the checkpoint that
    follows at once. Ordinary writes therefore wait (in memory) for the next transaction of this saver: the
    step's ``put``, a ``put_writes`` LangGraph must find on resume (interrupt, resume value, error, scheduled
    tasks: :data:`WRITES_IDX_MAP`, stored at once as before), a read, or the close of the saver.

    Durability: every checkpoint is committed (fsync) before the next node starts, as before. A kill -9 between
    the end of a node and its checkpoint (the same window as a kill at the node's last line) resumes at that
    node, which runs again; before, its stored writes were applied instead. Nodes are written to be run again
    (a kill during a node already re-runs it): tests/orchestrator/test_pipeline_overhead.py kills a run there.
    """

    def __init__(self, conn: sqlite3.Connection, **kwargs: Any) -> None:
        kwargs.setdefault("serde", checkpoint_serde())
        super().__init__(conn, **kwargs)
        self._held: list[tuple[RunnableConfig, Sequence[tuple[str, Any]], str, str]] = []
        self._held_lock = threading.Lock()
        self._batch_thread: int | None = None

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str) -> Iterator[RunSaver]:
        """Open the database; on leaving (normally or not) the writes still held are committed."""
        with closing(sqlite3.connect(conn_string, check_same_thread=False)) as conn:
            saver = cls(conn)
            try:
                yield saver
            finally:
                saver.flush()

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        if self._batch_thread == threading.get_ident():  # inside _batch: its transaction, its lock
            cur = self.conn.cursor()
            try:
                yield cur
            finally:
                cur.close()
            return
        with super().cursor(transaction) as cur:
            yield cur

    def _take(self) -> list[tuple[RunnableConfig, Sequence[tuple[str, Any]], str, str]]:
        with self._held_lock:
            held, self._held = self._held, []
        return held

    def _batch(self, held: list, then: Any = None) -> Any:
        """Commit ``held`` writes, then ``then()`` (a put), in one transaction."""
        with self.lock:
            self.setup()
            self._batch_thread = threading.get_ident()
            try:
                for args in held:
                    SqliteSaver.put_writes(self, *args)
                out = then() if then is not None else None
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                with self._held_lock:  # not stored: keep them for the next transaction
                    self._held[:0] = held
                raise
            finally:
                self._batch_thread = None
        return out

    def flush(self) -> None:
        """Commit the writes still held (no-op when none)."""
        held = self._take()
        if held:
            self._batch(held)

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        if any(channel in WRITES_IDX_MAP or channel.startswith("__") for channel, _ in writes):
            self._batch([*self._take(), (config, writes, task_id, task_path)])
            return
        with self._held_lock:
            self._held.append((config, list(writes), task_id, task_path))

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        held = self._take()
        if not held:
            return super().put(config, checkpoint, metadata, new_versions)
        return self._batch(held, lambda: SqliteSaver.put(self, config, checkpoint, metadata, new_versions))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        self.flush()
        return super().get_tuple(config)

    def list(self, config: RunnableConfig | None, **kwargs: Any) -> Iterator[CheckpointTuple]:
        self.flush()
        return super().list(config, **kwargs)

    def delete_thread(self, thread_id: str) -> None:
        self.flush()
        super().delete_thread(thread_id)

    def get_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]) -> Any:
        self.flush()
        return super().get_delta_channel_history(config=config, channels=channels)


def create_checkpoints(db: Path) -> None:
    """Create a new run's (empty) checkpoint database before its run.json is written.

    Why: from then on a run.json without checkpoints.sqlite means the file was deleted or moved, which
    ``orchestrator.core.snapshot`` refuses instead of reading it as "not started" (a restart from the first node
    skipped the design gate; see there).
    """
    with RunSaver.from_conn_string(str(db)) as saver:
        saver.setup()


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
        try:
            d, k = _prune_db(db, keep)
        except sqlite3.DatabaseError as exc:
            raise ForgeError(f"cannot prune run {rid}: its checkpoint {db} is damaged ({exc}); nothing of it was "
                             "changed") from None
        deleted, kept = deleted + d, kept + k
    return PruneResult(runs=runs, deleted=deleted, kept=kept)


def _prune_db(db: Path, keep: int) -> tuple[int, int]:
    """Prune one database: ``(deleted, kept)``; one whose tables were never created (its run was killed before
    its first checkpoint) has nothing to prune."""
    deleted = kept = 0
    con = sqlite3.connect(str(db))
    try:
        try:
            threads = [r[0] for r in con.execute("SELECT DISTINCT thread_id FROM checkpoints")]
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return 0, 0
            raise
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
    return deleted, kept
