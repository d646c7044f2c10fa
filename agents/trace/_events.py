"""Trace event models: one pydantic class per ``kind``, parsed through a discriminated union.

The orchestrator owns the fields of its own kinds (interrupt, resume, state_transition, verify,
memory_write, error, budget); those models name the fields the spec lists and allow extra ones. The LLM
recorder's kinds (llm_call, tool_call) are closed. Bump :data:`FORMAT_VERSION` when a field changes meaning.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "EVENT_KINDS",
    "FORMAT_VERSION",
    "VOLATILE_EVENT_FIELDS",
    "BudgetEvent",
    "ErrorEvent",
    "Event",
    "EventAdapter",
    "InterruptEvent",
    "LLMCallEvent",
    "MemoryWriteEvent",
    "ResumeEvent",
    "StateTransitionEvent",
    "ToolCallEvent",
    "VerifyEvent",
]

FORMAT_VERSION = 1
"""Version of manifest.json + events.jsonl. Readers refuse versions they do not know."""

VOLATILE_EVENT_FIELDS = frozenset({"ts", "latency_s", "duration_s", "run_id", "cache"})
"""Fields that legitimately differ between a recorded run and its replay (timing, identity, cache status)."""


class _Base(BaseModel):
    model_config = ConfigDict(extra="allow")

    seq: int
    """1-based position in events.jsonl."""
    ts: str
    """UTC ISO-8601 timestamp (volatile)."""
    run_id: str
    node: str | None = None
    agent: str | None = None
    module: int | None = None
    attempt: int | None = None


class _Closed(_Base):
    model_config = ConfigDict(extra="forbid")


class LLMCallEvent(_Closed):
    kind: Literal["llm_call"]
    request_key: str
    occurrence: int
    """0-based index among calls with the same request key in this run."""
    model: str
    base_url: str
    params: dict[str, Any]
    request_ref: str | None = None
    """Blob with the canonical request (model, params, messages, tools, ...); absent in live mode."""
    messages_ref: str | None = None
    tools_digest: str | None = None
    response_ref: str | None = None
    """Blob with the parsed response (text, tool calls, usage); absent in live mode."""
    raw_ref: str | None = None
    text: str | None = None
    """First characters of the answer text (the full text is in the response blob)."""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    latency_s: float = 0.0
    retries: int = 0
    error: str | None = None
    cache: Literal["live", "recorded", "hit"] = "recorded"
    cost_usd: float | None = None
    prompt_hash: str | None = None
    fit: dict[str, Any] | None = None
    """How the prompt was fitted into the model's context (context, answer_tokens, estimated prompt_tokens,
    dropped sections); None when the model's context is unknown and nothing was fitted."""


class ToolCallEvent(_Closed):
    kind: Literal["tool_call"]
    tool: str
    arguments: dict[str, Any] | str
    args_digest: str
    occurrence: int
    result_ref: str
    result_preview: str = ""
    duration_s: float = 0.0
    cache: Literal["live", "recorded", "hit"] = "recorded"


class VerifyEvent(_Base):
    kind: Literal["verify"]
    hashes: dict[str, Any] | None = None
    verdict: str | None = None


class InterruptEvent(_Base):
    kind: Literal["interrupt"]
    gate: str | None = None
    payload: Any = None
    decision: str | None = None
    note: str | None = None


class ResumeEvent(_Base):
    kind: Literal["resume"]
    gate: str | None = None
    decision: str | None = None
    note: str | None = None


class StateTransitionEvent(_Base):
    kind: Literal["state_transition"]


class MemoryWriteEvent(_Base):
    kind: Literal["memory_write"]


class ErrorEvent(_Base):
    kind: Literal["error"]
    message: str | None = None


class BudgetEvent(_Base):
    kind: Literal["budget"]


Event = Annotated[
    LLMCallEvent
    | ToolCallEvent
    | VerifyEvent
    | InterruptEvent
    | ResumeEvent
    | StateTransitionEvent
    | MemoryWriteEvent
    | ErrorEvent
    | BudgetEvent,
    Field(discriminator="kind"),
]
EventAdapter: TypeAdapter[Any] = TypeAdapter(Event)

EVENT_KINDS = (
    "llm_call",
    "tool_call",
    "verify",
    "interrupt",
    "resume",
    "state_transition",
    "memory_write",
    "error",
    "budget",
)
