"""Score runtime.bisect on both bugged-kernel corpora: hit / late / miss / not localized, and its cost.

Corpora: ``held-out`` (tests/bisect/heldout_corpus.py, issue 19: single-line bugs in realistic kernels) and
``today`` (tests/bisect/bisect_corpus.py, issue 9's corpus). For every variant:

1. verify (all cases) must say FAIL_NUMERIC or FAIL_RUNTIME, else the variant is excluded (it is no bug);
2. bisect without a case (the tool picks one and says why); the named culprit line is scored:
   hit = the bugged line; late = a later line (downstream); miss = any other line; not localized = no line
   named (the suspects are then checked for the bugged line);
   a culprit whose own value matches the golden (status match/input/const) is counted as a false claim;
3. one single-case verify on the case bisect chose: bisect time / verify time (issue: at most 3x).

The correct base kernels must give NO_DIVERGENCE. Prints a markdown table and the totals.

    .venv/bin/python bench/bisect_corpus.py [--corpus held-out|today|both] [--only ID ...] [--jobs 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bisect"))

import bisect_corpus as today  # noqa: E402
import heldout_corpus as held  # noqa: E402

from runtime.bisect import bisect  # noqa: E402
from runtime.verify import verify  # noqa: E402

LIMIT = 3.0


@dataclass
class Row:
    corpus: str
    id: str
    kind: str
    line: int
    verdict: str = ""
    status: str = ""
    named: int | None = None
    score: str = ""
    in_suspects: bool = False
    false_claim: bool = False
    case: str = ""
    t_bisect: float = 0.0
    t_verify: float = 0.0
    summary: str = ""


def _variants(which: str, only: set[str]) -> list[tuple[str, object, object]]:
    out = []
    if which in ("held-out", "both"):
        out += [("held-out", b, held.materialize) for b in held.BUGS]
    if which in ("today", "both"):
        out += [("today", v, today.materialize) for v in today.VARIANTS + today.REAL_ONLY_VARIANTS]
    return [o for o in out if not only or o[1].id in only]  # type: ignore[attr-defined]


def _score(corpus: str, v: object, mat: object, tmp: Path, cache: dict, check_verify: bool) -> Row:
    op_dir, stage, line = mat(v, tmp)  # type: ignore[operator]
    row = Row(corpus, v.id, v.kind, line)  # type: ignore[attr-defined]
    if check_verify:
        row.verdict = verify(op_dir, stage).verdict
        if row.verdict not in ("FAIL_NUMERIC", "FAIL_RUNTIME"):
            row.score = "excluded"
            return row
    t0 = time.perf_counter()
    rep = bisect(op_dir, stage, golden_cache=cache)
    row.t_bisect = time.perf_counter() - t0
    row.status, row.case, row.summary = rep.status, rep.case, rep.summary
    f = rep.first_divergence
    row.named = (f.call_site or f.line) if f is not None else None  # an op in a helper: the calling line
    if f is not None and f.status in ("match", "input", "const"):
        row.false_claim = True
    suspects = getattr(rep, "suspects", None) or rep.candidates
    row.in_suspects = any(s.line == line for s in suspects)
    if row.named is None:
        row.score = "not localized" if rep.status != "NO_DIVERGENCE" else "no divergence"
    elif row.named == line:
        row.score = "hit"
    elif row.named > line:
        row.score = "late"
    else:
        row.score = "miss"
    t0 = time.perf_counter()
    verify(op_dir, stage, case=rep.case)
    row.t_verify = time.perf_counter() - t0
    return row


def _base_kernels(which: str, cache: dict) -> list[tuple[str, str]]:
    out = []
    dirs = []
    if which in ("held-out", "both"):
        dirs += [held.HELDOUT / op for op in held.OPS]
    if which in ("today", "both"):
        dirs += [p for p in sorted(today.CORPUS.iterdir()) if (p / "SPEC.md").exists()]
    for d in dirs:
        rep = bisect(d, f"{d.name}_impl.py", golden_cache=cache)
        out.append((d.name, rep.status))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="both", choices=["held-out", "today", "both"])
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-verify", action="store_true", help="skip the FAIL confirmation by verify")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bisect-corpus-"))
    cache: dict = {}
    jobs = _variants(args.corpus, set(args.only))
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda j: _score(*j, tmp, cache, not args.no_verify), jobs))
    print("| corpus | variant | kind | bug line | named | score | status | case | bisect s | verify s | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r.t_bisect / r.t_verify:.2f}" if r.t_verify else "-"
        flag = " FALSE CLAIM" if r.false_claim else ""
        sus = " (bug line among suspects)" if r.score == "not localized" and r.in_suspects else ""
        print(f"| {r.corpus} | {r.id} | {r.kind} | {r.line} | {r.named} | {r.score}{sus}{flag} | {r.status} | "
              f"{r.case} | {r.t_bisect:.1f} | {r.t_verify:.1f} | {ratio} |")
    print()
    for corpus in ("held-out", "today"):
        rs = [r for r in rows if r.corpus == corpus and r.score != "excluded"]
        if not rs:
            continue
        counts = {s: sum(r.score == s for r in rs) for s in ("hit", "late", "miss", "not localized", "no divergence")}
        excluded = [r.id for r in rows if r.corpus == corpus and r.score == "excluded"]
        worst = max((r.t_bisect / r.t_verify for r in rs if r.t_verify), default=0.0)
        print(f"{corpus}: {len(rs)} variants: " + ", ".join(f"{k} {v}" for k, v in counts.items())
              + f"; hit rate {counts['hit'] / len(rs):.0%}; false claims {sum(r.false_claim for r in rs)}; "
              f"worst bisect/verify ratio {worst:.2f}" + (f"; excluded (verify passes): {excluded}" if excluded else ""))
    if not args.only:
        print("correct base kernels:", ", ".join(f"{n} {s}" for n, s in _base_kernels(args.corpus, cache)))
    bad = [r for r in rows if r.false_claim]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
