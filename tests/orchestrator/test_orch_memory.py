"""MEMORY.md is a deterministic rendering of state (golden file) and is rewritten after every node."""

from __future__ import annotations

from pathlib import Path

from orchestrator import api
from orchestrator.adapters.scripted import ScriptedAgents
from orchestrator.core.memory import render_memory
from orchestrator.core.snapshot import snapshot

GOLDEN = Path(__file__).parent / "golden" / "MEMORY_sqrecip.md"
W = "2026-01-02 03:04:05"


def sample_state() -> dict:
    def mod(k, name, out, status, attempts, verdict, rh):
        return {"id": k, "name": name, "outputs": [out], "status": status, "attempts": attempts, "budget": 10,
                "stage_file": f"modules/sqrecip_module{''.join(str(i) for i in range(1, k + 1))}_impl.py",
                "verdict": verdict, "report_hash": rh, "evidence": rh and rh[::-1].replace("1", "e"),
                "verified_sha256": ("ab" * 32) if status == "verified" else None,
                "file_sha256": "cd" * 32}

    return {
        "op_dir": "/x/sqrecip", "op_name": "sqrecip", "run_id": "t1", "phase": "construction", "level": "L1",
        "module_count": 3, "active": 2,
        "complexity": {"total_complexity": 0.1667, "module_count": 1, "level": "L0"},
        "modules": [mod(1, "square", "sq", "verified", 2, "PASS", "1" * 64),
                    mod(2, "affine", "t", "in_progress", 1, "FAIL_NUMERIC", "2" * 64),
                    mod(3, "reciprocal", "y", "pending", 0, None, None)],
        "inventory": [{"index": 1, "operation": "square xf * xf", "shape": "[B,D] -> [B,D]", "module": 1},
                      {"index": 2, "operation": "affine 0.5 * sq + 1", "shape": "[B,D] -> [B,D]", "module": 2}],
        "coverage": {"1": {"status": "✅", "pypto_call": "*", "line": 23}},
        "verify_log": [
            {"when": W, "module": "M1", "file": "modules/sqrecip_module1_impl.py", "verdict": "FAIL_LINT",
             "row": "PF01 import of os", "report_hash": "0" * 64},
            {"when": W, "module": "M1", "file": "modules/sqrecip_module1_impl.py", "verdict": "PASS",
             "row": f"| {W} | M1 | modules/sqrecip_module1_impl.py | sq | 1e-05 | 1e-05 | True | - | - | PASS eeeeeeeeeeee |",
             "report_hash": "1" * 64},
            {"when": W, "module": "M2", "file": "modules/sqrecip_module12_impl.py", "verdict": "FAIL_NUMERIC",
             "row": "", "report_hash": "2" * 64, "evidence": "f" * 64}],
        "lint_log": [{"when": W, "module": "M1", "file": "modules/sqrecip_module1_impl.py",
                      "rules": "PF01@sqrecip_module1_impl.py:3", "resolution": "streak 1/5"}],
        "dev_log": [{"when": W, "node": "verify", "action": "verify M2 attempt 1", "result": "FAIL_NUMERIC",
                     "next": "debug"}],
        "rejected": [{"approach": "design attempt 1", "evidence": "rejected at the design gate: merge M2|M3",
                      "when": W}],
    }


def test_render_matches_golden_file():
    text = render_memory(sample_state())
    assert text == GOLDEN.read_text(encoding="utf-8")
    assert render_memory(sample_state()) == text  # deterministic


def test_sections_in_architecture_order():
    text = render_memory(sample_state())
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections == ["## Agent status", "## Task summary", "## Module decomposition", "## Staged module files",
                        "## Golden function inventory", "## Per-module verification log", "## Per-module lint history",
                        "## Development and debug log", "## Rejected approaches"]
    assert "next_mandatory_step: implement and verify M2 (modules/sqrecip_module12_impl.py), attempt 2" in text
    assert "merge M2\\|M3" in text  # table cells are escaped


def test_run_writes_memory_equal_to_rendered_final_state(op_copy, script, real_verifier, clock):
    verifier = real_verifier
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    api.run(op, api.RunOptions(approve="auto", run_id="t1"),
            inject=api.Injected(agents=ScriptedAgents(s), verifier=verifier, clock=clock))
    values, _, _ = snapshot(op.resolve(), "t1")
    assert (op / "MEMORY.md").read_text(encoding="utf-8") == render_memory(values)
    memory_events = [line for line in (op / ".forge/run-t1/trace/events.jsonl").read_text().splitlines()
                     if '"memory_write"' in line]
    assert len(memory_events) >= 8  # rewritten after (almost) every node
