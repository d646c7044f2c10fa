"""Wall time of a full verification (all cases) per operator, next to the time the golden alone takes.

Usage: ``python bench/verify_latency.py [op_dir ...] [--repeat N]``. Without arguments it measures every
``workspace/<op>`` plus the verifier's test fixtures (labelled ``fixture:``). A workspace op without an
``<op>_impl.py`` gets one first by replaying its shipped trace in a scratch copy (not timed).
Target (issue 4): <= 2 s per op at P0 shapes on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runtime.opdir import load_op_dir, run_golden_cases  # noqa: E402
from runtime.verify import verify  # noqa: E402


def _replayed(op_dir: Path) -> Path:
    """A scratch copy of ``op_dir`` with its kernel delivered by replaying traces/default."""
    from orchestrator import api

    scratch = api.copy_op_inputs(op_dir, Path(tempfile.mkdtemp(prefix="forge-bench-")) / op_dir.name)
    result = api.run(scratch)
    if result.status != "delivered":
        raise SystemExit(f"{op_dir.name}: replay ended {result.status}")
    return scratch


def _targets(args: list[str]) -> list[tuple[str, Path, Path]]:
    out: list[tuple[str, Path, Path]] = []
    dirs = [Path(a) for a in args] or sorted(p for p in (ROOT / "workspace").iterdir() if p.is_dir())
    for d in dirs:
        try:
            op = load_op_dir(d)
        except Exception as exc:  # noqa: BLE001 - a benchmark reports and moves on
            print(f"skip {d}: {exc}", file=sys.stderr)
            continue
        impl = d / f"{op.spec.op_name}_impl.py"
        if impl.is_file():
            out.append((d.name, d, impl))
        elif (d / "traces" / "default" / "manifest.json").is_file():
            scratch = _replayed(d)
            out.append((d.name, scratch, scratch / impl.name))
        else:
            print(f"skip {d.name}: no {impl.name} and no shipped trace", file=sys.stderr)
    if not args:
        fx = ROOT / "tests" / "verify" / "fixtures"
        for name in ("silu", "silu_bf16", "silu2"):
            op_name = "silu2" if name == "silu2" else "silu"
            out.append((f"fixture:{name}", fx / name, fx / name / f"{op_name}_impl.py"))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("op_dirs", nargs="*")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    print(f"{'op':22s} {'cases':>5s} {'verdict':>12s} {'verify s (median)':>18s} {'golden-only s':>14s} "
          f"{'candidate s':>12s}")
    for label, op_dir, impl in _targets(a.op_dirs):
        op = load_op_dir(op_dir)
        cases = op.cases()
        g_times, v_times, c_times = [], [], []
        verdict = "?"
        for _ in range(a.repeat):
            t = time.perf_counter()
            run_golden_cases(op, cases)
            g_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            report = verify(op_dir, impl)
            v_times.append(time.perf_counter() - t)
            c_times.append(report.durations.get("candidate_s", 0.0))
            verdict = report.verdict
        print(f"{label:22s} {len(cases):5d} {verdict:>12s} {statistics.median(v_times):18.2f} "
              f"{statistics.median(g_times):14.2f} {statistics.median(c_times):12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
