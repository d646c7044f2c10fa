"""The real provider: any OpenAI-compatible chat-completions endpoint through the ``openai`` SDK.

The SDK's own retries are switched off; :class:`RetryPolicy` decides (deterministic backoff, injectable
sleep) so that tests and traces see exactly which attempts happened. The API key is held only in memory.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from agents.llm._pricing import PriceTable
from agents.llm._retry import DEFAULT_SLEEP, RetryPolicy, Sleep, is_retryable_status
from agents.llm._types import CallOutcome, ChatRequest, ChatResponse, LLMError, ToolCall, Usage

__all__ = ["OpenAIProvider"]

log = logging.getLogger(__name__)


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def parse_completion(raw: dict[str, Any]) -> ChatResponse:
    """Turn a chat-completions JSON body into a :class:`ChatResponse` (first choice only)."""
    choices = raw.get("choices") or []
    if not choices:
        raise LLMError("endpoint returned no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    calls = [
        ToolCall(
            id=str(c.get("id") or f"call_{i}"),
            name=str((c.get("function") or {}).get("name") or ""),
            arguments=str((c.get("function") or {}).get("arguments") or ""),
        )
        for i, c in enumerate(message.get("tool_calls") or [])
    ]
    usage = raw.get("usage") or {}
    return ChatResponse(
        text=message.get("content"),
        tool_calls=calls,
        finish_reason=choice.get("finish_reason"),
        usage=Usage(
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            total_tokens=int(usage.get("total_tokens") or 0),
        ),
        model=raw.get("model"),
    )


class OpenAIProvider:
    """Chat completions against ``base_url`` with ``openai.OpenAI``.

    Example::

        provider = OpenAIProvider(base_url="http://127.0.0.1:8000/v1", api_key="sk-...")
        outcome = provider.complete(ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}]))
    """

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        sleep: Sleep = DEFAULT_SLEEP,
        prices: PriceTable | None = None,
        endpoint_label: str | None = None,
    ) -> None:
        import openai  # imported here so that replay never even loads the HTTP stack

        self._openai = openai
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0
        )
        self.base_url = str(self._client.base_url)
        self.endpoint = endpoint_label or _endpoint(self.base_url)
        """How error messages name the endpoint (scheme, host, port and path: never credentials)."""
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._prices = prices or PriceTable()

    def complete(self, request: ChatRequest) -> CallOutcome:
        kwargs: dict[str, Any] = {"model": request.model, "messages": request.messages, **request.params}
        if request.tools:
            kwargs["tools"] = request.tools
        if request.tool_choice is not None and request.tools:
            kwargs["tool_choice"] = request.tool_choice
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        oa = self._openai
        retries = 0
        start = time.monotonic()
        while True:
            try:
                completion = self._client.chat.completions.create(**kwargs)
                break
            except (oa.APIConnectionError, oa.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                transient = isinstance(exc, oa.APIConnectionError) or is_retryable_status(status)
                if not transient or retries >= self._retry.max_retries:
                    raise LLMError(_failure(exc, status, self.endpoint, retries), status=status,
                                   retries=retries, endpoint=self.endpoint) from exc
                wait = self._retry.delay(retries, _retry_after(exc))
                log.warning("model call failed (%s); retry %d in %.1fs", status or type(exc).__name__,
                            retries + 1, wait)
                self._sleep(wait)
                retries += 1
            except (oa.OpenAIError, ValueError) as exc:  # e.g. a 200 whose body is not JSON / not a completion
                raise LLMError(f"{self.endpoint} answered something that is not a chat completion: "
                               f"{_short(str(exc))}", retries=retries, endpoint=self.endpoint) from exc
        latency = time.monotonic() - start
        if not hasattr(completion, "model_dump"):
            raise LLMError(f"{self.endpoint} answered something that is not a chat completion: "
                           f"{_short(repr(completion))}", retries=retries, endpoint=self.endpoint)
        raw = completion.model_dump(mode="json", exclude_none=True)
        try:
            response = parse_completion(raw)
        except LLMError as exc:
            raise LLMError(f"{self.endpoint}: {exc}", retries=retries, endpoint=self.endpoint) from None
        return CallOutcome(
            response=response,
            latency_s=latency,
            retries=retries,
            cost_usd=self._prices.cost(request.model, response.usage),
            raw=raw,
        )


def _endpoint(base_url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base_url)
    host = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def _failure(exc: Exception, status: int | None, endpoint: str, retries: int) -> str:
    """One line: what failed, where, after how many retries, and what the endpoint said."""
    tries = f"after {retries} {'retry' if retries == 1 else 'retries'}"
    if status is None:
        return f"no answer from {endpoint} {tries}: {_short(str(exc)) or type(exc).__name__}"
    response = getattr(exc, "response", None)
    body = ""
    try:
        body = response.text if response is not None else ""
    except Exception:  # a streamed/closed body: fall back to the SDK's message
        body = ""
    return f"HTTP {status} from {endpoint} {tries}: {_short(body or str(exc), 200) or '(empty body)'}"


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
