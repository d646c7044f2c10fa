"""Newcomer audit s30, A3: damaged or missing run state (``.forge/run-<id>/checkpoints.sqlite``, ``run.json``).

Each gives one line naming the file and what the user can do (start a new run with ``--fresh``; the old run's
files stay), never a traceback, never a ``resume`` hint for a run resume cannot continue, and above all never a
silent restart that skips the design gate nobody answered.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def parked(op_copy, script, cli) -> Path:
    """sqrecip waiting at its design gate (scripted agents, approval mode stop)."""
    op = op_copy("sqrecip")
    s = script("sqrecip", implement={1: ["m1.py"], 2: ["m12.py"], 3: ["m123.py"]})
    p = cli("run", str(op), "--approve", "stop", "--agents", f"scripted:{s}")
    assert p.returncode == 0 and "waiting at gate 'design'" in p.stdout, p.stdout + p.stderr
    return op


def _run_file(op: Path, name: str) -> Path:
    return next((op / ".forge").glob(f"run-*/{name}"))


def _one_line_error(p, *words: str) -> None:
    err = _err(p)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in err and err.startswith("error: "), p.stderr
    assert len(err.strip().splitlines()) == 1, p.stderr
    for w in words:
        assert w in err, (w, p.stderr)

def _err(p) -> str:
    """stderr without the one warning a machine without Bubblewrap prints first (the project's tests pass there)."""
    return "".join(ln for ln in p.stderr.splitlines(keepends=True) if not ln.startswith("warning: no OS sandbox"))



def test_a_damaged_checkpoint_is_one_line_from_every_command(parked: Path, cli) -> None:
    """Before: status/report/approve ended in sqlite3.DatabaseError's traceback, and resume said "internal error
    ... the run can be continued with resume" (resume being what fails)."""
    _run_file(parked, "checkpoints.sqlite").write_text("garbage\n")
    for command in ("status", "report", "resume", "approve"):
        p = cli(command, str(parked))
        _one_line_error(p, "checkpoints.sqlite is damaged", "file is not a database", "--fresh")
        assert "resume" not in p.stderr and "internal error" not in p.stderr, (command, p.stderr)
    _one_line_error(cli("prune", str(parked)), "checkpoints.sqlite is damaged")


def test_a_damaged_run_json_is_one_line_and_refused_by_status_and_approve(parked: Path, cli) -> None:
    """Before: resume printed pydantic's 3-line dump (with a URL), status and approve went on as if nothing were
    wrong (approve recorded a decision no resume could apply)."""
    meta = _run_file(parked, "run.json")
    meta.write_text("{bad\n")
    for command in ("status", "resume", "approve", "report"):
        p = cli(command, str(parked))
        _one_line_error(p, "run.json is damaged", "Invalid JSON", "--fresh")
        assert "pydantic" not in p.stderr
    assert not (meta.parent / "decision.json").exists()


def test_a_deleted_checkpoint_never_restarts_the_run_past_the_design_gate(parked: Path, cli) -> None:
    """Before: resume silently restarted the graph from its start; the design stage found the design the agents
    had written, took it as given and went on to implement it, with no design gate."""
    _run_file(parked, "checkpoints.sqlite").unlink()
    r = cli("resume", str(parked), "--approve", "auto")
    _one_line_error(r, "checkpoints.sqlite is missing", "--fresh")
    assert "resume" not in r.stderr
    assert not (parked / "modules").exists() and not (parked / "sqrecip_impl.py").exists()
    _one_line_error(cli("status", str(parked)), "checkpoints.sqlite is missing")
    _one_line_error(cli("approve", str(parked)), "checkpoints.sqlite is missing")
    assert (parked / "DESIGN.md").is_file()  # nothing of the old run is deleted
    fresh = cli("run", str(parked), "--approve", "stop", "--fresh", "--agents",
                f"scripted:{next(parked.parent.glob('*.yaml'))}")
    assert fresh.returncode == 0 and "waiting at gate 'design'" in fresh.stdout, fresh.stdout + fresh.stderr
    assert list((parked / ".forge" / "previous").rglob("DESIGN.md"))


def test_a_new_run_has_its_checkpoint_before_its_run_json(tmp_path: Path) -> None:
    """What makes "run.json without checkpoints.sqlite" mean "deleted": the database is created first."""
    from orchestrator.core.snapshot import snapshot
    from orchestrator.store.checkpoints import create_checkpoints
    from orchestrator.store.paths import checkpoint_db

    db = checkpoint_db(tmp_path, "r1")
    db.parent.mkdir(parents=True)
    create_checkpoints(db)
    assert db.is_file() and snapshot(tmp_path, "r1") == ({}, (), [])  # not started yet: empty, not an error
