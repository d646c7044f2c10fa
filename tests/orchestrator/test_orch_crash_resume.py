"""A run killed with SIGKILL in the middle of the module loop resumes without losing or redoing work."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from orch_helpers import git_trailers
from orch_support import fixed_clock, make_verifier

from orchestrator import api
from orchestrator.adapters.scripted import ScriptedAgents

DRIVER = Path(__file__).parent / "orch_crash_driver.py"
ROOT = Path(__file__).resolve().parents[2]


TOOL_KEYS = {"verifier", "emulator", "lint"}


def _report_inputs(op: Path, report_hash: str, skip: str = "") -> tuple[str, dict]:
    """Verdict and op-dir input hashes of a stored report.

    Tool hashes (verifier/emulator/lint sources) are left out: in a shared working tree they change whenever
    a colleague saves a file, which says nothing about the orchestrator.
    """
    data = json.loads(next((op / ".forge").glob(f"run-*/reports/{report_hash}.json")).read_text())
    return data["verdict"], {k: v for k, v in data["hashes"].items() if k not in TOOL_KEYS and k != skip}


def _final_facts(op: Path, result) -> dict:
    impl = (op / "sqrecip_impl.py").read_text().splitlines()
    return {
        "impl": impl[1:],  # line 1 names the (tool-hash dependent) report hash
        "readme": [line for line in (op / "README.md").read_text().splitlines() if "report `" not in line],
        "stages": {p.name: p.read_bytes() for p in sorted((op / "modules").iterdir())},
        "modules": [(m.id, m.status, m.attempts, m.verdict, _report_inputs(op, m.report_hash))
                    for m in result.modules],
        # the final file's own hash covers its provenance line (a tool-hash dependent report hash): compared above
        "final": _report_inputs(op, result.final["report_hash"], skip="sqrecip_impl.py"),
        "verified_commits": [(t.get("forge-kind"), t.get("forge-module"), t.get("forge-file"), t.get("forge-verdict"))
                             for t in git_trailers(op)],
    }


@pytest.mark.slow  # kill -9 and resume, in processes
def test_sigkill_mid_module_loop_then_resume(op_copy, script, tmp_path):
    files = {1: ["m1.py"], 2: ["m12.py"], 3: ["m123.py"]}
    # the uninterrupted reference run
    ref = op_copy("sqrecip")
    ref_script = script("sqrecip", name="ref.yaml", implement=files)
    ref_result = api.run(ref, api.RunOptions(approve="auto", run_id="r1"),
                         inject=api.Injected(agents=ScriptedAgents(ref_script),
                                             verifier=make_verifier("real"), clock=fixed_clock))
    assert ref_result.status == "delivered"

    # the same run in a child process that pauses inside implement(M2) and is killed there
    op = tmp_path / "crashed" / "sqrecip"
    shutil.copytree(Path(__file__).parent / "fixtures" / "ops" / "sqrecip", op)
    marker = tmp_path / "paused"
    crash_script = script("sqrecip", name="crash.yaml", implement=files,
                          pause={"module": 2, "attempt": 1, "marker": str(marker), "seconds": 120})
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FORGE_TEST_VERIFIER": "real"}
    proc = subprocess.Popen([sys.executable, str(DRIVER), str(op), str(crash_script), "r1"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 60
    while not marker.exists():
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert time.time() < deadline, "the child never reached implement(M2)"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    # killed: M1 verified and committed, M2 not started as far as the checkpoint knows
    status = api.status(op)
    assert status.status == "interrupted" and "resume" in status.message
    assert [m.status for m in status.modules] == ["verified", "pending", "pending"]
    assert [t.get("forge-module") for t in git_trailers(op) if t.get("forge-kind") == "verify"] == ["1"]

    agents = ScriptedAgents(crash_script)
    result = api.resume(op,
                        inject=api.Injected(agents=agents, verifier=make_verifier("real"), clock=fixed_clock))
    assert result.status == "delivered"
    # verified work is not redone: after the resume only M2 and M3 were implemented
    assert [c[1] for c in agents.calls if c[0] == "implement"] == [2, 3]
    got, want = _final_facts(op, result), _final_facts(ref, ref_result)
    for key in want:
        assert got[key] == want[key], key
    assert api.audit(op).ok
