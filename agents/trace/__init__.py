"""Run traces and record/replay of model calls (spec: ``../shared/spec/traces.md``).

Public surface:

- :class:`Trace` — the events.jsonl writer (implements ``agents.contracts.TraceSink``) and the record/replay
  gate (``call_model``, ``call_tool``).
- :class:`TraceReader`, :func:`validate_trace`, :func:`find_trace_dir` — loading recorded traces.
- :class:`ReplayMissError` — strict replay found no recorded answer; its message is the readable report.
- :func:`request_key`, :func:`canonical_request` — the request key.
- :func:`comparable_events` — events without timing fields, for record-vs-replay comparisons.
"""

from agents.trace._events import (
    EVENT_KINDS,
    FORMAT_VERSION,
    VOLATILE_EVENT_FIELDS,
    LLMCallEvent,
    ToolCallEvent,
)
from agents.trace._key import canonical_json, canonical_request, normalize_base_url, request_key, sha256_text
from agents.trace._miss import ReplayMissError
from agents.trace._store import (
    TRACE_MODES,
    Manifest,
    TraceError,
    TraceMode,
    TraceReader,
    find_trace_dir,
    hash_op_dir,
    read_events,
    validate_trace,
)
from agents.trace._trace import Trace, comparable_events

__all__ = [
    "EVENT_KINDS",
    "FORMAT_VERSION",
    "TRACE_MODES",
    "VOLATILE_EVENT_FIELDS",
    "LLMCallEvent",
    "Manifest",
    "ReplayMissError",
    "ToolCallEvent",
    "Trace",
    "TraceError",
    "TraceMode",
    "TraceReader",
    "canonical_json",
    "canonical_request",
    "comparable_events",
    "find_trace_dir",
    "hash_op_dir",
    "normalize_base_url",
    "read_events",
    "request_key",
    "sha256_text",
    "validate_trace",
]
