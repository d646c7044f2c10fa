"""Newcomer audit s30, B1/B2: files the user edited while a run waited at a gate.

A verified stage file (or the checked design, or the final kernel at the final gate) changed before ``resume``: the
run refuses to continue, naming the file, its verified and current sha256 and how to get the verified version back.
SPEC.md changed while the run waits: refused (recorded vs current sha256). golden.py changed before any verdict
was made with it (the documented "fix golden.py, then resume" after a stop) is accepted and recorded.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest


def _approve_and_resume(cli, op: Path, *more: str) -> subprocess.CompletedProcess:
    assert cli("approve", str(op)).returncode == 0
    return cli("resume", str(op), *more)


def _refused(p: subprocess.CompletedProcess, *words: str) -> None:
    err = "".join(ln for ln in p.stderr.splitlines(keepends=True) if not ln.startswith("warning: no OS sandbox"))
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, p.stderr  # (no Bubblewrap: one warning)
    for w in words:
        assert w in p.stderr, (w, p.stderr)


@pytest.fixture
def sqrecip(op_copy, script, cli):
    """sqrecip at its design gate (scripted agents; the double verifier), and its agent script."""
    op = op_copy("sqrecip")
    s = script("sqrecip", implement={1: ["m1.py"], 2: ["m12.py"], 3: ["m123.py"]})
    assert cli("run", str(op), "--approve", "stop", "--agents", f"scripted:{s}").returncode == 0
    return op


def test_a_verified_stage_file_edited_at_a_module_gate_is_refused(sqrecip: Path, cli) -> None:
    """Before: approve + resume --approve auto delivered (rc 0) and only `audit` noticed the edit."""
    r = _approve_and_resume(cli, sqrecip, "--approve", "stop")
    assert "waiting at gate 'module'" in r.stdout, r.stdout
    stage = sqrecip / "modules" / "sqrecip_module1_impl.py"
    verified = stage.read_bytes()
    stage.write_bytes(verified + b"# tampered\n")
    r = _approve_and_resume(cli, sqrecip, "--approve", "auto")
    _refused(r, "modules/sqrecip_module1_impl.py was changed", "after M1 was verified", "git --git-dir", "--fresh")
    assert not (sqrecip / "sqrecip_impl.py").exists()
    stage.write_bytes(verified)  # the edit undone: the run continues and delivers
    r = cli("resume", str(sqrecip), "--approve", "auto")
    assert r.returncode == 0 and "delivered" in r.stdout, r.stdout + r.stderr


def test_the_restore_command_in_the_message_gives_the_verified_file(sqrecip: Path, cli) -> None:
    _approve_and_resume(cli, sqrecip, "--approve", "stop")
    stage = sqrecip / "modules" / "sqrecip_module1_impl.py"
    verified = stage.read_bytes()
    stage.unlink()
    r = _approve_and_resume(cli, sqrecip, "--approve", "stop")
    _refused(r, "was deleted after M1 was verified")
    command = r.stderr.split("`git ", 1)[1].split("`", 1)[0]
    assert subprocess.run(["git", *command.split()], capture_output=True, check=True).stdout == verified


def test_the_design_edited_at_the_design_gate_is_refused(sqrecip: Path, cli) -> None:
    """module_interfaces.yaml edited after the design check would have been planned without being checked."""
    yaml = sqrecip / "module_interfaces.yaml"
    yaml.write_text(yaml.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    _refused(_approve_and_resume(cli, sqrecip, "--approve", "auto"), "module_interfaces.yaml was changed",
             "after the design check passed")
    assert not (sqrecip / "modules").exists()


def test_spec_edited_while_the_run_waits_is_refused_with_both_hashes(sqrecip: Path, cli) -> None:
    """Before: the rest of the run silently used a tolerance loosened 10,000x; `audit` said OK."""
    from orchestrator.store.paths import sha256_file

    spec = sqrecip / "SPEC.md"
    before = sha256_file(spec)
    spec.write_text(spec.read_text(encoding="utf-8").replace("atol: 1.0e-5", "atol: 1.0e-1"), encoding="utf-8")
    r = _approve_and_resume(cli, sqrecip, "--approve", "auto")
    _refused(r, "SPEC.md changed since run", f"{before[:12]} recorded", f"{sha256_file(spec)[:12]} now", "--fresh")
    assert not (sqrecip / "modules").exists()


def test_golden_fixed_before_any_verdict_is_accepted_and_recorded(sqrecip: Path, cli) -> None:
    """golden.py edited before the run made a verdict with it: nothing depends on the old one."""
    golden = sqrecip / "golden.py"
    golden.write_text(golden.read_text(encoding="utf-8") + "\n# reworded\n", encoding="utf-8")
    r = _approve_and_resume(cli, sqrecip, "--approve", "stop")
    assert r.returncode == 0 and "golden.py changed while run" in r.stdout, r.stdout + r.stderr
    # said before the run goes on (s36: it was the closing message's, after the whole run)
    assert r.stdout.index("note: golden.py changed while run") < r.stdout.index("->")
    meta = json.loads(next((sqrecip / ".forge").glob("run-*/run.json")).read_text(encoding="utf-8"))
    from orchestrator.store.paths import sha256_file

    assert meta["inputs"]["golden.py"] == sha256_file(golden)
    golden.write_text(golden.read_text(encoding="utf-8") + "# again\n", encoding="utf-8")  # M1 is verified now
    _refused(_approve_and_resume(cli, sqrecip, "--approve", "auto"), "golden.py changed since run")
