"""build_agents + the real openai client + record -> strict replay, through a local fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agents_fake_openai import FakeOpenAIServer, completion, error
from agents_fixtures import _isolated_env  # noqa: F401  (autouse)
from test_agents_roles import KERNEL, _impl_ctx

import agents.llm._openai as openai_provider
from agents import ConfigError, ReplayMissError, Trace, build_agents
from agents.trace import TraceReader, comparable_events, validate_trace


def _op_dir(tmp_path: Path, base_url: str | None = None) -> Path:
    op = tmp_path / "op"
    op.mkdir()
    (op / "SPEC.md").write_text("---\nop_name: silu\nseeds: [0, 1, 2]\n---\n")
    (op / "golden.py").write_text("def golden(x):\n    return x\n")
    llm = f'[llm]\nbase_url = "{base_url}"\nbackoff_s = 0.0\n' if base_url else ""
    (op / "forge.toml").write_text('[models]\ndefault = "fake-model"\n' + llm)
    return op


@pytest.fixture(autouse=True)
def _frozen_skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A private copy of skills/: a colleague regenerating skills/lint-rules.md mid-test must not change prompts."""
    import shutil

    import agents.skills

    copy = tmp_path / "skills-copy"
    shutil.copytree(agents.skills.default_skills_dir(), copy)
    monkeypatch.setattr(agents.skills, "default_skills_dir", lambda: copy)


def test_record_over_http_then_strict_replay_is_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key")
    script = [
        error(429),
        completion(tool_calls=[("read_skill", json.dumps({"section": "patterns#row-elementwise"}))]),
        error(500),
        completion("{this is not json"),
        completion(json.dumps({"path": "silu_impl.py", "content": KERNEL, "notes": "ok"})),
    ]
    with FakeOpenAIServer(script) as server:
        op = _op_dir(tmp_path, server.base_url)
        trace = Trace(tmp_path / "run1" / "trace", run_id="run1", mode="record", op_dir=op)
        agents = build_agents(op, trace=trace, mode="record")
        recorded = agents.implement(_impl_ctx())
        trace.close()
    assert recorded.content == KERNEL
    assert len(server.requests) == 5 and server.requests[0] == server.requests[1]
    assert "Your answer was rejected" in server.requests[4]["messages"][-1]["content"]
    assert validate_trace(tmp_path / "run1") == []
    calls = TraceReader(tmp_path / "run1").llm_calls
    assert [c.retries for c in calls] == [1, 1, 0]

    # strict replay: no HTTP client may even be constructed
    def _boom(*a, **k):
        raise AssertionError("OpenAIProvider constructed during strict replay")

    monkeypatch.setattr(openai_provider.OpenAIProvider, "__init__", _boom)
    # a different configured model/endpoint does not matter: replay reproduces the recorded model and endpoint
    (op / "forge.toml").write_text('[models]\ndefault = "another-model"\n[llm]\nbase_url = "http://10.0.0.1/v1"\n')
    replay = Trace(tmp_path / "run2" / "trace", run_id="run2", mode="replay", source=tmp_path / "run1", op_dir=op)
    agents2 = build_agents(op, trace=replay, mode="replay")
    replayed = agents2.implement(_impl_ctx())
    replay.close()
    assert replayed == recorded
    assert not agents2.provider_built
    rec_events = comparable_events(TraceReader(tmp_path / "run1").events)
    rep_events = comparable_events(TraceReader(tmp_path / "run2").events)
    assert rep_events == rec_events
    manifest = TraceReader(tmp_path / "run2").manifest
    assert manifest.models["implementer"] == "fake-model" and manifest.prompt_hashes["implementer"]
    assert manifest.record_mode == "replay" and manifest.op_dir_hash  # seeds: the orchestrator records them
    for f in (tmp_path / "run1").rglob("*"):
        if f.is_file():
            assert "sk-local-test-key" not in f.read_text()


def test_changed_prompt_template_breaks_replay_with_readable_diff(tmp_path: Path) -> None:
    with FakeOpenAIServer([completion(json.dumps({"path": "silu_impl.py", "content": KERNEL}))]) as server:
        op = _op_dir(tmp_path, server.base_url)
        with Trace(tmp_path / "rec", run_id="rec", mode="record", op_dir=op) as trace:
            build_agents(op, trace=trace).implement(_impl_ctx())
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    root = Path(__file__).resolve().parents[2] / "prompts"
    for role in ("designer", "verifier", "debugger"):
        (prompts / f"{role}.md").write_text((root / f"{role}.md").read_text())
    changed = (root / "implementer.md").read_text().replace("exactly ONE file", "exactly one file, carefully")
    (prompts / "implementer.md").write_text(changed)
    from agents.config import load_config
    from agents.roles import LLMAgents

    with Trace(tmp_path / "rep", run_id="rep", mode="replay", source=tmp_path / "rec") as trace:
        agents = LLMAgents(load_config(op), trace, op_dir=op, prompts_dir=prompts,
                           base_url=TraceReader(tmp_path / "rec").manifest.base_url)
        with pytest.raises(ReplayMissError) as info:
            agents.implement(_impl_ctx())
    assert info.value.field == "messages[0].content"
    assert "+Per task you write exactly one file, carefully" in str(info.value)
    assert "agent=implementer module=1 attempt=1" in str(info.value)


def test_build_agents_needs_a_model_outside_replay(tmp_path: Path) -> None:
    op = tmp_path / "op"
    op.mkdir()
    with Trace(None, run_id="x", mode="record") as trace:
        with pytest.raises(ConfigError, match="no model configured"):
            build_agents(op, trace=trace)
        with pytest.raises(ConfigError, match="mode"):
            build_agents(op, trace=trace, mode="replay", overrides={"model": "m"})
        agents = build_agents(op, trace=trace, overrides={"model": "m"})
        assert agents.config.models["verifier"] == "m"
        assert trace.manifest.models == {"designer": "m", "implementer": "m", "verifier": "m", "debugger": "m"}


def test_llm_agents_accepts_plain_options(tmp_path: Path) -> None:
    from agents.roles import LLMAgents

    with Trace(tmp_path / "t", run_id="x", mode="record") as trace:
        agents = LLMAgents({"model": "m", "max_repairs": 1}, trace, op_dir=tmp_path)
        assert agents.config.models["debugger"] == "m" and agents.config.llm.max_repairs == 1
        assert trace.manifest.prompt_hashes["designer"] == agents.prompt_hashes["designer"]
        roles = TraceReader(tmp_path / "t").manifest.model_dump()["roles"]
        assert roles["implementer"]["tools"] == ["read_skill", "lookup_api", "lint_draft", "smoke_run"]
        assert roles["verifier"]["skill_cap"] == 2 and roles["debugger"]["model"] == "m"
        with pytest.raises(ConfigError, match="no model configured"):
            LLMAgents({}, trace, op_dir=tmp_path)
        with pytest.raises(ConfigError, match="max_repairs"):
            LLMAgents({"model": "m", "max_repairs": "many"}, trace, op_dir=tmp_path)
