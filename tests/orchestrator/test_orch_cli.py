"""The CLI: stop-mode gates (run exits at a gate; approve; resume; finishes), status, audit, prune, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from orch_helpers import git_trailers

from orchestrator.store.gitaudit import AuditRepo

DRIVER = Path(__file__).parent / "orch_cli_driver.py"
ROOT = Path(__file__).resolve().parents[2]


HOLD_LOCK = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.write(fd, json.dumps({"pid": os.getpid(), "run_id": "other"}).encode())
print("held", flush=True)
time.sleep(120)
"""
"""Another process holding an op dir's run lock until it is killed."""


def subprocess_cli(*args: str, driver: bool = True, verifier: str = "double") -> subprocess.CompletedProcess:
    """Run the CLI in a child process; ``verifier`` picks the real runtime.verify or the double."""
    cmd = [sys.executable, str(DRIVER)] if driver else [sys.executable, "-m", "orchestrator"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "FORGE_TEST_VERIFIER": verifier}
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)


def test_stop_mode_run_exits_at_gate_then_approve_and_resume(op_copy, script, cli):
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    p = cli("run", str(op), "--approve", "stop", "--agents", f"scripted:{s}", verifier="real")
    assert p.returncode == 0, p.stderr
    assert "waiting at gate 'design'" in p.stdout and "approve" in p.stdout
    early = cli("resume", str(op))
    assert early.returncode == 0 and "still waiting at gate 'design'" in early.stdout
    st = cli("status", str(op), "--json")
    assert json.loads(st.stdout)["gate"]["gate"] == "design"
    assert cli("approve", str(op), "--gate", "module").returncode == 1  # wrong gate named: clear refusal
    a = cli("approve", str(op), "--gate", "design")
    assert a.returncode == 0 and "resume" in a.stdout
    r = cli("resume", str(op), verifier="real")
    assert r.returncode == 0, r.stderr
    assert "waiting at gate 'final'" in r.stdout  # L0: no module gate, straight to the final gate
    assert cli("approve", str(op)).returncode == 0
    r = cli("resume", str(op), verifier="real")
    assert r.returncode == 0 and "delivered" in r.stdout
    assert (op / "affine_impl.py").is_file() and (op / "README.md").is_file()
    again = cli("resume", str(op))
    assert again.returncode == 1 and "nothing to resume" in again.stderr
    # s43: it also says what to do instead (the same next step `run` gives on a finished op dir)
    assert f"python -m orchestrator run {op} --fresh" in again.stderr.replace("\n", " "), again.stderr


def test_audit_detects_a_tampered_commit(op_copy, script, cli):
    op = op_copy("sqrecip")
    s = script("sqrecip", implement={1: ["m1.py"], 2: ["m12.py"], 3: ["m123.py"]})
    r = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    assert r.returncode == 0, r.stderr
    ok = cli("audit", str(op))
    assert ok.returncode == 0 and "audit OK: 8 check(s)" in ok.stdout  # 3 traced transitions + 5 commits
    # forge a "verified" commit: same trailers as M1's real commit, different stage file content
    repo = AuditRepo(op)
    m1 = next(t for t in git_trailers(op) if t.get("forge-module") == "1")
    stage = op / "modules" / "sqrecip_module1_impl.py"
    stage.write_text(stage.read_text().replace("sqt = xt * xt", "sqt = xt + xt"))
    body = "\n".join(f"{k}: {v}" for k, v in m1.items())
    repo.raw("add", "-A")
    repo.raw("commit", "-q", "-m", f"verify: M1 PASS (tampered)\n\n{body}")
    bad_sha = repo.raw("rev-parse", "HEAD").strip()
    bad = cli("audit", str(op))
    assert bad.returncode == 1
    assert bad_sha in bad.stderr and "differs from the file the PASS report verified" in bad.stdout
    # a verified transition whose commit disappeared from the history is caught too
    repo.raw("reset", "-q", "--hard", "HEAD~3")  # drop tamper, final and the M3 commit
    gone = cli("audit", str(op))
    assert gone.returncode == 1 and "M3 verified" in gone.stdout and "no verify commit carries report" in gone.stdout


def test_status_and_prune(op_copy, script, cli):
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl_numeric.py", "impl.py"]})
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}").returncode == 0
    st = cli("status", str(op))
    assert st.returncode == 0 and "M1" in st.stdout and "2/10" in st.stdout and "PASS" in st.stdout
    import sqlite3

    db = next((op / ".forge").glob("run-*/checkpoints.sqlite"))
    before = sqlite3.connect(db).execute("select count(*) from checkpoints").fetchone()[0]
    pr = cli("prune", str(op), "--keep", "3")
    assert pr.returncode == 0 and f"pruned {before - 3} checkpoint(s)" in pr.stdout
    assert sqlite3.connect(db).execute("select count(*) from checkpoints").fetchone()[0] == 3
    assert json.loads(cli("status", str(op), "--json").stdout)["status"] == "delivered"  # still readable


