"""A first-class fake provider driven by a queue or a callable (tests, demos, offline development)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agents.llm._types import CallOutcome, ChatRequest, ChatResponse, LLMError, ToolCall, Usage

__all__ = ["ScriptedProvider", "text_response", "tool_response"]


def text_response(text: str, *, prompt_tokens: int = 0, completion_tokens: int = 0) -> ChatResponse:
    return ChatResponse(
        text=text,
        finish_reason="stop",
        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                    total_tokens=prompt_tokens + completion_tokens),
    )


def tool_response(name: str, arguments: str, *, call_id: str = "call_0") -> ChatResponse:
    return ChatResponse(tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)],
                        finish_reason="tool_calls")


Script = Iterable[ChatResponse | str] | Callable[[ChatRequest], ChatResponse | str]


class ScriptedProvider:
    """Answers requests from a script: a list (consumed in order) or a function of the request.

    Strings are shorthand for a plain text answer. Every request is kept in :attr:`requests`.
    """

    base_url = "scripted://local"

    def __init__(self, script: Script) -> None:
        self._fn = script if callable(script) else None
        self._queue = [] if callable(script) else list(script)
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> CallOutcome:
        self.requests.append(request)
        if self._fn is not None:
            item = self._fn(request)
        elif self._queue:
            item = self._queue.pop(0)
        else:
            raise LLMError(f"scripted provider has no answer left for request #{len(self.requests)}")
        response = text_response(item) if isinstance(item, str) else item
        return CallOutcome(response=response, raw=response.model_dump(mode="json"))
