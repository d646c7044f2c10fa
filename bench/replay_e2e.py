"""Wall time of an offline replay of each workspace operator, split into where the time goes.

    python bench/replay_e2e.py [--repeat N]

For each op: a fresh copy (SPEC.md, golden.py, traces/) is replayed with `orchestrator.api.run` (no model
configured). The split:
  - verification: time inside the verification tool (lint, golden and sandboxed candidate, compare);
  - replay I/O:   time inside the agent roles, which in replay only look recorded answers up in the trace
                  (and re-read blobs) - no model is called;
  - orchestration: everything else (graph steps, SQLite checkpoints, MEMORY.md, git audit commits, bisect
                  for the debugger's context).
Not a test: numbers depend on the machine. Issue 8's target: a fresh clone's `make demo` under 60 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS = sorted(p.parents[2].name for p in (ROOT / "workspace").glob("*/traces/default/manifest.json"))
"""Every workspace op that ships a trace (the first four of issue 8 and those added since)."""


def one(op: str) -> dict[str, float]:
    from orchestrator import api

    with tempfile.TemporaryDirectory(prefix="forge-bench-") as tmp:
        op_dir = api.copy_op_inputs(ROOT / "workspace" / op, Path(tmp) / op)
        start = time.perf_counter()
        result = api.run(op_dir)
        wall = time.perf_counter() - start
        if result.status != "delivered":
            raise SystemExit(f"{op}: replay ended {result.status}")
    verification = result.timers.get("verifier", 0.0)
    replay_io = result.timers.get("agents", 0.0)
    return {"wall": wall, "verification": verification, "replay_io": replay_io,
            "orchestration": wall - verification - replay_io, "transitions": float(result.transitions)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for var in ("FORGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        os.environ.pop(var, None)
    print(f"{'op':<20} {'wall s':>8} {'verify s':>9} {'replay I/O s':>13} {'orchestr. s':>12} "
          f"{'transitions':>12} {'ms/transition':>14}")
    for op in OPS:
        runs = [one(op) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        per = 1000 * med["orchestration"] / max(med["transitions"], 1)
        print(f"{op:<20} {med['wall']:8.2f} {med['verification']:9.2f} {med['replay_io']:13.3f} "
              f"{med['orchestration']:12.2f} {int(med['transitions']):12d} {per:14.1f}")
    print(f"(median of {args.repeat} run(s); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
