"""What a retried model call says while it waits, and a design answer that names its files (UX audit s48).

The warning said ``model call failed (APITimeoutError); retry 1 in 1.0s`` (a class name) and ``(500)`` (a bare
number); the final error ended in ``Request timed out.;``. Now: the endpoint, ``HTTP 500`` / ``no answer within
[llm] timeout_s``, and ``retry 1 of 4``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from agents_fake_openai import FakeOpenAIServer, error
from agents_fixtures import _isolated_env  # noqa: F401  (autouse)
from test_agents_roles import _impl_ctx

from agents import Trace, build_agents
from agents.contracts import AgentError
from agents.llm import LLMError


def _dispatch(tmp_path: Path, script, toml: str = "") -> object:
    with FakeOpenAIServer(script) as server:
        op = tmp_path / "op"
        op.mkdir(parents=True, exist_ok=True)
        (op / "forge.toml").write_text('[models]\ndefault = "fake-model"\n[llm]\nbase_url = "'
                                       f'{server.base_url}"\nbackoff_s = 0.0\n' + toml)
        trace = Trace(tmp_path / "run" / "trace", run_id="run", mode="record", op_dir=op)
        try:
            return build_agents(op, trace=trace).implement(_impl_ctx())
        except (AgentError, LLMError) as exc:
            return exc
        finally:
            trace.close()


def test_an_http_error_retry_names_the_status_and_the_count(tmp_path: Path, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="agents.llm"):
        result = _dispatch(tmp_path, [error(500, "boom")] * 3, "max_retries = 2\n")
    assert isinstance(result, LLMError)
    said = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert len(said) == 2 and all("/v1 failed (HTTP 500); retry " in m for m in said), said
    assert said[0].endswith("retry 1 of 2 in 0.0 s") and said[1].endswith("retry 2 of 2 in 0.0 s"), said


def test_a_timeout_or_a_lost_connection_is_said_in_words() -> None:
    import httpx
    import openai

    from agents.llm._openai import _failure, _why_retried

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    timeout = openai.APITimeoutError(request=request)
    assert _why_retried(timeout, None, openai) == "no answer within [llm] timeout_s"
    lost = openai.APIConnectionError(message="Connection error.", request=request)
    assert _why_retried(lost, None, openai) == "connection failed: Connection error"
    assert _failure(timeout, None, "http://127.0.0.1:9/v1", 1) == \
        "no answer from http://127.0.0.1:9/v1 after 1 retry: Request timed out"


@pytest.mark.parametrize(("design_md", "interfaces", "said"), [
    ("silu.md", "module_interfaces.yaml", "module_interfaces_yaml holds 'module_interfaces.yaml', a file name"),
    ("DESIGN.md", "modules: []", "design_md holds 'DESIGN.md', a file name: put the file's full text"),
])
def test_a_design_answer_naming_its_files_is_told_to_send_their_text(design_md, interfaces, said) -> None:
    """SmolLM2's design answer named the files (``"module_interfaces_yaml": "module_interfaces.yaml"``); the repair
    said "is not a YAML mapping" and the model sent the same answer again."""
    from test_agents_roles import _design_ctx

    from agents.roles._base import AnswerError
    from agents.roles.designer import DesignAnswer, check_design

    answer = DesignAnswer(design_md=design_md, module_interfaces_yaml=interfaces)
    with pytest.raises(AnswerError) as info:
        check_design(answer, _design_ctx())
    assert said in str(info.value), str(info.value)
