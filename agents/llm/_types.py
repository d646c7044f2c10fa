"""Provider-neutral request/response values for chat completions.

Roles build a :class:`ChatRequest`; a provider (the real OpenAI-compatible client, or a scripted fake) turns
it into a :class:`ChatResponse`. The recorder keys and stores exactly these values, so they are pydantic
models with a stable JSON form.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CallOutcome", "ChatRequest", "ChatResponse", "LLMError", "ToolCall", "Usage"]


class LLMError(RuntimeError):
    """A model call failed for good (after retries), or the endpoint answered something unusable.

    The message says what happened in one line, e.g.
    ``HTTP 500 from http://127.0.0.1:8000/v1 after 4 retries: {"error": "try later"}``.
    """

    def __init__(self, message: str, *, status: int | None = None, retries: int = 0,
                 endpoint: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retries = retries
        self.endpoint = endpoint


class ToolCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str
    """Raw JSON text of the arguments, exactly as the model produced it (may be malformed)."""


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ChatRequest(BaseModel):
    """One chat-completions request, everything that determines the answer and nothing else."""

    model_config = ConfigDict(frozen=True)

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    """Sampling parameters (temperature, top_p, max_tokens, seed ...); transport settings never go here."""


class ChatResponse(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    """The model name the endpoint reports (may differ from the requested alias)."""


class CallOutcome(BaseModel):
    """A response plus what it cost to get it."""

    model_config = ConfigDict(frozen=True)

    response: ChatResponse
    latency_s: float = 0.0
    retries: int = 0
    cost_usd: float | None = None
    raw: dict[str, Any] = Field(default_factory=dict)
    """The endpoint's raw JSON answer (stored as a blob by the recorder)."""
