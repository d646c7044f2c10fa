"""Which precision of a failing measurement survives last-bit float noise? (docs/replay.md, issue 12)

Replays every workspace trace under several ulp-noise seeds (``runtime.testmodes``), collects the exact verify
reports of every failing leaf, and prints, per statistic, how many significant digits stay identical across
all seeds (and whether the exact out-of-tolerance count and the share bucket do). Run:
``python bench/agent_view_precision.py [seeds]`` (default 4 seeds; a few minutes on 2 cores).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestrator.adapters.portability import replay_digests  # noqa: E402
from runtime.agent_view import coarse_share, leaf_view  # noqa: E402


def _leaves(op_dir: Path) -> dict[tuple, dict]:
    out = {}
    for rp in sorted(op_dir.glob(".forge/run-*/reports/*.json")):
        rep = json.loads(rp.read_text(encoding="utf-8"))
        for case in rep.get("cases", []):
            for leaf in case.get("leaves", []):
                if not leaf.get("all_close") and not leaf.get("error") and leaf.get("shape_match"):
                    out[(rep["target"], case["name"], leaf["path"])] = leaf
    return out


def _digits_agreeing(values: list[float]) -> int:
    for d in range(8, 0, -1):
        if len({f"{v:.{d}g}" for v in values}) == 1:
            return d
    return 0


def main(argv: list[str]) -> int:
    seeds = list(range(1, 1 + (int(argv[1]) if len(argv) > 1 else 4)))
    ops = sorted(p.parents[2].name for p in (ROOT / "workspace").glob("*/traces/default/manifest.json"))
    per_leaf: dict[tuple, list[dict]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="forge-precision-") as tmp:
        for op in ops:
            for seed in [None, *seeds]:
                work = Path(tmp) / f"{op}-{seed}" / op
                work.parent.mkdir()
                replay_digests(ROOT / "workspace" / op, ROOT / "workspace" / op / "traces" / "default", work,
                               seed=seed)
                for key, leaf in _leaves(work).items():
                    per_leaf[(op, *key)].append(leaf)
    worst = defaultdict(lambda: 9)
    print(f"{len(per_leaf)} failing leaves, {len(seeds)} noise seeds + the plain run")
    for key, leaves in sorted(per_leaf.items()):
        md = _digits_agreeing([float(x["max_diff"]) for x in leaves])
        counts = {x["out_of_tolerance_count"] for x in leaves}
        buckets = {coarse_share(float(x["out_of_tolerance_ratio"])) for x in leaves}
        views = {json.dumps(leaf_view(x), sort_keys=True) for x in leaves}
        worst["max_diff digits"] = min(worst["max_diff digits"], md)
        worst["exact count stable"] = min(worst["exact count stable"], int(len(counts) == 1))
        worst["share bucket stable"] = min(worst["share bucket stable"], int(len(buckets) == 1))
        worst["agent view stable"] = min(worst["agent view stable"], int(len(views) == 1))
        print(f"  {key[0]} {key[1]} {key[2]} {key[3]}: max_diff stable to {md} digits; "
              f"counts {sorted(counts)}; bucket {sorted(buckets)}; agent view {'stable' if len(views) == 1 else 'MOVES'}")
    print("worst case over all leaves:", dict(worst))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
