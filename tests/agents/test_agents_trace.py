"""Trace writer, request key, record -> replay, occurrence index, miss reports, decisions, validation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agents_fixtures import _isolated_env  # noqa: F401  (autouse)

from agents.llm import ChatRequest, ScriptedProvider, text_response
from agents.trace import (
    ReplayMissError,
    Trace,
    TraceError,
    TraceReader,
    canonical_request,
    comparable_events,
    request_key,
    validate_trace,
)


def _req(content: str = "hello", **params) -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "system", "content": "sys"},
                                            {"role": "user", "content": content}], params=params)


def _never() -> ScriptedProvider:
    raise AssertionError("a provider must not be constructed in strict replay")


def _record(path: Path, answers: list[str], requests: list[ChatRequest]) -> list[str]:
    provider = ScriptedProvider(answers)
    with Trace(path, run_id="rec", mode="record") as trace:
        return [trace.call_model(r, lambda: provider, base_url="http://h/v1", agent="implementer", module=1,
                                 attempt=1).text for r in requests]


# ----------------------------------------------------------------------------------------------- writer


def test_emit_assigns_seq_validates_and_flushes(tmp_path: Path) -> None:
    trace = Trace(tmp_path / "t", run_id="r1")
    assert trace.emit("state_transition", node="verify", module=1, **{"from": "impl", "to": "verified"}) == 1
    assert trace.emit("verify", node="verify", module=1, verdict="PASS", hashes={"a": "1"}, path=tmp_path) == 2
    lines = (tmp_path / "t" / "events.jsonl").read_text().splitlines()  # flushed without close
    assert [json.loads(x)["seq"] for x in lines] == [1, 2]
    assert json.loads(lines[1])["path"] == tmp_path.as_posix()
    with pytest.raises(TraceError, match="unknown trace event kind 'verfiy'"):
        trace.emit("verfiy")
    with pytest.raises(TraceError, match="not JSON-serializable"):
        trace.emit("error", message="x", blob=object())
    trace.close()
    assert validate_trace(tmp_path / "t") == []


def test_secrets_are_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    trace = Trace(tmp_path / "t", run_id="r")
    trace.emit("error", message="auth failed with sk-very-secret-value", api_key="sk-very-secret-value",
               headers={"Authorization": "Bearer x"})
    provider = ScriptedProvider(["the key is sk-very-secret-value"])
    trace.call_model(_req("use sk-very-secret-value"), lambda: provider, base_url="http://user:pw@h/v1")
    trace.update_manifest(base_url="http://h/v1")
    trace.close()
    for f in (tmp_path / "t").rglob("*"):
        if f.is_file():
            text = f.read_text()
            assert "sk-very-secret-value" not in text, f
            assert "Bearer x" not in text and "user:pw" not in text, f


def test_reopening_a_trace_continues_seq_and_occurrences(tmp_path: Path) -> None:
    _record(tmp_path / "t", ["a"], [_req()])
    provider = ScriptedProvider(["b"])
    with Trace(tmp_path / "t", run_id="rec", mode="record") as trace:
        trace.call_model(_req(), lambda: provider, base_url="http://h/v1")
        assert trace.events[-1].seq == 2 and trace.events[-1].occurrence == 1


# ------------------------------------------------------------------------------------------ request key


def test_request_key_fills_defaults_and_ignores_volatile_fields() -> None:
    base = canonical_request(_req(), "http://h/v1/")
    assert request_key(base) == request_key(canonical_request(_req(temperature=0.0), "http://h/v1"))
    assert request_key(base) == request_key(canonical_request(_req(timeout=30, max_retries=9), "http://h/v1"))
    assert request_key(base) == request_key(canonical_request(_req(), "http://k:secret@h/v1"))
    assert request_key(base) != request_key(canonical_request(_req(temperature=0.7), "http://h/v1"))
    assert request_key(base) != request_key(canonical_request(_req(), "http://other/v1"))
    assert "secret" not in json.dumps(canonical_request(_req(), "http://k:secret@h/v1"))


def test_tool_call_ids_are_renumbered() -> None:
    def conv(call_id: str) -> ChatRequest:
        return ChatRequest(model="m", messages=[
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "r"}])
    assert request_key(canonical_request(conv("call_abc"), None)) == request_key(canonical_request(conv("zz9"), None))


# -------------------------------------------------------------------------------------- record -> replay


def test_record_then_replay_gives_identical_answers_and_events(tmp_path: Path) -> None:
    reqs = [_req("a"), _req("b"), _req("c", temperature=0.2)]
    recorded = _record(tmp_path / "rec", ["A", "B", "C"], reqs)
    with Trace(tmp_path / "rep", run_id="rep", mode="replay", source=tmp_path / "rec") as trace:
        replayed = [trace.call_model(r, _never, base_url="http://h/v1", agent="implementer", module=1,
                                     attempt=1).text for r in reqs]
    assert replayed == recorded == ["A", "B", "C"]
    assert comparable_events(TraceReader(tmp_path / "rep").events) == comparable_events(
        TraceReader(tmp_path / "rec").events)
    assert [e.cache for e in TraceReader(tmp_path / "rep").events] == ["hit"] * 3
    assert validate_trace(tmp_path / "rep") == []


def test_identical_requests_replay_in_order(tmp_path: Path) -> None:
    same = _req("same question")
    assert _record(tmp_path / "rec", ["first", "second"], [same, same]) == ["first", "second"]
    reader = TraceReader(tmp_path / "rec")
    assert [e.occurrence for e in reader.llm_calls] == [0, 1]
    assert reader.llm_calls[0].request_key == reader.llm_calls[1].request_key
    with Trace(tmp_path / "rep", run_id="rep", mode="replay", source=tmp_path / "rec") as trace:
        got = [trace.call_model(same, _never, base_url="http://h/v1").text for _ in range(2)]
        assert got == ["first", "second"]
        with pytest.raises(ReplayMissError, match="recorded 2 time"):
            trace.call_model(same, _never, base_url="http://h/v1")


def test_changed_prompt_fails_replay_with_field_diff(tmp_path: Path) -> None:
    _record(tmp_path / "rec", ["A"], [_req("please write the kernel\nwith tiles of 16")])
    with Trace(tmp_path / "rep", run_id="rep", mode="replay", source=tmp_path / "rec") as trace:
        with pytest.raises(ReplayMissError) as info:
            trace.call_model(_req("please write the kernel\nwith tiles of 32"), _never, base_url="http://h/v1",
                             agent="implementer", module=2, attempt=3)
    err = info.value
    assert err.field == "messages[1].content"
    text = str(err)
    assert "agent=implementer module=2 attempt=3" in text
    assert "first differing field vs seq 1: messages[1].content" in text
    assert "-with tiles of 16" in text and "+with tiles of 32" in text
    assert "fields" in text  # ranking line "n/m fields"
    error_event = TraceReader(tmp_path / "rep").events[-1]
    assert error_event.kind == "error" and error_event.field == "messages[1].content"
    assert TraceReader(tmp_path / "rep").blob(error_event.report_ref) == text


def test_changed_param_names_the_param(tmp_path: Path) -> None:
    _record(tmp_path / "rec", ["A"], [_req()])
    with Trace(tmp_path / "rep", run_id="rep", mode="replay", source=tmp_path / "rec") as trace:
        with pytest.raises(ReplayMissError) as info:
            trace.call_model(_req(temperature=0.5), _never, base_url="http://h/v1")
    assert info.value.field == "params.temperature"


def test_nearest_requests_are_ranked(tmp_path: Path) -> None:
    _record(tmp_path / "rec", ["A", "B"], [_req("totally different"), _req("close match x")])
    with Trace(tmp_path / "rep", run_id="rep", mode="replay", source=tmp_path / "rec") as trace:
        with pytest.raises(ReplayMissError) as info:
            trace.call_model(_req("close match y", temperature=0.0), _never, base_url="http://h/v1")
    lines = str(info.value).splitlines()
    ranked = [ln for ln in lines if ln.strip().startswith("seq ")]
    assert len(ranked) == 2
    assert all(int(r.split(":")[1].split("/")[0]) >= 0 for r in ranked)


def test_a_miss_is_explained_against_the_same_agent_module_and_attempt(tmp_path: Path) -> None:
    """Issue 12: attempt 2's request differs from its recording only in one number; attempt 1's request shares
    more boilerplate text. The diff must be taken against attempt 2 (one changed line), not attempt 1."""
    boiler = "\n".join(f"rule {i}: keep the tile shapes aligned" for i in range(40))
    first = _req(boiler + "\nattempt 1: draft A\nreport: max_diff 0.5")
    second = _req("feedback: attempt 1 failed\n" + "\n".join(boiler.splitlines()[:20])
                  + "\nattempt 2: draft B\nreport: max_diff 3.1e-05")
    provider = ScriptedProvider(["A", "B"])
    with Trace(tmp_path / "rec", run_id="rec", mode="record") as trace:
        for attempt, req in ((1, first), (2, second)):
            trace.call_model(req, lambda: provider, base_url="http://h/v1", agent="implementer", module=1,
                             attempt=attempt)
    drifted = _req(second.messages[1]["content"].replace("3.1e-05", "3.2e-05"))
    assert sum(a == b for a, b in zip(drifted.messages[1]["content"].splitlines(),
                                      first.messages[1]["content"].splitlines(), strict=False)) < 40
    with Trace(tmp_path / "rep", run_id="rep", mode="replay", source=tmp_path / "rec") as trace:
        trace.call_model(first, _never, base_url="http://h/v1", agent="implementer", module=1, attempt=1)
        with pytest.raises(ReplayMissError) as info:
            trace.call_model(drifted, _never, base_url="http://h/v1", agent="implementer", module=1, attempt=2)
    text = str(info.value)
    ranked = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("seq ")]
    assert "attempt=2" in ranked[0], text
    diff = [ln.strip() for ln in text.splitlines() if ln.strip()[:1] in "+-" and not ln.strip().startswith(("---", "+++"))]
    assert diff == ["-report: max_diff 3.1e-05", "+report: max_diff 3.2e-05"], text


def test_a_miss_names_numerics_that_differ_from_the_recording_machine(tmp_path: Path) -> None:
    _record(tmp_path / "rec", ["A"], [_req("x")])
    manifest = json.loads((tmp_path / "rec" / "manifest.json").read_text())
    assert manifest["numerics"]["blas_core"] and manifest["numerics"]["cpu"]
    manifest["numerics"]["blas_core"] = "SomeOtherCore"
    (tmp_path / "rec" / "manifest.json").write_text(json.dumps(manifest))
    with Trace(tmp_path / "rep", run_id="rep", mode="replay", source=tmp_path / "rec") as trace:
        with pytest.raises(ReplayMissError) as info:
            trace.call_model(_req("y"), _never, base_url="http://h/v1", agent="implementer", module=1, attempt=1)
    assert "numerics differ from the recording machine" in str(info.value)
    assert "blas_core: 'SomeOtherCore' ->" in str(info.value)


def test_replay_or_record_uses_hits_and_records_misses(tmp_path: Path) -> None:
    _record(tmp_path / "rec", ["A"], [_req("a")])
    provider = ScriptedProvider(["NEW"])
    with Trace(tmp_path / "run", run_id="x", mode="replay-or-record", source=tmp_path / "rec") as trace:
        assert trace.call_model(_req("a"), _never, base_url="http://h/v1").text == "A"
        assert trace.call_model(_req("b"), lambda: provider, base_url="http://h/v1").text == "NEW"
    assert [e.cache for e in TraceReader(tmp_path / "run").llm_calls] == ["hit", "recorded"]
    with Trace(tmp_path / "again", run_id="y", mode="replay", source=tmp_path / "run") as trace:
        assert trace.call_model(_req("b"), _never, base_url="http://h/v1").text == "NEW"


def test_live_mode_writes_no_payloads_and_cannot_be_replayed(tmp_path: Path) -> None:
    provider = ScriptedProvider([text_response("x", prompt_tokens=5)])
    with Trace(tmp_path / "live", run_id="l", mode="live") as trace:
        trace.call_model(_req(), lambda: provider, base_url="http://h/v1")
    event = TraceReader(tmp_path / "live").llm_calls[0]
    assert event.cache == "live" and event.response_ref is None and event.usage["prompt_tokens"] == 5
    with Trace(tmp_path / "rep", run_id="r", mode="replay", source=tmp_path / "live") as trace:
        with pytest.raises(ReplayMissError, match="live mode"):
            trace.call_model(_req("other"), _never, base_url="http://h/v1")


def test_trace_copied_into_op_dir_replays(tmp_path: Path) -> None:
    _record(tmp_path / "run" / "trace", ["A"], [_req()])
    shipped = tmp_path / "op" / "traces" / "default"
    shutil.copytree(tmp_path / "run", shipped)  # a run dir; the reader finds trace/ inside
    with Trace(tmp_path / "rep", run_id="r", mode="replay", source=shipped) as trace:
        assert trace.call_model(_req(), _never, base_url="http://h/v1").text == "A"


def test_replay_requires_source_and_refuses_writing_into_it(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="needs a recorded trace"):
        Trace(tmp_path / "x", run_id="r", mode="replay")
    _record(tmp_path / "rec", ["A"], [_req()])
    with pytest.raises(TraceError, match="cannot write its trace into"):
        Trace(tmp_path / "rec", run_id="r", mode="replay", source=tmp_path / "rec")
    with pytest.raises(TraceError, match="unknown trace mode"):
        Trace(tmp_path / "y", run_id="r", mode="playback")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------- decisions, tool calls


def test_recorded_decisions_are_fed_back_by_occurrence(tmp_path: Path) -> None:
    with Trace(tmp_path / "rec", run_id="r") as trace:
        trace.emit("interrupt", node="gate_module", gate="module", module=1, payload={"summary": "M1 passed"})
        trace.emit("resume", node="gate_module", gate="module", module=1, decision="reject", note="use fp32")
        trace.emit("resume", node="gate_module", gate="module", module=1, decision="approve", note=None)
        trace.emit("resume", node="gate_design", gate="design", module=None, decision="approve")
        assert trace.recorded_decision("module", 1, 0) is None  # record mode never feeds decisions
    with Trace(tmp_path / "rep", run_id="p", mode="replay", source=tmp_path / "rec") as trace:
        assert trace.recorded_decision("module", 1, 0) == {"decision": "reject", "note": "use fp32"}
        assert trace.recorded_decision("module", 1, 1) == {"decision": "approve", "note": None}
        assert trace.recorded_decision("module", 1, 2) is None
        assert trace.recorded_decision("design", None, 0) == {"decision": "approve", "note": None}
        assert trace.recorded_decision("final", None, 0) is None
        assert [e["decision"] for e in trace.recorded("resume", gate="module", module=1)] == ["reject", "approve"]
        assert trace.recorded("verify") == []


def test_tool_calls_are_recorded_and_replayed(tmp_path: Path) -> None:
    runs: list[int] = []

    def tool() -> str:
        runs.append(1)
        return f"result {len(runs)}"

    with Trace(tmp_path / "rec", run_id="r") as trace:
        assert trace.call_tool("lint_draft", {"source": "x"}, tool, agent="implementer") == "result 1"
        assert trace.call_tool("lint_draft", {"source": "x"}, tool, agent="implementer") == "result 2"
    with Trace(tmp_path / "rep", run_id="p", mode="replay", source=tmp_path / "rec") as trace:
        assert trace.call_tool("lint_draft", {"source": "x"}, tool) == "result 1"
        assert trace.call_tool("lint_draft", {"source": "x"}, tool) == "result 2"
    assert len(runs) == 2  # replay did not run the tool
    events = TraceReader(tmp_path / "rep").events
    assert [(e.kind, e.occurrence, e.cache) for e in events] == [("tool_call", 0, "hit"), ("tool_call", 1, "hit")]


# ------------------------------------------------------------------------------------------ validation


def test_validation_reports_corruption(tmp_path: Path) -> None:
    _record(tmp_path / "rec", ["A"], [_req()])
    reader = TraceReader(tmp_path / "rec")
    blob = tmp_path / "rec" / "blobs" / reader.llm_calls[0].response_ref
    blob.write_text("tampered")
    assert any("corrupted" in p for p in validate_trace(tmp_path / "rec"))
    with (tmp_path / "rec" / "events.jsonl").open("a") as f:
        f.write('{"seq": 9, "kind": "nonsense"}\n')
    problems = validate_trace(tmp_path / "rec")
    assert problems and "events.jsonl:2" in problems[0]


def test_unknown_format_version_is_refused(tmp_path: Path) -> None:
    _record(tmp_path / "rec", ["A"], [_req()])
    manifest = json.loads((tmp_path / "rec" / "manifest.json").read_text())
    manifest["format_version"] = 99
    (tmp_path / "rec" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(TraceError, match="format version 99"):
        TraceReader(tmp_path / "rec")


def test_manifest_describes_the_run(tmp_path: Path) -> None:
    op = tmp_path / "op"
    op.mkdir()
    (op / "SPEC.md").write_text("spec")
    (op / "golden.py").write_text("def golden(x): return x\n")
    with Trace(tmp_path / "t", run_id="r9", mode="record", op_dir=op) as trace:
        trace.update_manifest(seeds=[0, 1], verifier_hash="abc", models={"designer": "m"})
    m = TraceReader(tmp_path / "t").manifest
    assert m.run_id == "r9" and m.record_mode == "record" and m.seeds == [0, 1] and m.verifier_hash == "abc"
    assert m.op_dir_hash and len(m.op_dir_hash) == 64
    assert "python" in m.package_versions and "openai" in m.package_versions


def test_trace_cli_validates_and_summarises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agents.trace.__main__ import main

    _record(tmp_path / "rec", ["A", "B"], [_req("a"), _req("b")])
    assert main([str(tmp_path / "rec")]) == 0
    out = capsys.readouterr().out
    assert "llm_call=2" in out and "implementer=2" in out
    (tmp_path / "rec" / "events.jsonl").write_text("garbage\n")
    assert main([str(tmp_path / "rec")]) == 1
    assert "problem:" in capsys.readouterr().err


def test_failed_calls_are_recorded_and_fail_the_same_way_on_replay(tmp_path: Path) -> None:
    from agents.llm import LLMError

    class Down:
        base_url = "http://h/v1"

        def complete(self, request: ChatRequest):
            raise LLMError("model call failed (HTTP 503) after 4 retries", status=503, retries=4)

    with Trace(tmp_path / "rec", run_id="r") as trace:
        with pytest.raises(LLMError):
            trace.call_model(_req(), Down, base_url="http://h/v1", agent="designer")
    event = TraceReader(tmp_path / "rec").llm_calls[0]
    assert event.error and "503" in event.error and event.retries == 4 and event.response_ref is None
    with Trace(tmp_path / "rep", run_id="p", mode="replay", source=tmp_path / "rec") as trace:
        with pytest.raises(LLMError, match="replayed"):
            trace.call_model(_req(), _never, base_url="http://h/v1", agent="designer")
