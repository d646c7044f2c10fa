"""An answer that copies the answer format's placeholders is told so (UX audit s49, ``--model local``).

SmolLM2-135M answered the designer with the prompt's format verbatim (``"design_md": "<full DESIGN.md>",
"module_interfaces_yaml": "<full YAML>"``) and was told "module_interfaces.yaml is not a YAML mapping"; it sent the
same answer again and the design stopped after 4.5 minutes. The repair message now names the placeholders.
"""

from __future__ import annotations

import json
from pathlib import Path

from agents_fake_openai import FakeOpenAIServer, completion
from agents_fixtures import _isolated_env  # noqa: F401  (autouse)
from pydantic import BaseModel
from test_agents_roles import _impl_ctx

from agents import Trace, build_agents
from agents.contracts import AgentError
from agents.llm import LLMError
from agents.roles._answer import AnswerError, pick


class _Design(BaseModel):
    design_md: str
    module_interfaces_yaml: str
    rationale: str | None = None


def _refuse(_answer: _Design) -> str:
    raise AnswerError("module_interfaces.yaml is not a YAML mapping")


def test_a_copied_format_names_its_placeholders() -> None:
    text = '{"design_md": "<full DESIGN.md>", "module_interfaces_yaml": " <full YAML> ", "rationale": null}'
    try:
        pick(text, _Design, _refuse)
    except AnswerError as exc:
        said = str(exc)
    else:
        raise AssertionError("a placeholder answer was taken")
    assert said.startswith("design_md holds '<full DESIGN.md>', module_interfaces_yaml holds '<full YAML>': "
                           "a placeholder copied from the answer format"), said
    assert "put the real content in its place" in said


def test_a_passing_answer_with_a_placeholder_note_is_taken() -> None:
    assert pick('{"design_md": "D", "module_interfaces_yaml": "Y", "rationale": "<why>"}', _Design,
                lambda a: a.design_md) == "D"


def test_a_failing_answer_without_placeholders_keeps_its_reason() -> None:
    try:
        pick('{"design_md": "<b>bold</b> text", "module_interfaces_yaml": "x", "rationale": null}', _Design, _refuse)
    except AnswerError as exc:
        assert str(exc) == "module_interfaces.yaml is not a YAML mapping"
    else:
        raise AssertionError("taken")


def test_the_implementer_is_told_over_the_wire(tmp_path: Path) -> None:
    copied = json.dumps({"path": "<exactly the target file>", "content": "<complete Python source>",
                         "notes": "<short>"})
    with FakeOpenAIServer([completion(copied)] * 4) as server:
        op = tmp_path / "op"
        op.mkdir()
        (op / "forge.toml").write_text(f'[models]\ndefault = "fake-model"\n[llm]\nbase_url = "{server.base_url}"\n'
                                       "backoff_s = 0.0\n")
        trace = Trace(tmp_path / "run" / "trace", run_id="run", mode="record", op_dir=op)
        try:
            result: object = build_agents(op, trace=trace).implement(_impl_ctx())
        except (AgentError, LLMError) as exc:
            result = exc
        finally:
            trace.close()
        repair = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "user"][-1]
    assert isinstance(result, AgentError), result
    assert "path holds '<exactly the target file>'" in repair and "placeholder copied" in repair, repair
    assert "placeholder copied from the answer format" in str(result), result
