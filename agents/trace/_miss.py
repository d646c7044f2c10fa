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


def _numerics_note(reader: TraceReader) -> list[str]:
    """Lines naming how this machine's float numerics differ from the recording machine's (empty: same)."""
    recorded = getattr(reader.manifest, "numerics", None) or {}
    try:
        from runtime.fingerprint import fingerprint_diff
    except ImportError:
        return []
    diff = fingerprint_diff(recorded)
    if not diff:
        return []
    return ["  numerics differ from the recording machine (float32 last bits may differ; agent-visible text "
            "must not depend on them - see docs/replay.md):", *("    " + d for d in diff)]


def explain_miss(
    canonical: dict[str, Any],
    key: str,
    occurrence: int,
    reader: TraceReader,
    *,
    agent: str | None,
    module: int | None,
    attempt: int | None,
    position: int | None = None,
    top: int = 3,
) -> ReplayMissError:
    """Explain why ``canonical`` has no recorded answer.

    Candidates are ranked by identity first - same agent, same module, same attempt, then the recorded call
    closest to this call's ``position`` (how many model calls the run made before it) - and only then by how
    many request fields match. Ranking by matching fields alone picks the wrong call whenever one changed
    number makes attempt 2's request differ from its recording while attempt 1's shares more boilerplate
    (then the diff shows dozens of unrelated lines instead of the one changed value).
    """
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
    candidates: list[tuple[int, tuple[int, ...], tuple[Any, int], list[tuple[str, Any]]]] = []
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
        rank = (int(event.agent == agent), int(event.agent == agent and event.module == module),
                int(event.agent == agent and event.module == module and event.attempt == attempt),
                -abs(index - position) if position is not None else 0, matches, -index)
        candidates.append((matches, rank, (event, total), old_fields))
    if not candidates:
        lines.append("  the trace holds no replayable model calls (was it recorded in live mode?)")
        return ReplayMissError("\n".join(lines), agent=agent, module=module, attempt=attempt)
    candidates.sort(key=lambda c: c[1], reverse=True)
    lines.append("  nearest recorded requests (same agent, module, attempt, position first; fields matching):")
    for matches, _, (event, total), _ in candidates[:top]:
        lines.append(f"    seq {event.seq}: {matches}/{total} fields — agent={event.agent} module={event.module} "
                     f"attempt={event.attempt} occurrence={event.occurrence}")
    best_event = candidates[0][2][0]
    diff = _first_difference(new_fields, candidates[0][3])
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
    lines.extend(_numerics_note(reader))
    return ReplayMissError("\n".join(lines), field=field, agent=agent, module=module, attempt=attempt)
