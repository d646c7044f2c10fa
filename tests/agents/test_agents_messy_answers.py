"""What real models send, through the real openai client over HTTP (a scripted server on 127.0.0.1).

Each form (a fence with prose around it, several candidate objects, a truncated answer, a tool call written
as text, the same failure twice, an endpoint that keeps failing) has one test of the whole path: build_agents
-> role loop -> OpenAIProvider -> HTTP -> answer extraction -> trace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agents_fake_openai import FakeOpenAIServer, completion, error
from agents_fixtures import _isolated_env  # noqa: F401  (autouse)
from test_agents_roles import KERNEL, _impl_ctx

from agents import Trace, build_agents
from agents.contracts import AgentError
from agents.llm import LLMError
from agents.roles._answer import without_reasoning
from agents.trace import TraceReader

GOOD = {"path": "silu_impl.py", "content": KERNEL, "notes": "row kernel"}


def _run(tmp_path: Path, script: list, *, toml: str = "", **ctx_kw):
    """One implementer dispatch against the scripted server; returns (result or error, server requests, trace)."""
    with FakeOpenAIServer(script) as server:
        op = tmp_path / "op"
        op.mkdir(parents=True, exist_ok=True)
        (op / "forge.toml").write_text('[models]\ndefault = "fake-model"\n[llm]\nbase_url = "'
                                       f'{server.base_url}"\nbackoff_s = 0.0\nmax_repairs = 3\n' + toml)
        trace = Trace(tmp_path / "run" / "trace", run_id="run", mode="record", op_dir=op)
        agents = build_agents(op, trace=trace)
        try:
            outcome: object = agents.implement(_impl_ctx(**ctx_kw))
        except (AgentError, LLMError) as exc:
            outcome = exc
        trace.close()
    return outcome, server.requests, TraceReader(tmp_path / "run")


def test_fenced_answer_with_prose_around_it_is_accepted_at_once(tmp_path: Path) -> None:
    text = ("Here you go:\n\n```json\n" + json.dumps(GOOD, indent=2) + "\n```\n\nLet me know if you need "
            "anything else!")
    result, requests, _ = _run(tmp_path, [completion(text)])
    assert not isinstance(result, Exception) and result.content == KERNEL
    assert len(requests) == 1


def test_several_candidates_take_the_one_that_validates(tmp_path: Path) -> None:
    draft = {"path": "modules/draft.py", "content": KERNEL}  # right shape, wrong file: fails the checks
    example = {"name": "example", "value": 1}  # wrong shape
    text = (f"A schema example: {json.dumps(example)}. My first draft was {json.dumps(draft)}.\n"
            f"Final answer:\n```\n{json.dumps(GOOD)}\n```")
    result, requests, _ = _run(tmp_path, [completion(text)])
    assert not isinstance(result, Exception) and result.notes == "row kernel"
    assert len(requests) == 1


def test_truncated_answer_says_so_and_the_next_request_asks_for_less(tmp_path: Path) -> None:
    cut = json.dumps(GOOD)[:120]
    script = [completion(cut, finish_reason="length", completion_tokens=64), completion(json.dumps(GOOD))]
    result, requests, trace = _run(tmp_path, script, toml="max_tokens = 64\n")
    assert not isinstance(result, Exception) and result.content == KERNEL
    repair = requests[1]["messages"][-1]["content"]
    assert "cut off at the token limit (64 tokens)" in repair and "shorter answer" in repair
    assert [c.finish_reason for c in trace.llm_calls] == ["length", "stop"]


def test_an_answer_cut_off_by_the_context_window_says_so(tmp_path: Path) -> None:
    """UX audit s33: 678 tokens of a 1200-token limit were generated when the prompt filled the server's context; the
    message named the token limit, which raising cannot help."""
    cut = json.dumps(GOOD)[:120]
    script = [completion(cut, finish_reason="length", completion_tokens=678), completion(json.dumps(GOOD))]
    result, requests, _ = _run(tmp_path, script, toml="max_tokens = 1200\n")
    assert not isinstance(result, Exception) and result.content == KERNEL
    repair = requests[1]["messages"][-1]["content"]
    assert "cut off after 678 tokens, below the token limit (1200 tokens)" in repair and "context window" in repair


def test_tool_call_written_as_text_is_run_as_a_tool_call(tmp_path: Path) -> None:
    written = ('I will read the pattern first.\n<tool_call>\n{"name": "read_skill", "arguments": '
               '{"section": "patterns#tail-valid-shape"}}\n</tool_call>')
    result, requests, trace = _run(tmp_path, [completion(written), completion(json.dumps(GOOD))])
    assert not isinstance(result, Exception) and result.content == KERNEL
    [tool] = [e for e in trace.events if e.kind == "tool_call"]
    assert tool.tool == "read_skill" and tool.arguments == {"section": "patterns#tail-valid-shape"}
    follow_up = requests[1]["messages"][-1]
    assert follow_up["role"] == "user" and follow_up["content"].startswith("Result of read_skill:")
    assert "valid_shape" in follow_up["content"]


def test_same_answer_twice_stops_early_with_the_reason(tmp_path: Path) -> None:
    wrong = json.dumps({**GOOD, "path": "other.py"})
    result, requests, trace = _run(tmp_path, [completion(wrong)] * 4)
    assert isinstance(result, AgentError) and result.stop
    assert len(requests) == 2 and result.model_calls == 2 == len(trace.llm_calls)
    assert result.reason.startswith("the model sent a byte-identical answer twice in a row (2 tries): path must be")


def test_same_parse_error_twice_stops_early(tmp_path: Path) -> None:
    script = [completion("Sure! The kernel computes x * sigmoid(x)."),
              completion("I cannot write JSON, but the idea is simple."), completion(json.dumps(GOOD))]
    result, requests, _ = _run(tmp_path, script)
    assert isinstance(result, AgentError) and result.stop and len(requests) == 2
    assert "the same problem twice in a row" in result.reason and "no JSON object" in result.reason


def test_http_500_says_what_happened(tmp_path: Path) -> None:
    result, requests, trace = _run(tmp_path, [error(500, "model overloaded")] * 5)
    assert isinstance(result, LLMError) and len(requests) == 5
    assert str(result).startswith("HTTP 500 from http://127.0.0.1:")
    assert "/v1 after 4 retries: " in str(result) and "model overloaded" in str(result)
    [call] = trace.llm_calls
    assert call.error == str(result) and call.retries == 4


# ------------------------------------------------------------------------------- prompts that fit the context


def test_prompt_is_fitted_into_the_declared_context_and_the_fit_is_recorded(tmp_path: Path) -> None:
    big = _impl_ctx(spec_md="SPEC line\n" * 400, memory_md="memory line\n" * 400)
    result, requests, trace = _run(tmp_path, [completion(json.dumps(GOOD))], toml='[context]\n"fake-model" = 4000\n',
                                   **big.model_dump(exclude={"op_dir", "op_name", "module", "module_count", "level",
                                                             "target_file", "wrapper_name"}))
    assert not isinstance(result, Exception)
    body = requests[0]
    assert body["max_tokens"] == 1000  # a quarter of the context
    [call] = trace.llm_calls
    fit = call.fit
    assert fit["context"] == 4000 and fit["answer_tokens"] == 1000
    assert fit["prompt_tokens"] <= 4000 - 1000
    assert "skill menu: topic names only" in fit["dropped"]
    assert any(d.startswith("user message: MEMORY.md: shortened") for d in fit["dropped"])
    text = "".join(m["content"] for m in body["messages"])
    assert len(text) / 2.5 < 3000  # what was sent really is that small
    assert trace.manifest.context_tokens == {"fake-model": 4000}


def test_too_small_a_context_refuses_before_calling(tmp_path: Path) -> None:
    result, requests, trace = _run(tmp_path, [completion(json.dumps(GOOD))], toml='[context]\n"fake-model" = 600\n')
    assert isinstance(result, AgentError) and result.stop and result.model_calls == 0
    assert requests == [] and trace.llm_calls == []
    assert "the smallest implementer prompt needs about" in result.reason
    assert "fake-model has a context of 600 tokens" in result.reason


def test_a_large_tool_result_is_shortened_to_fit(tmp_path: Path) -> None:
    script = [completion(tool_calls=[("read_skill", json.dumps({"section": "pypto-api"}))]),
              completion(json.dumps(GOOD))]
    result, requests, trace = _run(tmp_path, script, toml='[context]\n"fake-model" = 3400\n',
                                   spec_md="SPEC line\n" * 400)  # the first prompt takes all it may
    assert not isinstance(result, Exception)
    tool_message = requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "omitted to fit the context" in tool_message["content"]
    assert any("tool result shortened" in d for d in trace.llm_calls[1].fit["dropped"])


def test_a_fitted_trace_replays_byte_identically_whatever_the_configured_context(tmp_path: Path) -> None:
    from agents.trace import comparable_events

    big = {"spec_md": "SPEC line\n" * 400}
    recorded, _, _ = _run(tmp_path, [completion(json.dumps(GOOD))], toml='[context]\n"fake-model" = 4000\n', **big)
    op = tmp_path / "op"
    (op / "forge.toml").write_text('[models]\ndefault = "fake-model"\n[context]\n"fake-model" = 9000\n')
    with Trace(tmp_path / "rep" / "trace", run_id="rep", mode="replay", source=tmp_path / "run", op_dir=op) as rep:
        replayed = build_agents(op, trace=rep, mode="replay").implement(_impl_ctx(**big))
    assert replayed == recorded
    assert comparable_events(TraceReader(tmp_path / "rep").events) == comparable_events(
        TraceReader(tmp_path / "run").events)


def _raw_newlines(obj: dict) -> str:
    """JSON as a model writes it when it pastes a file's source into a string: real newlines, not ``\\n``"""
    return json.dumps(obj).replace("\\n", "\n")


