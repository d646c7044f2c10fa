"""Helpers shared by the nodes: services access, timed service calls, MEMORY.md write, commits."""

from __future__ import annotations

import datetime as _dt
import functools
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from langgraph.runtime import Runtime

from orchestrator.core.memory import render_memory
from orchestrator.core.services import Services
from orchestrator.core.state import ForgeState
from orchestrator.store.gitaudit import AuditRepo

log = logging.getLogger(__name__)

_APPEND = ("verify_log", "lint_log", "dev_log", "rejected", "agent_calls", "attempt_log")


def services(runtime: Runtime | None) -> Services:
    ctx = runtime.context if runtime is not None else None
    if not isinstance(ctx, Services):
        raise RuntimeError("the orchestrator graph needs Services as its runtime context "
                           "(use orchestrator.api.run, or pass context=Services(...))")
    return ctx


def op_path(state: ForgeState) -> Path:
    return Path(state["op_dir"])


def merged(state: ForgeState, update: dict) -> ForgeState:
    """``state`` with ``update`` applied as the graph's reducers would (append-only logs concatenate)."""
    out: dict = dict(state)
    for key, value in update.items():
        if key in _APPEND:
            out[key] = list(out.get(key) or []) + list(value)
        else:
            out[key] = value
    return cast(ForgeState, out)  # the update's keys are the graph's channels (LangGraph checks them)


def write_memory(state: ForgeState) -> bool:
    """Render MEMORY.md; returns True when the file changed."""
    path = op_path(state) / "MEMORY.md"
    text = render_memory(state)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def commit(state: ForgeState, update: dict, subject: str, trailers: dict[str, str],
           when: _dt.datetime | None = None) -> str:
    """Write MEMORY.md for the post-node state, then commit the op dir to its audit repository."""
    write_memory(merged(state, update))
    return AuditRepo(op_path(state)).commit(subject, trailers, when=when)


def timed(svc: Services, bucket: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a service and add its wall time to ``svc.timers[bucket]`` (for the overhead benchmark)."""
    start = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        svc.timers[bucket] = svc.timers.get(bucket, 0.0) + time.perf_counter() - start


def dev(svc: Services, node: str, action: str, result: str, nxt: str = "") -> dict:
    return {"when": svc.stamp(), "node": node, "action": action, "result": result, "next": nxt}


def node(name: str):
    """Decorate a node: start from the checkpoint's counters, tag the update with the node name, re-render
    MEMORY.md after it and store the counters it ends with.

    The counters (logical clock readings, model/tool call occurrences; ``ForgeState.counters``) are set back
    to the input state's first, and MEMORY.md is rendered from it again, so a node that runs again after an
    interrupt part-way through it (Ctrl-C, kill -9, an error) reads the same times, asks the same numbered
    calls and sees the same MEMORY.md as in an uninterrupted run (the interrupted attempt may have rewritten
    it in ``commit``); a resumed replay then still matches its recording, and a resumed recording replays.
    Both are no-ops when nothing was interrupted. (implement also puts back a stage file an interrupted
    attempt overwrote: ``orchestrator.store.artifacts.undo_interrupted_write``.)
    """

    def wrap(fn: Callable[[ForgeState, Runtime], dict]):
        @functools.wraps(fn)
        def run(state: ForgeState, runtime: Runtime) -> dict:
            svc = services(runtime)
            svc.rewind(state.get("counters"))
            if state.get("node") and "op_dir" in state:  # MEMORY.md of the checkpoint (the verifier lints it)
                write_memory(state)
            update = fn(state, runtime) or {}
            update["node"] = name
            after = merged(state, update)
            if "op_dir" in after and write_memory(after):
                svc.trace.emit("memory_write", node=name, module=after.get("active") or None)
            update["counters"] = svc.counters()
            return update

        return run

    return wrap


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return ""


def report_divergence(svc: Services, node: str, module: int | None, attempt: int | None, target: str,
                      verdict: str) -> str | None:
    """On replay: compare a live verdict with the recorded one for the same node/module/attempt.

    The verification tool always runs live; a verdict that differs from the recording (a changed emulator,
    lint or verifier) is a divergence: emitted as an ``error`` event with ``divergence: true`` and returned.
    """
    match: dict[str, Any] = {"node": node, "attempt": attempt}
    if module is not None:
        match["module"] = module
    events = svc.trace.recorded("verify", **match)
    if not events or events[0].get("verdict") == verdict:
        return None
    was = events[0].get("verdict")
    where = f"M{module} attempt {attempt}" if module is not None else "final"
    message = f"replay divergence at {node} {where} ({target}): recorded verdict {was}, live verdict {verdict}"
    log.warning(message)
    svc.trace.emit("error", node=node, module=module, attempt=attempt, message=message, divergence=True,
                   recorded_verdict=was, live_verdict=verdict)
    return message
