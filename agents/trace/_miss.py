"""Explaining a replay miss: who asked, which recorded requests come closest, and what differs.

The report names the agent, module and attempt, ranks recorded requests by how many request fields they
share with the new one, and shows a unified diff of the first differing field (``messages[3].content``,
``params.temperature`` ...), which is nearly always enough to see why a replay no longer matches.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from agents.trace._key import flatten_request
from agents.trace._store import TraceError, TraceReader

__all__ = ["ReplayMissError", "explain_miss"]

_MISSING = object()


class ReplayMissError(RuntimeError):
    """Strict replay found no recorded answer for a request. ``str(err)`` is the full readable report."""

    def __init__(self, report: str, *, field: str | None = None, agent: str | None = None,
                 module: int | None = None, attempt: int | None = None) -> None:
        super().__init__(report)
        self.report = report
        self.field = field
        self.agent = agent
        self.module = module
        self.attempt = attempt


def _as_text(value: Any) -> str:
    if value is _MISSING:
        return "<absent>"
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _first_difference(new: list[tuple[str, Any]], old: list[tuple[str, Any]]) -> tuple[str, Any, Any] | None:
    old_map = dict(old)
    new_map = dict(new)
    for path, value in new:
        if old_map.get(path, _MISSING) != value:
            return path, old_map.get(path, _MISSING), value
    for path, value in old:
        if path not in new_map:
            return path, value, _MISSING
    return None


def explain_miss(
    canonical: dict[str, Any],
    key: str,
    occurrence: int,
    reader: TraceReader,
    *,
    agent: str | None,
    module: int | None,
    attempt: int | None,
    top: int = 3,
) -> ReplayMissError:
    who = f"agent={agent or '?'} module={module if module is not None else '?'} attempt={attempt or '?'}"
    lines = [f"replay miss: no recorded model call matches this request ({who})",
             f"  request key {key[:16]}…, occurrence {occurrence}, model {canonical.get('model')!r}",
             f"  trace: {reader.dir}"]
    recorded = reader.llm_call_count(key)
    if recorded:
        lines.append(f"  this exact request was recorded {recorded} time(s); this is call #{occurrence + 1} of it,"
                     " so the run is making more identical calls than the recorded one did")
        return ReplayMissError("\n".join(lines), field=None, agent=agent, module=module, attempt=attempt)

    new_fields = flatten_request(canonical)
    candidates: list[tuple[int, int, int, Any, list[tuple[str, Any]]]] = []
    for index, event in enumerate(reader.llm_calls):
        if event.request_ref is None:
            continue
        try:
            old_fields = flatten_request(reader.blob_json(event.request_ref))
        except TraceError:
            continue
        old_map = dict(old_fields)
        matches = sum(1 for path, value in new_fields if old_map.get(path, _MISSING) == value)
        total = len({p for p, _ in new_fields} | set(old_map))
        same_agent = int(event.agent == agent and event.module == module)
        candidates.append((matches, same_agent, -index, (event, total), old_fields))
    if not candidates:
        lines.append("  the trace holds no replayable model calls (was it recorded in live mode?)")
        return ReplayMissError("\n".join(lines), agent=agent, module=module, attempt=attempt)
    candidates.sort(key=lambda c: (c[0], c[1], c[2]), reverse=True)
    lines.append("  nearest recorded requests (fields matching):")
    for matches, _, _, (event, total), _ in candidates[:top]:
        lines.append(f"    seq {event.seq}: {matches}/{total} fields — agent={event.agent} module={event.module} "
                     f"attempt={event.attempt} occurrence={event.occurrence}")
    best_event = candidates[0][3][0]
    diff = _first_difference(new_fields, candidates[0][4])
    field = None
    if diff is not None:
        field, old_value, new_value = diff
        lines.append(f"  first differing field vs seq {best_event.seq}: {field}")
        udiff = difflib.unified_diff(
            _as_text(old_value).splitlines(), _as_text(new_value).splitlines(),
            fromfile=f"recorded/{field}", tofile=f"current/{field}", lineterm="", n=2,
        )
        body = list(udiff)
        if len(body) > 60:
            body = body[:60] + [f"... ({len(body) - 60} more diff lines)"]
        lines.extend("    " + line for line in body)
    return ReplayMissError("\n".join(lines), field=field, agent=agent, module=module, attempt=attempt)