def test_near_json_answers_are_read_as_meant_at_once(tmp_path: Path) -> None:
    """Raw newlines inside the "content" string (the commonest way a real answer fails JSON), a backslash that is
    no JSON escape, and a Python dict literal: each is read as what it says, with no repair round."""
    regex_kernel = KERNEL + "# matches r'\\d+' in names\n"
    forms = [
        "Here is the file:\n" + _raw_newlines(GOOD),
        "```json\n" + json.dumps({**GOOD, "content": regex_kernel}).replace("\\\\d", "\\d") + "\n```",
        repr(GOOD),
    ]
    assert "\\d" in forms[1] and "\\\\d" not in forms[1]
    for i, text in enumerate(forms):
        with pytest.raises(ValueError):
            json.loads(text.strip().removeprefix("```json").removesuffix("```").split("file:\n")[-1])
        result, requests, _ = _run(tmp_path / str(i), [completion(text)])
        assert not isinstance(result, Exception), (i, result)
        assert result.content == (regex_kernel if i == 1 else KERNEL), i
        assert len(requests) == 1, i


def test_near_json_that_is_still_broken_goes_back_with_the_strict_error(tmp_path: Path) -> None:
    broken = _raw_newlines(GOOD)[:-1]  # the closing brace lost as well: no reading of it is an object
    result, requests, _ = _run(tmp_path, [completion(broken), completion(json.dumps(GOOD))])
    assert not isinstance(result, Exception) and result.content == KERNEL
    repair = requests[1]["messages"][-1]["content"]
    assert "not valid JSON" in repair and "Invalid control character" in repair


