"""UX audit s33 (a user on a local llama.cpp server, read-only op dirs, paths with spaces): what a failure tells the
user to do next."""

from __future__ import annotations

import io

import pytest
from rich.console import Console


@pytest.mark.parametrize(("status", "message", "advice"), [
    (400, 'HTTP 400 from http://127.0.0.1:1/v1 after 0 retries: {"error":{"message":"request (8265 tokens) exceeds '
          'the available context size (8192 tokens)","type":"exceed_context_size_error"}}', "[context]"),
    (None, "no answer from http://127.0.0.1:1/v1 after 4 retries: Request timed out.", "timeout_s"),
    (500, "HTTP 500 from http://127.0.0.1:1/v1 after 4 retries: boom", "fix the endpoint")])
def test_an_endpoint_failure_names_what_to_change(monkeypatch, status, message, advice) -> None:
    """Before: a prompt over the server's context and a slow server were both "fix the endpoint" - the endpoint was
    fine both times, forge.toml was the fix."""
    from agents.llm import LLMError
    from orchestrator.cli import _common

    buf = io.StringIO()
    monkeypatch.setattr(_common, "err_console", Console(file=buf, width=400))

    def failed():
        raise LLMError(message, status=status)

    assert _common.drive("/tmp/op", failed) == 1
    out = buf.getvalue()
    assert advice in out and "nothing is lost" in out, out
    assert ("fix the endpoint" in out) == (advice == "fix the endpoint"), out


def test_suggested_commands_quote_a_path_with_spaces(monkeypatch, tmp_path) -> None:
    """Before: `... run /tmp/my ops/silu` - pasted into a shell, `show` said "unrecognized argument"."""
    import shlex

    from orchestrator.cli import _common

    buf = io.StringIO()
    monkeypatch.setattr(_common, "err_console", Console(file=buf, width=400))
    op = tmp_path / "my ops" / "sïlu é"
    op.mkdir(parents=True)

    def stopped():
        raise KeyboardInterrupt

    assert _common.drive(str(op), stopped) == 130
    suggested = buf.getvalue().split("`")[1]
    assert shlex.split(suggested)[-1] == str(op), buf.getvalue()


def test_a_read_only_op_dir_is_named_not_called_damaged(monkeypatch, tmp_path) -> None:
    """Before: `prune` printed an OSError traceback from the run lock, and `status` called an intact checkpoint on a
    read-only mount "damaged" and advised `run --fresh`. (Root ignores permissions, so the read-only mount is
    simulated: EROFS from the lock's open, no write access for SQLite.)"""
    import errno
    import os
    import sqlite3

    from orchestrator.core import snapshot
    from orchestrator.errors import ForgeError
    from orchestrator.store import runs

    real_open = os.open

    def ro_open(path, flags, *a):
        if str(path).endswith("lock"):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *a)

    monkeypatch.setattr(runs.os, "open", ro_open)
    with pytest.raises(ForgeError) as info, runs.RunLock(tmp_path, "r1"):
        pass
    assert "Read-only file system" in str(info.value) and "writable place" in str(info.value)

    db = tmp_path / "checkpoints.sqlite"
    db.write_bytes(b"")
    monkeypatch.setattr(snapshot.os, "access", lambda *a: False)
    msg = str(snapshot._unreadable(tmp_path, "r1", db, sqlite3.OperationalError("unable to open database file")))
    assert "read-only" in msg and "nothing is damaged" in msg and "--fresh" not in msg


def test_a_blocked_gate_before_any_verification_says_so(tmp_path) -> None:
    """Before: `last verdict  None` and the agent's error under "cause (last verify report)"."""
    from orchestrator.ui.views import blocked_view

    values = {"blocked": {"module": 1, "reason": "early stop"}, "last_verdict": None, "last_report": None,
              "modules": [{"feedback": ["implementer failed: the model sent a byte-identical answer twice"]}]}
    view = blocked_view(tmp_path, "r1", values)
    assert dict(view.facts)["last verdict"] == "none (no verification in this module yet)"
    assert view.cause_source == "the module's last feedback" and "byte-identical" in view.cause[0]


