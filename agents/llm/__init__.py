"""The LLM layer: one provider contract (``complete(ChatRequest) -> CallOutcome``) and its implementations.

- :class:`OpenAIProvider` speaks to any OpenAI-compatible endpoint through the ``openai`` SDK.
- :class:`ScriptedProvider` answers from a script (tests, offline work).
Every call a role makes goes through the recorder in :mod:`agents.trace`, never straight to a provider.
"""

from typing import Protocol

from agents.llm._openai import OpenAIProvider, model_refused, parse_completion, served_models
from agents.llm._pricing import Price, PriceTable
from agents.llm._retry import RetryPolicy, is_retryable_status
from agents.llm._scripted import ScriptedProvider, text_response, tool_response
from agents.llm._types import CallOutcome, ChatRequest, ChatResponse, LLMError, ToolCall, Usage

__all__ = [
    "CallOutcome",
    "ChatProvider",
    "ChatRequest",
    "ChatResponse",
    "LLMError",
    "OpenAIProvider",
    "Price",
    "PriceTable",
    "RetryPolicy",
    "ScriptedProvider",
    "ToolCall",
    "Usage",
    "is_retryable_status",
    "model_refused",
    "parse_completion",
    "served_models",
    "text_response",
    "tool_response",
]


class ChatProvider(Protocol):
    """Anything that answers a chat request."""

    base_url: str

    def complete(self, request: ChatRequest) -> CallOutcome: ...
