"""Reading a run's state back from its LangGraph checkpoints (``.forge/run-<id>/checkpoints.sqlite``).

Why in core: LangGraph derives a checkpoint's pending nodes and open interrupts from the compiled graph
(``graph.get_state``), so reading state needs the graph. The file itself, and pruning it, belong to
:mod:`orchestrator.store.checkpoints`.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.core.graph import compile_graph
from orchestrator.store.checkpoints import RunSaver
from orchestrator.store.paths import checkpoint_db


def snapshot(root: Path, rid: str) -> tuple[dict, tuple, list]:
    """``(state values, next nodes, interrupt payloads)`` of a run's latest checkpoint (empty when none)."""
    db = checkpoint_db(root, rid)
    if not db.is_file():
        return {}, (), []
    with RunSaver.from_conn_string(str(db)) as saver:  # its serializer knows the project's types
        graph = compile_graph(saver)
        snap = graph.get_state({"configurable": {"thread_id": rid}})
        return dict(snap.values), tuple(snap.next), [i.value for i in snap.interrupts]


def history(root: Path, rid: str) -> list[dict]:
    """The node timeline from LangGraph's checkpoint history (oldest first; one row per step and node)."""
    db = checkpoint_db(root, rid)
    if not db.is_file():
        return []
    out = []
    with RunSaver.from_conn_string(str(db)) as saver:  # its serializer knows the project's types
        graph = compile_graph(saver)
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
    return unique
