"""Command-line fixes of session 36 (the s35 UX audit's leftovers).

Ending a run at its gate asks no agent, so it needs no model (s35 UX audit): a run started with the model from
the environment (``FORGE_MODEL``, ``OPENAI_BASE_URL``), stopped at the blocked gate, is aborted from a shell where
those are gone. Before: ``resume`` refused with "no model configured" and the run could not be ended."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from agents_fake_openai import FakeOpenAIServer, Reply, completion  # noqa: E402
from orch_support import FIX  # noqa: E402


def _blocked_run(op_copy, cli, monkeypatch) -> tuple[Path, FakeOpenAIServer]:
    def reply(body: dict) -> Reply:  # the same non-answer twice: the module stops at the blocked gate
        return completion("The kernel should compute y = 2x + 1 with a row loop over tiles of 16.")

    server = FakeOpenAIServer(reply).__enter__()
    op = op_copy("affine")
    for name in ("DESIGN.md", "module_interfaces.yaml"):
        (op / name).write_bytes((FIX / "agents" / "affine" / name).read_bytes())
    (op / "forge.toml").write_text("[llm]\nbackoff_s = 0.0\nmax_tool_rounds = 0\n")
    monkeypatch.setenv("FORGE_MODEL", "fake-model")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    out = cli("run", str(op), "--approve", "stop")
    assert "blocked" in out.stdout, out.stdout + out.stderr
    monkeypatch.delenv("FORGE_MODEL")
    monkeypatch.delenv("OPENAI_BASE_URL")
    return op, server


def test_an_abort_recorded_at_the_blocked_gate_is_applied_without_a_model(op_copy, cli, monkeypatch) -> None:
    op, server = _blocked_run(op_copy, cli, monkeypatch)
    try:
        calls = len(server.requests)
        assert cli("approve", str(op), "--choice", "abort").returncode == 0
        out = cli("resume", str(op))
        assert "aborted" in out.stdout, out.stdout + out.stderr
        assert "no model" not in out.stdout + out.stderr
        assert len(server.requests) == calls
        assert "nothing to resume" in cli("resume", str(op)).stderr  # it ended
    finally:
        server.__exit__(None, None, None)


def test_a_resume_that_needs_an_agent_still_says_no_model_is_configured(op_copy, cli, monkeypatch) -> None:
    op, server = _blocked_run(op_copy, cli, monkeypatch)
    try:
        assert cli("approve", str(op), "--choice", "raise_budget", "--budget", "1").returncode == 0
        out = cli("resume", str(op))
        assert out.returncode != 0
        assert "model" in (out.stdout + out.stderr).lower()
    finally:
        server.__exit__(None, None, None)


def test_a_pypto_python_that_is_not_an_executable_is_refused_before_the_run(op_copy, cli) -> None:
    op = op_copy("affine")
    out = cli("run", str(op), "--pypto-python", str(op / "no-such-python"))
    assert out.returncode == 2
    assert "--pypto-python" in out.stderr and "is not an executable file" in out.stderr
    assert not (op / ".forge").exists()  # before anything was written (it used to be dropped with a log line)


pytestmark = pytest.mark.usefixtures("local_endpoint_env")


def test_an_earlier_runs_artifacts_are_refused_before_intake_runs_golden(op_copy, script, cli, monkeypatch) -> None:
    import orchestrator.api as api

    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}").returncode == 0
    intakes: list[Path] = []
    monkeypatch.setattr(api, "check_op_dir", lambda root, **_: intakes.append(root) or "affine")
    out = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    assert out.returncode == 1 and "holds artifacts of an earlier run" in out.stderr, out.stderr
    assert intakes == []  # refused before golden.py ran on every case (it used to run first)
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}", "--fresh").returncode == 0
    assert intakes == [op.resolve()]


def test_a_run_in_progress_is_refused_before_intake(op_copy, script, cli, monkeypatch) -> None:
    import fcntl
    import os

    import orchestrator.api as api
    from orchestrator.store.paths import LOCK_FILE

    op = op_copy("affine")
    lock = op / LOCK_FILE
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another holder (this process's RunLock does not know it)
        intakes: list[Path] = []
        monkeypatch.setattr(api, "check_op_dir", lambda root, **_: intakes.append(root) or "affine")
        out = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{script('affine', implement={1: ['impl.py']})}")
        assert out.returncode == 1 and "a run is already in progress" in out.stderr, out.stderr
        assert intakes == []
    finally:
        os.close(fd)


def test_prune_says_a_bad_keep_is_a_usage_error(op_copy, cli) -> None:
    out = cli("prune", str(op_copy("affine")), "--keep", "0")
    assert out.returncode == 2 and "--keep must be at least 1" in out.stderr  # was exit 1, as a failed prune
