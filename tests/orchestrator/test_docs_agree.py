"""Newcomer audit s30, A2/C8/C9: what README.md and docs/running.md say about commands and exit codes holds.

README uses one command form (``python -m orchestrator`` after activating ``.venv``, as the CLI's hints and the
other docs do) and says so once; the system Python without the dependencies gets one line, not a traceback;
`approve` misuse at the blocked gate, ``--agents foo`` and a missing agent script are refused as documented,
before intake; ``--approve stop`` on a replay says the recording answers its gates.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_readme_uses_one_command_form_and_says_which_environment() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = text.index("## Your first operator")
    assert "source .venv/bin/activate" in text[first:first + 800]
    commands = re.findall(r"(?:\.venv/bin/)?python -m orchestrator\b", text)
    prefixed = [c for c in commands if c.startswith(".venv")]
    assert len(prefixed) == 1, prefixed  # the one sentence that names the alternative


def test_the_system_python_gets_one_line_not_a_traceback() -> None:
    """`python -m orchestrator ...` with an interpreter that lacks rich/langgraph: a ModuleNotFoundError traceback."""
    p = subprocess.run([sys.executable, "-S", "-m", "orchestrator", "status", str(ROOT)], capture_output=True,
                       text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.startswith("error: the Python package '") and "make venv" in p.stderr, p.stderr


def test_a_missing_project_module_keeps_its_traceback() -> None:
    from orchestrator.__main__ import missing_dependency_line

    assert missing_dependency_line(ModuleNotFoundError("x", name="orchestrator.nope")) is None
    assert "'yaml'" in (missing_dependency_line(ModuleNotFoundError("x", name="yaml")) or "")


def test_approve_misuse_at_the_blocked_gate_is_exit_2(op_copy, script, cli) -> None:
    """docs/running.md: misuse exits 2; `approve` at the blocked gate without --choice exited 1."""
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl_numeric.py"]})
    r = cli("run", str(op), "--approve", "stop", "--budget", "1", "--agents", f"scripted:{s}")
    assert cli("approve", str(op)).returncode == 0, r.stdout  # the design gate
    r = cli("resume", str(op))
    assert "waiting at gate 'blocked'" in r.stdout, r.stdout + r.stderr
    p = cli("approve", str(op))
    assert p.returncode == 2 and "needs --choice" in p.stderr, p.stderr
    assert cli("approve", str(op), "--choice", "hint").returncode == 2
    # UX audit s33: `reject` here was recorded as abort ("recorded rejection", rc 0) and the resume ended the run
    p = cli("reject", str(op), "--note", "try the other tiling")
    assert p.returncode == 2 and "no answer at this gate" in p.stderr and "--choice hint" in p.stderr, p.stderr
    assert "pending decision" not in cli("status", str(op)).stdout  # nothing was recorded
    assert cli("approve", str(op), "--choice", "abort").returncode == 0


def test_choice_at_another_gate_is_exit_2(op_copy, script, cli) -> None:
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "stop", "--agents", f"scripted:{s}").returncode == 0
    p = cli("approve", str(op), "--choice", "rollback")
    assert p.returncode == 2 and "blocked gate only" in p.stderr, p.stderr


def test_agents_values_are_checked_before_intake(op_copy, cli, tmp_path: Path) -> None:
    """`--agents foo` exited 1 after intake ran golden.py; a missing script likewise (now 1, before intake)."""
    op = op_copy("affine")
    p = cli("run", str(op), "--agents", "foo")
    assert p.returncode == 2 and "unknown --agents value 'foo'" in p.stderr, p.stderr
    p = cli("run", str(op), "--agents", f"scripted:{tmp_path / 'missing.yaml'}")
    assert p.returncode == 1 and "agent script not found" in p.stderr, p.stderr
    assert "intake" not in p.stdout, p.stdout  # refused before intake ran golden.py
    assert not (op / ".forge").exists()


def test_approve_stop_on_a_replay_says_the_recording_answers(tmp_path: Path, cli, monkeypatch) -> None:
    """docs/running.md said `run workspace/silu --approve stop` exits at the first gate; its shipped trace's
    decisions answer every gate, and it delivered without a word."""
    import shutil

    from orchestrator import api
    from orchestrator.errors import ForgeError

    for var in ("FORGE_MODEL", "FORGE_MODEL_DESIGNER", "FORGE_MODEL_IMPLEMENTER", "FORGE_MODEL_VERIFIER",
                "FORGE_MODEL_DEBUGGER", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    op = tmp_path / "silu"
    shutil.copytree(ROOT / "workspace" / "silu", op, ignore=shutil.ignore_patterns(".forge", "authoring"))

    def no_replay(*a, **k):
        raise ForgeError("stopped by the test")

    monkeypatch.setattr(api, "run", no_replay)
    p = cli("run", str(op), "--approve", "stop")
    assert "--approve stop does not apply to a replay" in p.stdout, p.stdout
    p = cli("run", str(op))
    assert "does not apply" not in p.stdout


@pytest.mark.parametrize("doc", ["docs/running.md"])
def test_docs_no_longer_promise_a_stop_on_a_shipped_trace(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert "workspace/silu --approve stop  # exits at the first gate" not in text
