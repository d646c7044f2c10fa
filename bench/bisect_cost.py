"""What bisect costs against one single-case verify, on the gym corpus (issue 30: bisect <= 3x a verify).

For every bug asked for (``tests/bisect/gym_corpus.py``; default: the AdamW ones, the largest kernel): plant it,
run ``bisect`` with a fresh golden cache (nothing reused from an earlier bug), then ``verify`` of the one case
bisect chose, in the same process, and print bisect s / verify s. Bisect's time is split where it goes (wall
seconds, summed over calls): the deep golden run (``golden``: the golden process, and in it ``golden load``: reading
its array files back), the sandbox capture of the candidate (``capture``), the trusted replay with the analysis fed
as values are produced (``replay``), the rules and repair replays (``analyze``) and the report statistics
(``stats``). ``uptime``'s load is printed before and after each bug: the machine is shared.

    FORGE_SHARED=/work/shared .venv/bin/python bench/bisect_cost.py [--only ID ...] [--ops OP ...] [--opdirs DIR]
        [--order bisect-first|verify-first]

``--order verify-first`` runs the verify before the bisect (alternate the two orders when comparing: the first
run of a process pays imports and a cold page cache).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bisect"))

import gym_corpus as corpus  # noqa: E402

import runtime.arrays as arrays  # noqa: E402
import runtime.bisect.api as api  # noqa: E402
from runtime.bisect import bisect  # noqa: E402
from runtime.verify import VerifySettings, verify  # noqa: E402

NO_LINT = VerifySettings(lint=lambda *a, **k: [])
"""as bench/bisect_gym_corpus.py: several gym kernels import os/sys at module level, which lint refuses"""

SPENT: dict[str, float] = defaultdict(float)


def _timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[label] += time.perf_counter() - t0
    return wrapper


def _instrument() -> None:
    """Wrap the stages of bisect (module attributes ``api`` calls) with wall-clock counters."""
    api._golden_run = _timed("golden", api._golden_run)
    api._prefetch_goldens = _timed("golden", api._prefetch_goldens)
    api._sandbox_run = _timed("capture", api._sandbox_run)
    api._golden_and_capture = _timed("golden+capture", api._golden_and_capture)
    api.replay = _timed("replay", api.replay)
    api.analyze = _timed("analyze", api.analyze)
    api._stats_for = _timed("stats", api._stats_for)
    arrays.ArrayReader.group = _timed("golden load", arrays.ArrayReader.group)  # type: ignore[method-assign]


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children (golden, sandbox, device processes)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--ops", nargs="*", default=[])
    ap.add_argument("--opdirs", default="", help="where imported op dirs are kept (reused; default: a temp dir)")
    ap.add_argument("--order", choices=["bisect-first", "verify-first"], default="bisect-first")
    ap.add_argument("--sequential", action="store_true",
                    help="golden, then the sandbox run (api.OVERLAP off: the A/B of the overlap in one tree)")
    args = ap.parse_args()
    api.OVERLAP = not args.sequential
    if corpus.shared_gym() is None:
        print("bisect_cost: no gym corpus (set FORGE_SHARED to the folder holding gym/); nothing run")
        return 0
    ops = args.ops or ([] if args.only else ["apply_adam_w_v2"])
    bugs = [b for b in corpus.BUGS if (not args.only or b.id in args.only) and (not ops or b.op in ops)]
    tmp = Path(tempfile.mkdtemp(prefix="bisect-cost-"))
    opdirs = Path(args.opdirs) if args.opdirs else tmp / "ops"
    opdirs.mkdir(parents=True, exist_ok=True)
    _instrument()
    print("| bug | case | status | bisect s | verify s | ratio | golden | (load) | capture | golden+capture (wall) | "
          "replay | analyze | stats | load before -> after | CPU s (this process + children) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    worst = (0.0, "-")
    for b in bugs:
        op_dir = corpus.import_op(b.op, opdirs)
        d, stage, _span = corpus.materialize(b, op_dir, tmp)
        before = _load()
        SPENT.clear()
        t_verify = c_verify = 0.0
        case = None
        if args.order == "verify-first":
            # the case bisect would choose is the first that diverges; ask bisect's own order for it
            from runtime.opdir import load_op_dir
            case = api.order_cases(load_op_dir(d).cases())[0].name
            t0, c0 = time.perf_counter(), _cpu()
            verify(d, stage, case=case, settings=NO_LINT)
            t_verify, c_verify = time.perf_counter() - t0, _cpu() - c0
            SPENT.clear()
        t0, c0 = time.perf_counter(), _cpu()
        rep = bisect(d, stage, golden_cache={}, timeout=900.0)
        t_bisect, c_bisect = time.perf_counter() - t0, _cpu() - c0
        spent = dict(SPENT)
        if args.order == "bisect-first" and rep.case:
            t0, c0 = time.perf_counter(), _cpu()
            verify(d, stage, case=rep.case, settings=NO_LINT)
            t_verify, c_verify = time.perf_counter() - t0, _cpu() - c0
        elif case is not None and rep.case != case:
            print(f"  ({b.id}: bisect chose {rep.case}, verify ran {case}: the ratio compares different cases)",
                  file=sys.stderr)
        ratio = t_bisect / t_verify if t_verify else 0.0
        worst = max(worst, (ratio, b.id))
        cols = [f"{spent.get(k, 0.0):.1f}" for k in ("golden", "golden load", "capture", "golden+capture", "replay",
                                                      "analyze", "stats")]
        print(f"| {b.id} | {rep.case} | {rep.status} | {t_bisect:.1f} | {t_verify:.1f} | {ratio:.2f} | "
              f"{' | '.join(cols)} | {before} -> {_load()} | {c_bisect:.1f} / {c_verify:.1f} |", flush=True)
    print(f"\nworst bisect/verify {worst[0]:.2f} ({worst[1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
