"""The real openai client path against a local fake OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest
from agents_fake_openai import FakeOpenAIServer, Reply, completion, error
from agents_fixtures import _isolated_env  # noqa: F401  (autouse)

from agents.llm import ChatRequest, LLMError, OpenAIProvider, Price, PriceTable, RetryPolicy


def _provider(server: FakeOpenAIServer, sleeps: list[float], **kw) -> OpenAIProvider:
    return OpenAIProvider(base_url=server.base_url, api_key="sk-test-123456", timeout_s=5.0,
                          retry=kw.pop("retry", RetryPolicy(max_retries=3, backoff_s=0.5)),
                          sleep=sleeps.append, **kw)


REQ = ChatRequest(model="fake-model", messages=[{"role": "user", "content": "hello"}], params={"temperature": 0.0})


def test_text_answer_usage_and_request_body() -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer([completion("hi there", prompt_tokens=12, completion_tokens=3)]) as server:
        outcome = _provider(server, sleeps).complete(REQ)
    assert outcome.response.text == "hi there"
    assert outcome.response.usage.prompt_tokens == 12 and outcome.response.usage.total_tokens == 15
    assert outcome.retries == 0 and sleeps == []
    assert outcome.latency_s >= 0
    body = server.requests[0]
    assert body["model"] == "fake-model" and body["messages"] == REQ.messages and body["temperature"] == 0.0
    assert server.headers[0]["authorization"] == "Bearer sk-test-123456"
    assert outcome.raw["choices"][0]["message"]["content"] == "hi there"


def test_tool_calls_and_structured_output_are_passed_both_ways() -> None:
    tools = [{"type": "function", "function": {"name": "read_skill", "parameters": {"type": "object"}}}]
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    req = REQ.model_copy(update={"tools": tools, "tool_choice": "auto", "response_format": fmt})
    with FakeOpenAIServer([completion(tool_calls=[("read_skill", '{"section": "patterns"}')])]) as server:
        outcome = _provider(server, []).complete(req)
    call = outcome.response.tool_calls[0]
    assert (call.name, json.loads(call.arguments)) == ("read_skill", {"section": "patterns"})
    assert outcome.response.finish_reason == "tool_calls"
    assert server.requests[0]["tools"] == tools
    assert server.requests[0]["tool_choice"] == "auto"
    assert server.requests[0]["response_format"] == fmt


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_error_then_success_retries_with_backoff(status: int) -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer([error(status), completion("ok")]) as server:
        outcome = _provider(server, sleeps).complete(REQ)
    assert outcome.response.text == "ok"
    assert outcome.retries == 1
    assert sleeps == [0.5]
    assert len(server.requests) == 2


def test_retry_after_header_is_honoured_and_backoff_grows() -> None:
    sleeps: list[float] = []
    script = [error(429, headers={"retry-after": "2"}), error(500), error(502), completion("done")]
    with FakeOpenAIServer(script) as server:
        outcome = _provider(server, sleeps).complete(REQ)
    assert outcome.retries == 3
    assert sleeps == [2.0, 1.0, 2.0]


def test_retries_exhausted_raises_clear_error() -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer([error(500)] * 3) as server:
        with pytest.raises(LLMError) as info:
            _provider(server, sleeps, retry=RetryPolicy(max_retries=2, backoff_s=0.1)).complete(REQ)
    assert info.value.status == 500 and info.value.retries == 2
    # what happened, where, after how many retries, and what the endpoint said (its body)
    assert str(info.value) == (f"HTTP 500 from {server.base_url} after 2 retries: "
                               '{"error": {"message": "try later", "type": "server_error"}}')
    assert len(sleeps) == 2


def test_client_error_is_not_retried() -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer([error(400, "bad request"), completion("never")]) as server:
        with pytest.raises(LLMError) as info:
            _provider(server, sleeps).complete(REQ)
    assert info.value.status == 400 and sleeps == [] and len(server.requests) == 1
    assert str(info.value).startswith(f"HTTP 400 from {server.base_url} after 0 retries: ")
    assert "bad request" in str(info.value)


def test_unreachable_endpoint_says_no_answer_and_where() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    provider = OpenAIProvider(base_url=f"http://user:pw@127.0.0.1:{port}/v1", api_key="k", timeout_s=2.0,
                              retry=RetryPolicy(max_retries=1, backoff_s=0.0), sleep=lambda s: None)
    with pytest.raises(LLMError) as info:
        provider.complete(REQ)
    # s45: nothing listening is said at once (no retries: waiting does not make a port listen)
    assert str(info.value) == (f"cannot reach http://127.0.0.1:{port}/v1: nothing listens there (connection "
                               "refused; is the model server running, on that port?)")
    assert "pw" not in str(info.value) and info.value.status is None and info.value.retries == 0


def test_malformed_json_body_is_an_error_not_a_crash() -> None:
    with FakeOpenAIServer([Reply(200, "{not json")]) as server:
        with pytest.raises(LLMError) as info:
            _provider(server, []).complete(REQ)
    assert str(info.value).startswith(f"{server.base_url} answered something that is not a chat completion: ")


def test_price_table_gives_cost_and_unknown_model_has_none() -> None:
    prices = PriceTable(prices={"fake-model": Price(prompt_per_mtok=2.0, completion_per_mtok=8.0)})
    with FakeOpenAIServer([completion("a", prompt_tokens=1000, completion_tokens=500),
                           completion("b")]) as server:
        p = _provider(server, [], prices=prices)
        first = p.complete(REQ)
        second = p.complete(REQ.model_copy(update={"model": "other"}))
    assert first.cost_usd == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1e6)
    assert second.cost_usd is None
