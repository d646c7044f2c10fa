"""A model-backed run over real HTTP, recorded, shipped, and replayed offline with identical results.

The "model" is an OpenAI-compatible server on 127.0.0.1 (stdlib, in a thread) that answers with the silu
authoring script's answers; everything else is the production path: model configuration -> agent factory ->
``openai`` client -> HTTP -> recorder (record mode, logical clock) -> graph -> live verification. The one
test seam tells the server which dispatch comes next (the authoring tool's steering).
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from orchestrator import api
from orchestrator.adapters import authoring as authoring_mod
from orchestrator.store.paths import trace_dir

ROOT = Path(__file__).resolve().parents[2]
OP = ROOT / "workspace" / "silu"
SECRET = "sk-test-DO-NOT-WRITE-4242"


class Endpoint:
    """POST /v1/chat/completions answered by ``answer(request_json) -> ChatResponse``."""

    def __init__(self, answer) -> None:
        self.requests: list[dict] = []
        self.auth: list[str] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                endpoint.requests.append(body)
                endpoint.auth.append(self.headers.get("authorization", ""))
                resp = answer(body)
                message = {"role": "assistant", "content": resp.text}
                if resp.tool_calls:
                    message["tool_calls"] = [{"id": c.id, "type": "function",
                                              "function": {"name": c.name, "arguments": c.arguments}}
                                             for c in resp.tool_calls]
                payload = json.dumps({
                    "id": "chatcmpl-local", "object": "chat.completion", "created": 1_700_000_000,
                    "model": body["model"],
                    "choices": [{"index": 0, "message": message, "finish_reason": resp.finish_reason or "stop"}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                }).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Endpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("FORGE_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    yield


def op_copy(dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in ("SPEC.md", "golden.py"):
        shutil.copy2(OP / name, dest / name)
    return dest


@pytest.mark.slow  # a recorded model run and its replay
def test_recorded_http_run_replays_offline_with_identical_artifacts(tmp_path: Path, env: None,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    script = yaml.safe_load((OP / "authoring" / "script.yaml").read_text(encoding="utf-8"))
    answers = authoring_mod._Answers(script=script, base=OP / "authoring", decisions=list(script["decisions"]))
    real_build = api.model_agents

    def steered_build(root, trace, options, mode=None):  # the one seam: tell the server what comes next
        return authoring_mod._SteeredAgents(real_build(root, trace, options, mode=mode), answers, "silu")

    live_dir = op_copy(tmp_path / "live" / "silu")
    with Endpoint(answers) as endpoint:
        monkeypatch.setattr(api, "model_agents", steered_build)
        live = api.run(live_dir,
                       api.RunOptions(approve="prompt",
                                      model_options={"model": "local-model", "base_url": endpoint.url}),
                       hooks=api.Hooks(prompt=answers.decide))
        monkeypatch.setattr(api, "model_agents", real_build)
    assert live.status == "delivered", live
    assert len(endpoint.requests) == 6 and all(a == f"Bearer {SECRET}" for a in endpoint.auth)
    assert {r["model"] for r in endpoint.requests} == {"local-model"}
    assert any(r.get("tools") for r in endpoint.requests)  # the tool loop was offered over HTTP

    recorded = trace_dir(live_dir, live.run_id)
    manifest = json.loads((recorded / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["record_mode"] == "record" and manifest["clock_origin"]
    assert set(manifest["models"].values()) == {"local-model"}
    for path in live_dir.rglob("*"):  # the key reached the server, and is written nowhere
        if path.is_file() and ".forge/git/objects" not in str(path):
            assert SECRET.encode() not in path.read_bytes(), path

    # ship the trace and replay it on a fresh op dir: no model, no network
    shipped = op_copy(tmp_path / "shipped" / "silu")
    shutil.copytree(recorded, shipped / "traces" / "default")
    replayed = api.run(shipped)
    assert replayed.status == "delivered" and replayed.divergences == []
    for name in ("silu_impl.py", "README.md", "MEMORY.md", "DESIGN.md", "module_interfaces.yaml"):
        assert (shipped / name).read_bytes() == (live_dir / name).read_bytes(), name

    # and on simulated other machines (ulp noise, no user namespaces, another BLAS core): the same bytes
    from orchestrator.adapters.portability import DEFAULT_VARIANTS, artifact_digests, check_trace

    report = check_trace(shipped, shipped / "traces" / "default", expected=artifact_digests(live_dir),
                         variants=DEFAULT_VARIANTS)
    assert report.ok, "\n".join(report.lines())


@pytest.mark.slow  # a recorded model run and its replay
def test_a_run_stopped_at_every_gate_and_resumed_still_replays_exactly(tmp_path: Path, env: None,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator import agent_factory

    script = yaml.safe_load((OP / "authoring" / "script.yaml").read_text(encoding="utf-8"))
    answers = authoring_mod._Answers(script=script, base=OP / "authoring", decisions=[])
    real_build = agent_factory.model_agents

    def steered_build(root, trace, options, mode=None):
        return authoring_mod._SteeredAgents(real_build(root, trace, options, mode=mode), answers, "silu")

    monkeypatch.setattr(api, "model_agents", steered_build)
    monkeypatch.setattr(agent_factory, "model_agents", steered_build)  # what resume uses
    live_dir = op_copy(tmp_path / "live" / "silu")
    gates = []
    with Endpoint(answers) as endpoint:
        result = api.run(live_dir,
                         api.RunOptions(approve="stop",
                                        model_options={"model": "local-model", "base_url": endpoint.url}))
        while result.status == "waiting":  # each call is what a separate `approve` + `resume` process does
            gates.append(result.gate.gate)
            api.approve(live_dir)
            result = api.resume(live_dir)
    monkeypatch.setattr(api, "model_agents", real_build)
    assert result.status == "delivered" and gates == ["design", "final"]

    shipped = op_copy(tmp_path / "shipped" / "silu")
    shutil.copytree(trace_dir(live_dir, result.run_id), shipped / "traces" / "default")
    replayed = api.run(shipped)
    assert replayed.status == "delivered" and replayed.divergences == []
    for name in ("silu_impl.py", "MEMORY.md", "README.md"):
        assert (shipped / name).read_bytes() == (live_dir / name).read_bytes(), name


@pytest.mark.slow
def test_a_run_recorded_with_budget_2_replays_without_being_told(tmp_path: Path, env: None,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #28 finding 6: replaying one's own run diverged ("0/2" vs "0/10" in what the agents saw) unless
    `--budget 2` was given again; the error said "can be continued with resume" (a replay cannot) and the
    failed replay left files, so the next try needed --fresh. The manifest now records the run's options."""
    script = yaml.safe_load((OP / "authoring" / "script.yaml").read_text(encoding="utf-8"))
    answers = authoring_mod._Answers(script=script, base=OP / "authoring", decisions=list(script["decisions"]))
    real_build = api.model_agents

    def steered_build(root, trace, options, mode=None):
        return authoring_mod._SteeredAgents(real_build(root, trace, options, mode=mode), answers, "silu")

    live_dir = op_copy(tmp_path / "live" / "silu")
    with Endpoint(answers) as endpoint:
        monkeypatch.setattr(api, "model_agents", steered_build)
        live = api.run(live_dir, api.RunOptions(approve="prompt", budget=2,
                                                model_options={"model": "local-model", "base_url": endpoint.url}),
                       hooks=api.Hooks(prompt=answers.decide))
        monkeypatch.setattr(api, "model_agents", real_build)
    assert live.status == "delivered" and [m.budget for m in live.modules] == [2]
    recorded = trace_dir(live_dir, live.run_id)
    assert json.loads((recorded / "manifest.json").read_text())["run_options"]["budget"] == 2

    shipped = op_copy(tmp_path / "shipped" / "silu")
    shutil.copytree(recorded, shipped / "traces" / "default")
    # told otherwise, the replay leaves its recording: one clear error, its files moved away, not resumable
    from orchestrator.errors import ForgeError

    with pytest.raises(ForgeError) as info:
        api.replay(shipped, shipped / "traces" / "default", api.RunOptions(budget=5))
    assert "the replay left its recording" in info.value.message and "cannot be resumed" in info.value.message
    assert "resume`" not in info.value.message.split("cannot be resumed")[0]
    assert not (shipped / "MEMORY.md").exists() and not (shipped / "DESIGN.md").exists()
    with pytest.raises(ForgeError, match="is a replay that left its recording"):
        api.resume(shipped)
    # not told anything: the recording's budget, no --fresh needed after the failed try
    replayed = api.replay(shipped, shipped / "traces" / "default")
    assert replayed.status == "delivered" and replayed.divergences == []
    for name in ("silu_impl.py", "README.md", "MEMORY.md"):
        assert (shipped / name).read_bytes() == (live_dir / name).read_bytes(), name