# --- reasoning models: the thinking comes first, in the answer text ---------------------------------------------

DRAFT = {"path": "silu_impl.py", "content": KERNEL.replace("sigmoid", "sigmoid  # draft"), "notes": "draft"}


def test_a_draft_inside_a_think_block_is_not_taken_for_the_answer(tmp_path: Path) -> None:
    text = (f"<think>\nMaybe {json.dumps(DRAFT)} - no, keep the original notes.\n</think>\n\n"
            f"{json.dumps(GOOD)}")
    result, requests, _ = _run(tmp_path, [completion(text)])
    assert not isinstance(result, Exception) and result.notes == "row kernel"
    assert len(requests) == 1


def test_a_template_opened_think_block_ends_at_its_closing_tag(tmp_path: Path) -> None:
    # Qwen3 / DeepSeek-R1 chat templates write "<think>" themselves: the content starts inside the block
    text = f"Okay, first try {json.dumps(DRAFT)} but the notes are wrong.\n</think>\n\n{json.dumps(GOOD)}"
    result, _, _ = _run(tmp_path, [completion(text)])
    assert not isinstance(result, Exception) and result.notes == "row kernel"


def test_an_answer_that_is_only_reasoning_gets_a_repair_that_says_so(tmp_path: Path) -> None:
    script = [completion("<think>\nLet me think about the tiles ... and the tail"), completion(json.dumps(GOOD))]
    result, requests, _ = _run(tmp_path, script)
    assert not isinstance(result, Exception) and result.content == KERNEL
    assert "only reasoning" in requests[1]["messages"][-1]["content"]


def test_reasoning_is_not_sent_back_in_the_conversation(tmp_path: Path) -> None:
    bad = {"path": "modules/elsewhere.py", "content": KERNEL, "notes": "x"}
    thinking = "<think>" + "long deliberation " * 50 + "</think>\n"
    script = [completion(thinking + json.dumps(bad)), completion(json.dumps(GOOD))]
    result, requests, _ = _run(tmp_path, script)
    assert not isinstance(result, Exception)
    kept = [m for m in requests[1]["messages"] if m["role"] == "assistant"]
    assert kept and kept[-1]["content"] == json.dumps(bad)


def test_a_closing_tag_quoted_inside_an_answer_does_not_hide_it(tmp_path: Path) -> None:
    quoted = dict(GOOD, notes="strip </think> from model output")
    result, _, _ = _run(tmp_path, [completion(json.dumps(quoted))])
    assert not isinstance(result, Exception) and result.notes == "strip </think> from model output"


@pytest.mark.parametrize(("text", "answer"), [
    ("<think>a</think>{}", "{}"),
    ("  <THINKING>a\nb</THINKING>\n\n<think>c</think> {}", "{}"),
    ("reasoning </think>\n{}", "{}"),
    ("<reasoning>never closed {}", ""),
    ("{} <think>after the answer is not reasoning</think>", "{} <think>after the answer is not reasoning</think>"),
    ("no tags {}", "no tags {}"),
])
def test_without_reasoning_forms(text: str, answer: str) -> None:
    assert without_reasoning(text) == answer
