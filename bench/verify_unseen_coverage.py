"""How much of the size space the unseen cases of one verification cover, per operator (no kernel runs).

Usage: ``python bench/verify_unseen_coverage.py [OP_DIR ...] [--seeds 300]`` (default: every workspace op and the
red-team fixture). For each dynamic axis, over ``--seeds`` run seeds: the largest unseen size relative to the
SPEC's largest (median, max, share of runs reaching 2x, 3x, 3.5x), and which tails (size mod 16) are drawn in
every run and how often the least drawn tail is. The numbers behind docs/verification.md "What one run covers".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def coverage(op: Path, seeds: int) -> list[str]:
    from runtime.opdir import load_op_dir
    from runtime.opdir._unseen import TAIL_MULTIPLE as T
    from runtime.opdir._unseen import unseen_cases

    od = load_op_dir(op)
    spec, cases = od.spec, od.cases()
    lines = []
    for axis in spec.dynamic_axes:
        smax = max(int(s[axis]) for s in spec.p0_shapes if axis in s)
        ratios, tails_hit = [], np.zeros(T)
        for seed in range(seeds):
            sizes = {int(c.dims[axis]) for c in unseen_cases(spec, cases, seed) if axis in c.dims}
            ratios.append(max(sizes) / smax)
            for r in {s % T for s in sizes}:
                tails_hit[r] += 1
        ratio = np.array(ratios)
        lines.append(
            f"{op.name:22s} axis {axis}: SPEC max {smax}; largest unseen / SPEC max: median {np.median(ratio):.2f}, "
            f"max {ratio.max():.2f}; runs with >=2x: {np.mean(ratio >= 2):.0%}, >=3x: {np.mean(ratio >= 3):.0%}, "
            f">=3.5x: {np.mean(ratio >= 3.5):.0%}; least drawn tail {int(tails_hit.argmin())} in "
            f"{tails_hit.min() / seeds:.0%} of runs; tails in every run: {[r for r in range(T) if tails_hit[r] == seeds]}")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ops", nargs="*", type=Path)
    p.add_argument("--seeds", type=int, default=300)
    a = p.parse_args()
    ops = a.ops or [*sorted(d for d in (ROOT / "workspace").iterdir() if (d / "SPEC.md").is_file()),
                    ROOT / "tests" / "redteam" / "fixture" / "gelu"]
    for op in ops:
        print("\n".join(coverage(op, a.seeds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
