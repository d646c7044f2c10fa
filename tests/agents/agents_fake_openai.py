"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 (stdlib only) for tests of the real client path."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def completion(text: str | None = None, *, tool_calls: list[tuple[str, str]] | None = None,
               prompt_tokens: int = 11, completion_tokens: int = 7, model: str = "fake-model",
               finish_reason: str | None = None) -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}
            for i, (name, args) in enumerate(tool_calls)
        ]
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop")}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }
    return Reply(200, json.dumps(body))


def error(status: int, message: str = "try later", headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps({"error": {"message": message, "type": "server_error"}}), headers or {})


class FakeOpenAIServer:
    """Serves POST /v1/chat/completions from a script: a list of :class:`Reply` (consumed in order) or a
    function of the request body. ``models``: what ``GET /v1/models`` lists (None: 404, as servers that do not
    list their models answer)."""

    def __init__(self, script: list[Reply] | Callable[[dict[str, Any]], Reply], *,
                 models: list[str] | None = None) -> None:
        self.models = models
        self.answer = script if callable(script) else None
        self.script = [] if callable(script) else list(script)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                try:
                    server.requests.append(json.loads(raw))
                except ValueError:
                    server.requests.append({"_raw": raw.decode("utf-8", "replace")})
                if server.answer is not None:
                    reply = server.answer(server.requests[-1])
                else:
                    reply = server.script.pop(0) if server.script else error(500, "script exhausted")
                data = reply.body.encode("utf-8")
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if server.models is None or not self.path.rstrip("/").endswith("/models"):
                    status, body = 404, json.dumps({"error": {"message": "Not Found"}})
                else:
                    status, body = 200, json.dumps({"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in server.models]})
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
