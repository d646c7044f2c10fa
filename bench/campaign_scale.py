"""Campaign throughput on this machine: runs per minute with 1 and 2 Ray workers, and the scheduling overhead
per run compared with the same runs one after another in one process.

    python bench/campaign_scale.py [--samples 4] [--op workspace/silu]

The suite is one workspace op replayed from its shipped trace (deterministic, no model), ``--samples`` times.
Three fresh campaigns run it: ``--sequential`` (no Ray: the baseline), an embedded Ray with 1 worker, and with 2.
For each: wall seconds, runs per minute, mean worker seconds per run (``wall_s`` of the records), and for the
Ray ones the scheduling overhead per run = ((campaign wall - Ray start-up) x workers - sum of run seconds) / runs
(Ray's start-up is reported apart; a busy machine also inflates the run seconds of 2 workers). Needs Ray (``pip install -e '.[campaign]'``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestrator.adapters.campaign import CampaignConfig, LocalExecutor, RayExecutor, run_campaign  # noqa: E402


def _campaign(op: Path, samples: int, mode: str, workers: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="forge-bench-") as tmp:
        suite = Path(tmp) / "suite.yaml"
        suite.write_text(f"tasks:\n  - {op}\n")
        out = Path(tmp) / "camp"
        timings: dict[str, float] = {}

        def factory():
            t0 = time.monotonic()
            ex = LocalExecutor() if mode == "sequential" else RayExecutor(workers=workers)
            timings["startup_s"] = time.monotonic() - t0
            return ex

        start = time.monotonic()
        run_campaign(suite, out, CampaignConfig(suite=str(suite), samples=samples), factory, workers=workers)
        wall = time.monotonic() - start
        rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        solved = [r for r in rows if r["status"] == "solved"]
        run_s = sum(r["wall_s"] for r in rows)
        return {"wall_s": wall, "runs": len(rows), "solved": len(solved), "run_s": run_s,
                "startup_s": timings.get("startup_s", 0.0)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--op", default=str(REPO / "workspace" / "silu"))
    args = ap.parse_args(argv)
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        print("skipped: Ray is not installed (pip install -e '.[campaign]')")
        return 0
    op = Path(args.op).resolve()
    results = {}
    for mode, workers in (("sequential", 1), ("ray", 1), ("ray", 2)):
        name = mode if mode == "sequential" else f"ray x{workers}"
        r = _campaign(op, args.samples, mode, workers)
        results[name] = r
        per_run = r["run_s"] / max(1, r["runs"])
        overhead = ((r["wall_s"] - r["startup_s"]) * workers - r["run_s"]) / max(1, r["runs"])
        print(f"{name:11s} {r['runs']} runs ({r['solved']} solved) in {r['wall_s']:.1f} s = "
              f"{60 * r['runs'] / r['wall_s']:.2f} runs/min; {per_run:.1f} s per run inside the worker; "
              f"start-up {r['startup_s']:.1f} s; scheduling overhead per run ((wall - start-up) x workers - run "
              f"time) / runs = {overhead:.1f} s", flush=True)
    base = results["sequential"]["wall_s"]
    for name in ("ray x1", "ray x2"):
        print(f"{name}: {base / results[name]['wall_s']:.2f}x the sequential throughput")
    return 0


if __name__ == "__main__":
    sys.exit(main())
