"""The real provider: any OpenAI-compatible chat-completions endpoint through the ``openai`` SDK.

The SDK's own retries are switched off; :class:`RetryPolicy` decides (deterministic backoff, injectable
sleep) so that tests and traces see exactly which attempts happened. The API key is held only in memory.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

from agents.llm._pricing import PriceTable
from agents.llm._retry import DEFAULT_SLEEP, RetryPolicy, Sleep, is_retryable_status
from agents.llm._types import CallOutcome, ChatRequest, ChatResponse, LLMError, ToolCall, Usage

__all__ = ["OpenAIProvider", "model_refused", "served_models", "unreachable_reason"]

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
                if isinstance(exc, oa.APIConnectionError) and (why := unreachable_reason(exc)) is not None:
                    # UX audit s45: a host that does not resolve took 4 retries (~15 s of backoff) to say
                    # "Connection error."; waiting does not make a name resolve or a port listen
                    raise LLMError(f"cannot reach {self.endpoint}: {why}", retries=retries,
                                   endpoint=self.endpoint) from exc
                transient = isinstance(exc, oa.APIConnectionError) or is_retryable_status(status)
                if not transient or retries >= self._retry.max_retries:
                    raise LLMError(_failure(exc, status, self.endpoint, retries), status=status,
                                   retries=retries, endpoint=self.endpoint) from exc
                wait = self._retry.delay(retries, _retry_after(exc))
                log.warning("model call to %s failed (%s); retry %d of %d in %.1f s", self.endpoint,
                            _why_retried(exc, status, oa), retries + 1, self._retry.max_retries, wait)
                self._sleep(wait)
                retries += 1
            except (oa.OpenAIError, ValueError) as exc:  # e.g. a 200 whose body is not JSON / not a completion
                raise LLMError(f"{self.endpoint} answered something that is not a chat completion: "
                               f"{_not_json(exc) or _short(str(exc))}", retries=retries,
                               endpoint=self.endpoint) from exc
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


REFUSED = "nothing listens there (connection refused; is the model server running, on that port?)"


def unreachable_reason(exc: BaseException) -> str | None:
    """Why a connection could not even be opened, when waiting would not change it; None otherwise.

    Retries are for what passes (429, 5xx, a timeout, a reset connection). A host name that does not resolve
    (DNS) and a port where nothing listens (connection refused) are the configuration's mistake: they are
    named at once. Read from the exception chain the SDK wraps (``APIConnectionError`` <- ``httpx.ConnectError``
    <- ``socket.gaierror`` / ``ConnectionRefusedError``).
    """
    import socket

    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and all(cur is not c for c in chain):
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    for cur in chain:  # the OS's own error first: the wrappers' texts repeat it with decorations
        if isinstance(cur, socket.gaierror):
            if cur.errno == socket.EAI_AGAIN:  # "temporary failure in name resolution": the DNS server, not the name
                return None
            return f"the host name does not resolve ({cur.strerror or cur}); check the URL's host"
        if isinstance(cur, ConnectionRefusedError):
            return REFUSED
    for cur in chain:
        text = str(cur)
        if any(s in text for s in ("Name or service not known", "nodename nor servname", "No address associated")):
            return f"the host name does not resolve ({_short(text, 120)}); check the URL's host"
        if "Connection refused" in text:
            return REFUSED
    return None


def served_models(base_url: str, api_key: str | None, timeout_s: float = 5.0) -> list[str] | None:
    """The model ids the endpoint lists (``GET {base_url}/models``), or None when it cannot tell.

    Why: a run given a model the server does not serve found out at its first model call, after intake had run
    golden.py on every case and the bad name was saved in ``run.json`` (UX audit s45). Not every compatible server
    lists its models (404, 401 without a key, a proxy): anything but a list is None, and the run goes on as before.

    Raises:
        LLMError: the endpoint cannot be reached at all (:func:`unreachable_reason`).
    """
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0)
    try:
        page = client.models.list()
        return sorted({str(m.id) for m in page.data if getattr(m, "id", None)}) or None
    except openai.APIConnectionError as exc:
        why = unreachable_reason(exc)
        if why is not None:
            raise LLMError(f"cannot reach {_endpoint(str(client.base_url))}: {why}",
                           endpoint=_endpoint(str(client.base_url))) from exc
        return None
    except Exception:  # noqa: BLE001 - a server that does not list models (or answers garbage) cannot tell
        log.debug("GET %s/models told nothing", base_url, exc_info=True)
        return None
    finally:
        client.close()


def model_refused(base_url: str, api_key: str | None, model: str, timeout_s: float = 5.0) -> str | None:
    """What the endpoint says when it refuses ``model`` (HTTP 404 to a 1-token request), else None.

    Used only after :func:`served_models` did not list the name: servers that list one model and answer to any
    name (llama.cpp) or resolve aliases must not be refused on their listing alone.
    """
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0)
    try:
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": "ping"}], max_tokens=1)
    except openai.NotFoundError as exc:
        body = getattr(getattr(exc, "response", None), "text", "") or str(exc)
        return f"HTTP 404: {_short(body, 160)}"
    except Exception:  # noqa: BLE001 - anything but a 404 does not say the model is missing
        log.debug("probe of model %s at %s told nothing", model, base_url, exc_info=True)
    finally:
        client.close()
    return None


def _not_json(exc: BaseException) -> str | None:
    """``the body is not JSON; it starts '...'`` when the SDK could not decode the body, else None.

    Why: a 200 of bytes that are not UTF-8 said ``'utf-16-be' codec can't decode byte 0x7b in position 12`` (the
    JSON decoder's guess at an encoding, UX audit s45): what the endpoint sent is what a user can act on."""
    body: str | None = None
    if isinstance(exc, json.JSONDecodeError):
        body = exc.doc
    elif isinstance(exc, UnicodeDecodeError):
        body = bytes(exc.object).decode("utf-8", "replace")
    if body is None:
        return None
    start = body.strip()[:80]
    return f"the body is not JSON; it starts {start!r}" if start else "the body is empty"


