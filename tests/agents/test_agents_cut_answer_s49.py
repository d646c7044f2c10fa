"""An endpoint that closes the connection in the middle of its answer is said so (UX audit s49).

It was ``no answer from URL after 4 retries: Connection error`` - though an answer had begun, and httpx says how
much of it came. The SDK wraps the transport's reason under its generic ``Connection error.``; the warning and the
final message now carry it.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from agents_fixtures import _isolated_env  # noqa: F401  (autouse)
from test_agents_roles import _impl_ctx

from agents import Trace, build_agents
from agents.contracts import AgentError
from agents.llm import LLMError

BODY = b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": [{"index": 0, "mess'


class _CutHandler(BaseHTTPRequestHandler):
    def log_message(self, *_args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - no model list: the server is not asked which models it serves
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "253")
        self.end_headers()
        self.wfile.write(BODY)
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)


@pytest.fixture()
def cut_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CutHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_a_cut_answer_is_named_with_how_much_came(tmp_path: Path, cut_server: str, caplog) -> None:
    op = tmp_path / "op"
    op.mkdir()
    (op / "forge.toml").write_text(f'[models]\ndefault = "fake-model"\n[llm]\nbase_url = "{cut_server}"\n'
                                   "backoff_s = 0.0\nmax_retries = 1\n")
    trace = Trace(tmp_path / "run" / "trace", run_id="run", mode="record", op_dir=op)
    try:
        with caplog.at_level(logging.WARNING, logger="agents.llm"):
            result: object = build_agents(op, trace=trace).implement(_impl_ctx())
    except (AgentError, LLMError) as exc:
        result = exc
    finally:
        trace.close()
    assert isinstance(result, LLMError), result
    came = f"the endpoint closed the connection in the middle of its answer ({len(BODY)} of 253 bytes came)"
    assert came in str(result) and str(result).startswith(f"no answer from {cut_server} after 1 retry: "), result
    warned = [r.getMessage() for r in caplog.records if "retry 1 of 1" in r.getMessage()]
    assert warned and came in warned[0], warned


def test_a_message_without_a_cause_is_kept() -> None:
    import httpx
    import openai

    from agents.llm._openai import _detail

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    lost = openai.APIConnectionError(message="Connection error.", request=request)
    assert _detail(lost) == "Connection error"
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as inner:
            raise openai.APIConnectionError(message="Connection error.", request=request) from inner
    except openai.APIConnectionError as exc:
        assert _detail(exc) == "Connection error: [Errno 111] Connection refused"