def test_bad_input_gets_one_clear_message(tmp_path, op_copy, script, cli, monkeypatch):
    missing = subprocess_cli("run", str(tmp_path / "nope"), "--approve", "auto", "--agents", "scripted:x.yaml",
                             driver=False)
    assert missing.returncode == 1 and "not found" in missing.stderr and "Traceback" not in missing.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SPEC.md").write_text("---\nop_name: [unclosed\n---\n")
    (bad / "golden.py").write_text("def golden(x):\n    return x\n")
    inv = cli("run", str(bad), "--approve", "auto", "--agents", "scripted:x.yaml")
    assert inv.returncode == 1 and "invalid operator directory" in inv.stderr and "Traceback" not in inv.stderr
    op = op_copy("affine")
    for var in ("FORGE_MODEL", "FORGE_MODEL_DESIGNER", "FORGE_MODEL_IMPLEMENTER", "FORGE_MODEL_VERIFIER",
                "FORGE_MODEL_DEBUGGER"):
        monkeypatch.delenv(var, raising=False)
    nomodel = cli("run", str(op), "--approve", "auto")
    assert nomodel.returncode == 1 and "no model configured" in nomodel.stderr and "[models]" in nomodel.stderr
    assert not (op / ".forge").exists()  # nothing written
    nothing = cli("resume", str(op))
    assert nothing.returncode == 1 and "nothing to resume" in nothing.stderr
    noscript = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{tmp_path / 'none.yaml'}")
    assert noscript.returncode == 1 and "agent script not found" in noscript.stderr
    # a live process holds the lock (an flock: a pid written into the file is not enough)
    (op / ".forge").mkdir(exist_ok=True)
    (op / ".forge" / "lock").write_text(json.dumps({"pid": os.getppid(), "run_id": "stale"}))
    s = script("affine", implement={1: ["impl.py"]})
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(op / ".forge" / "lock")], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        busy = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    finally:
        holder.kill()
        holder.wait()
    assert busy.returncode == 1 and "already in progress" in busy.stderr and "Traceback" not in busy.stderr
    assert f"pid {holder.pid}" in busy.stderr and "run other" in busy.stderr


def test_op_dir_inside_another_repo_leaves_it_untouched(tmp_path, script, cli):
    import shutil

    outer = tmp_path / "outer"
    outer.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=outer, check=True)
    op = outer / "workspace" / "affine"
    shutil.copytree(Path(__file__).parent / "fixtures" / "ops" / "affine", op)
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}").returncode == 0
    log = subprocess.run(["git", "log", "--oneline"], cwd=outer, capture_output=True, text=True)
    assert log.returncode != 0 or log.stdout == ""  # the enclosing repository got no commits
    assert not (op / ".git").exists()
    assert len(AuditRepo(op).log()) == 3


def test_a_run_without_the_os_sandbox_says_so_and_require_sandbox_refuses(op_copy, script, cli, monkeypatch):
    """Issue #28 finding 3: without Bubblewrap, `run` and `demo` ran model-written kernels with process-only
    isolation and printed nothing about it; `run` had no --require-sandbox."""
    from orchestrator import api

    s = script("affine", implement={1: ["impl.py"]})
    monkeypatch.setattr(api, "isolation_level", lambda: ("process-only", "bubblewrap (bwrap) is not installed"))
    op = op_copy("affine")
    refused = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}", "--require-sandbox")
    assert refused.returncode == 1 and "--require-sandbox: no OS sandbox on this machine" in refused.stderr
    assert "nothing was run" in refused.stderr and "Traceback" not in refused.stderr
    assert not (op / ".forge").exists()
    ran = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    assert ran.returncode == 0 and "warning: no OS sandbox on this machine" in ran.stderr
    assert "process-only isolation" in ran.stderr and "--require-sandbox" in ran.stderr
    monkeypatch.setattr(api, "isolation_level", lambda: ("bwrap+seccomp", ""))
    strong = op_copy("sqrecip")
    s2 = script("sqrecip", name="s2.yaml", implement={1: ["m1.py"], 2: ["m12.py"], 3: ["m123.py"]})
    quiet = cli("run", str(strong), "--approve", "auto", "--agents", f"scripted:{s2}", "--require-sandbox")
    assert quiet.returncode == 0 and "warning" not in quiet.stderr


def test_progress_lines_give_the_reason(op_copy, script, cli):
    """Issue #28 finding 7: a failing verification printed `verdict FAIL_LINT` and nothing else; a gate decided
    without a prompt (auto, recorded, approve/reject) printed nothing. Now the line says why."""
    op = op_copy("sqrecip")
    s = script("sqrecip", implement={1: ["m1_lint.py", "m1.py"], 2: ["m12.py"], 3: ["m123.py"]})
    r = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    assert r.returncode == 0, r.stderr
    assert "verdict FAIL_LINT: PF01 line" in r.stdout and "import os is not allowed" in r.stdout, r.stdout
    assert "gate_design: approve (auto)" in r.stdout and "gate_final: approve (auto)" in r.stdout
    assert r.stdout.count("-> intake") == 1 and "-> intake  (checking SPEC.md" in r.stdout  # once (was twice)


def test_a_kernel_no_run_wrote_is_moved_aside_not_called_an_earlier_runs(op_copy, script, cli):
    """Issue #28 finding 11: after `orchestrator import` (which writes the vendor's <op>_impl.py), `run` said
    the op dir "holds artifacts of an earlier run (softmax_impl.py)" though no run had happened."""
    op = op_copy("affine")
    (op / "affine_impl.py").write_text("# the imported kernel\n", encoding="utf-8")
    s = script("affine", implement={1: ["impl.py"]})
    r = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    assert r.returncode == 0 and "artifacts of an earlier run" not in r.stderr, r.stderr
    assert "moved affine_impl.py (no run wrote it: imported or your own)" in r.stdout
    kept = list((op / ".forge" / "previous").glob("*/affine_impl.py"))
    assert [p.read_text(encoding="utf-8") for p in kept] == ["# the imported kernel\n"]
    again = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    assert again.returncode == 1 and "artifacts of an earlier run" in again.stderr  # now a run did write it


def test_a_mistyped_command_names_the_closest_one(capsys):
    """argparse's own message lists 17 choices and no suggestion; a typo gets the one the user meant, exit 2."""
    from orchestrator.cli.main import main

    assert main(["intak", "my_op/"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'intak'" in err and "did you mean 'intake'?" in err and "Traceback" not in err
    assert main(["-v", "zzz"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'zzz'" in err and "did you mean" not in err and "resume" in err