def test_a_path_of_the_wrong_kind_is_named_as_such(tmp_path) -> None:
    """Before: `run /etc/passwd` said "not found"; `runtime.verify op op/SPEC.md` ran a whole verification of the
    YAML file; `runtime.verify op op/modules` said the directory "does not exist"."""
    from orchestrator.errors import no_op_dir
    from runtime.verify import VerifyUsageError
    from runtime.verify._engine import _step_paths

    f = tmp_path / "notes.txt"
    f.write_text("x")
    assert "is a file, not an operator directory" in no_op_dir(f)
    assert no_op_dir(tmp_path / "nope") == f"operator directory not found: {tmp_path / 'nope'}"
    (tmp_path / "SPEC.md").write_text("---\n")
    (tmp_path / "modules").mkdir()
    for target, said in (("SPEC.md", "is not a Python file"), ("modules", "is a directory")):
        with pytest.raises(VerifyUsageError, match=said):
            _step_paths(tmp_path, tmp_path / target, None)


def test_show_finds_a_report_by_the_evidence_id_the_delivered_readme_cites(tmp_path) -> None:
    """Before: README.md cited `evidence 813dd45ebbfc4262` and `show op 813dd45e` said no stored report matches."""
    import json

    from orchestrator.errors import ForgeError
    from orchestrator.store.reports import find_report

    reports = tmp_path / ".forge" / "run-1" / "reports"
    reports.mkdir(parents=True)
    (reports / "2494a266be27aa.json").write_text(json.dumps({"evidence": "813dd45ebbfc4262", "verdict": "PASS"}))
    (reports / "77aa00.json").write_text(json.dumps({"evidence": "0123", "verdict": "FAIL_NUMERIC"}))
    assert find_report(tmp_path, "2494a2").name == "2494a266be27aa.json"
    assert find_report(tmp_path, "813dd45e").name == "2494a266be27aa.json"
    with pytest.raises(ForgeError, match="evidence id"):
        find_report(tmp_path, "ffff")


def test_the_timeline_shows_each_node_with_the_module_it_worked_on(op_copy, script, cli) -> None:
    """Before: a checkpoint's state is the one after its node, so M1's module gate showed as `gate_module M2` and
    cleanup, the final verification and the report as `M3`."""
    from orchestrator.core.snapshot import history
    from orchestrator.store.runs import latest_run

    op = op_copy("sqrecip")
    s = script("sqrecip", implement={1: ["m1.py"], 2: ["m12.py"], 3: ["m123.py"]})
    p = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    assert p.returncode == 0 and "delivered" in p.stdout, p.stdout + p.stderr
    rows = history(op, latest_run(op))
    assert [r["module"] for r in rows if r["node"] == "gate_module"] == [1, 2, 3]
    assert [r["module"] for r in rows if r["node"] == "implement"] == [1, 2, 3]
    assert all(r["module"] is None for r in rows if r["node"] in ("intake", "design", "cleanup", "gate_final",
                                                                   "report"))


def test_a_run_names_its_model_and_endpoint(tmp_path, monkeypatch) -> None:
    """Before: `run` printed no line naming the model (a forgotten export showed only in the trace), and `resume`
    in a shell without the exports said "model no model at https://api.openai.com/v1"."""
    from orchestrator import api
    from orchestrator.cli.resume import endpoint_line

    (tmp_path / "SPEC.md").write_text("---\n")
    monkeypatch.delenv("FORGE_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:18765/v1")
    kind, why = api.describe_agents(tmp_path, {"model": "smollm2"})
    assert kind == "model" and "model smollm2 at http://127.0.0.1:18765/v1" in why, why
    assert endpoint_line(str(tmp_path), None, {}) is None  # no run: nothing to say, never "no model"


def test_a_gate_that_asked_nothing_shows_no_earlier_decision() -> None:
    """Before: after `reject` at the final gate, the next (disabled) module gate printed `reject (human): tile` - a
    second rejection nobody made, and the run went on."""
    from orchestrator.ui.progress import outcome_text

    values = {"gate": {"gate": "final", "decision": "reject", "source": "human", "note": "tile"}}
    assert "reject (human): tile" in outcome_text("gate_final", values)
    assert outcome_text("gate_module", values) == ""
