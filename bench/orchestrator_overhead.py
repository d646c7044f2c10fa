"""Orchestration overhead per node transition on a 3-module scripted run (target <= 50 ms).

A warm-up run is discarded (one-time imports). Overhead = wall time of the run minus the time spent inside the agents and the verifier, divided by the
number of node transitions. It includes LangGraph itself, SQLite checkpoints (durability "sync"),
MEMORY.md rendering after every node, trace events and the git commits of the audit repository.

    .venv/bin/python bench/orchestrator_overhead.py [--verifier real|double] [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests" / "orchestrator"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(TESTS))

from orch_support import FIX, fixed_clock, make_verifier, write_script  # noqa: E402

from orchestrator import api  # noqa: E402
from orchestrator.adapters.scripted import ScriptedAgents  # noqa: E402


def one_run(verifier_kind: str) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="forge-bench-"))
    try:
        op = tmp / "sqrecip"
        shutil.copytree(FIX / "ops" / "sqrecip", op)
        script = write_script(tmp / "script.yaml", "sqrecip", implement={1: ["m1.py"], 2: ["m12.py"], 3: ["m123.py"]})
        t0 = time.perf_counter()
        result = api.run(op, api.RunOptions(approve="auto", run_id="bench"),
                         inject=api.Injected(agents=ScriptedAgents(script),
                                             verifier=make_verifier(verifier_kind), clock=fixed_clock))
        wall = time.perf_counter() - t0
        assert result.status == "delivered", result.status
        inside = result.timers.get("agents", 0.0) + result.timers.get("verifier", 0.0)
        return {"wall": wall, "agents": result.timers.get("agents", 0.0), "verifier": result.timers.get("verifier", 0.0),
                "transitions": result.transitions, "overhead_per_transition_ms": (wall - inside) / result.transitions * 1e3}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verifier", choices=["real", "double"], default="real")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    one_run("double")  # warm-up: one-time imports (langgraph, runtime.opdir, runtime.lint) are not per transition
    runs = [one_run(args.verifier) for _ in range(args.repeat)]
    per = [r["overhead_per_transition_ms"] for r in runs]
    for i, r in enumerate(runs, 1):
        print(f"run {i}: wall {r['wall']:.2f} s, verifier {r['verifier']:.2f} s, agents {r['agents'] * 1e3:.1f} ms, "
              f"{r['transitions']} transitions, overhead {r['overhead_per_transition_ms']:.1f} ms/transition")
    print(f"median overhead {statistics.median(per):.1f} ms per node transition (target <= 50 ms)")
    return 0 if statistics.median(per) <= 50 else 1


if __name__ == "__main__":
    sys.exit(main())
