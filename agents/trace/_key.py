"""The request key: what makes two model calls "the same call" for replay.

key = sha256 of the canonical JSON (sorted keys, no whitespace) of
``{model, base_url, params (defaults filled), messages (normalized), tools, tool_choice, response_format}``.
Volatile things never enter: API keys, request ids, timestamps, timeouts, retry settings. Tool-call ids
(chosen by the model) are renumbered in order of appearance so a re-recorded conversation keys the same.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agents.llm import ChatRequest

__all__ = [
    "DEFAULT_PARAMS",
    "VOLATILE_PARAMS",
    "canonical_json",
    "canonical_request",
    "flatten_request",
    "normalize_base_url",
    "request_key",
    "sha256_text",
]

DEFAULT_PARAMS: dict[str, Any] = {
    "temperature": 0.0,
    "top_p": 1.0,
    "max_tokens": None,
    "seed": None,
    "n": 1,
    "stop": None,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
}
"""Filled in before keying, so "temperature not given" and "temperature=0" are the same request."""

VOLATILE_PARAMS = frozenset(
    {"timeout", "max_retries", "request_id", "user", "extra_headers", "extra_query", "api_key", "stream_options"}
)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_text(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def normalize_base_url(url: str | None) -> str:
    """Scheme, host, port and path only: credentials and query strings are dropped, no trailing slash."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def _normalize_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids: dict[str, str] = {}

    def renumber(call_id: Any) -> str:
        key = str(call_id)
        if key not in ids:
            ids[key] = f"call_{len(ids)}"
        return ids[key]

    out: list[dict[str, Any]] = []
    for message in messages:
        m: dict[str, Any] = {"role": message.get("role")}
        content = message.get("content")
        if content is not None:
            m["content"] = content
        if message.get("name"):
            m["name"] = message["name"]
        if message.get("tool_calls"):
            m["tool_calls"] = [
                {
                    "id": renumber(c.get("id")),
                    "type": c.get("type", "function"),
                    "function": {
                        "name": (c.get("function") or {}).get("name"),
                        "arguments": (c.get("function") or {}).get("arguments"),
                    },
                }
                for c in message["tool_calls"]
            ]
        if message.get("tool_call_id") is not None:
            m["tool_call_id"] = renumber(message["tool_call_id"])
        out.append(m)
    return out


def canonical_request(request: ChatRequest, base_url: str | None) -> dict[str, Any]:
    """The keyed form of a request (also what a replay miss is diffed on)."""
    params = {**DEFAULT_PARAMS, **{k: v for k, v in request.params.items() if k not in VOLATILE_PARAMS}}
    return {
        "model": request.model,
        "base_url": normalize_base_url(base_url),
        "params": params,
        "messages": _normalize_messages(request.messages),
        "tools": request.tools or [],
        "tool_choice": request.tool_choice if request.tools else None,
        "response_format": request.response_format,
    }


def request_key(canonical: dict[str, Any]) -> str:
    return sha256_text(canonical_json(canonical))


def flatten_request(canonical: dict[str, Any]) -> list[tuple[str, Any]]:
    """Field paths in a fixed order, e.g. ``model``, ``params.temperature``, ``messages[3].content``."""
    fields: list[tuple[str, Any]] = [("model", canonical.get("model")), ("base_url", canonical.get("base_url"))]
    for name, value in sorted((canonical.get("params") or {}).items()):
        fields.append((f"params.{name}", value))
    for i, message in enumerate(canonical.get("messages") or []):
        for name in ("role", "content", "name", "tool_calls", "tool_call_id"):
            if name in message:
                fields.append((f"messages[{i}].{name}", message[name]))
    fields.append(("messages.length", len(canonical.get("messages") or [])))
    tools = canonical.get("tools") or []
    for i, tool in enumerate(tools):
        fields.append((f"tools[{i}]", tool))
    fields.append(("tools.length", len(tools)))
    fields.append(("tool_choice", canonical.get("tool_choice")))
    fields.append(("response_format", canonical.get("response_format")))
    return fields