def _endpoint(base_url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base_url)
    host = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def _failure(exc: Exception, status: int | None, endpoint: str, retries: int) -> str:
    """One line: what failed, where, after how many retries, and what the endpoint said."""
    tries = f"after {retries} {'retry' if retries == 1 else 'retries'}"
    if status is None:
        return f"no answer from {endpoint} {tries}: {_detail(exc) or type(exc).__name__}"
    response = getattr(exc, "response", None)
    body = ""
    try:
        body = response.text if response is not None else ""
    except Exception:  # a streamed/closed body: fall back to the SDK's message
        body = ""
    return f"HTTP {status} from {endpoint} {tries}: {_short(body or str(exc), 200) or '(empty body)'}"


def _why_retried(exc: Exception, status: int | None, oa: Any) -> str:
    """What a retried call met, in words: ``HTTP 500``, ``no answer within the timeout``, ``connection failed``.

    Why (UX audit s48): the warning said ``(APITimeoutError)``, a class name, and ``(500)`` without saying it is
    an HTTP status."""
    if status is not None:
        return f"HTTP {status}"
    if isinstance(exc, oa.APITimeoutError):
        return "no answer within [llm] timeout_s"
    return f"connection failed: {_detail(exc, 160)}" if str(exc) else "connection failed"


def _detail(exc: BaseException, limit: int = 300) -> str:
    """The SDK's message, and the transport's reason under it when the SDK says only ``Connection error.``.

    Why (UX audit s49): an endpoint that closed the connection in the middle of its answer (a proxy's timeout, a
    server restarting) was reported as ``no answer from URL after 4 retries: Connection error``, though an answer
    had begun; httpx says how much of it came (``received 31 bytes, expected 253``)."""
    text = _short(str(exc), limit).rstrip(".")
    cause, depth = exc.__cause__, 0
    while cause is not None and depth < 8 and (not str(cause) or str(cause).rstrip(".") == text):
        cause, depth = cause.__cause__, depth + 1
    if cause is None or depth >= 8:
        return text
    inner = str(cause)
    if "complete message body" in inner:
        got = re.search(r"received (\d+) bytes, expected (\d+)", inner)
        cut = f" ({got.group(1)} of {got.group(2)} bytes came)" if got else ""
        return f"{text}: the endpoint closed the connection in the middle of its answer{cut}"
    return f"{text}: {_short(inner, limit)}".rstrip(".")


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
