"""Score runtime.bisect on single-line bugs planted in the real gym operators (issue 30; tests/bisect/gym_corpus.py).

For every bug: the operator is imported once as its gym user runs it (``runs.tsv``, real shapes and dtypes), the
bug is planted in a copy, then

1. verify (all cases) must say FAIL_NUMERIC or FAIL_RUNTIME (or a SPEC case must fail on numbers or raise, whatever
   the verdict), else the bug is excluded (it changes nothing the vendor's tolerance sees, e.g. a shift a softmax
   cancels);
2. bisect (no case given: it picks one and says why); scored: **hit** = the named culprit (or its call site) is on
   the bugged statement; **late** / **miss** = another line after / before it; **not localized** = no culprit
   (then: is the bugged line among the ranked suspects, first, inside a window of <= 5 lines?); a culprit whose
   own value matches the golden is a **false claim**; a report that mentions the size budget is a **drop**;
3. one single-case verify on the case bisect chose: bisect s / verify s (issue: <= 3).

Verify runs here without lint (``NO_LINT``): several gym kernels import ``os``/``sys``/``logging`` at module level,
which lint PF01 refuses in a kernel file; the corpus is about numerics.

The peak resident memory of this process (bisect replays the kernel in it) is printed with the largest input.

    FORGE_SHARED=/work/shared .venv/bin/python bench/bisect_gym_corpus.py [--corpus {gym,fresh,third,fourth,fifth,sixth,seventh,eighth,ninth,tenth,twelfth,thirteenth,fourteenth,fifteenth,sixteenth,seventeenth,eighteenth,nineteenth,twentieth,twentyfirst,both,all}]
        [--only ID ...] [--ops OP ...] [--opdirs DIR] [--no-verify] [--no-ratio] [--no-baseline]

``--corpus fresh`` scores ``tests/bisect/gym_corpus_fresh.py`` (bugs written against the first corpus' blind spots:
helpers, wrappers, wrong axes, tails); ``third`` scores ``tests/bisect/gym_corpus_third.py`` (written against both:
loop branches, last-tile and unroll-variant bugs, valid shapes, dtypes, wrapper scalars); ``fourth`` scores
``tests/bisect/gym_corpus_fourth.py`` (written against the three: matmul operand order / transpose flags, wrong loop
variables, min/max swaps, 2-D keepdim, wrong broadcast operands, host layout and argument bugs); ``fifth`` .. ``tenth`` and ``twelfth`` the blind corpora of sessions 25, 36, 37, 38, 38b, 39 and 40, ``thirteenth``
session 41's, ``fourteenth`` session 42's, ``fifteenth`` session 43's (one row per open item of the fourteenth),
``sixteenth`` session 44's (the runnable operators the fourteenth and fifteenth do not use), ``seventeenth``
session 45's (the harder operators, bugs of the kinds a model writes), ``eighteenth`` session 46's (bn_training_reduce's
operator directory written by the corpus), ``nineteenth`` session 47's, ``twentieth`` session 48's (swiglu_mlp's
operator directory written by the corpus), ``twentyfirst`` session 49's (gather_pa_kv_cache's operator directory written
by the corpus);
``gym`` (default) the first corpus.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bisect"))

import gym_corpus as corpus  # noqa: E402
import gym_corpus_eighteenth as corpus_eighteenth  # noqa: E402
import gym_corpus_eighth as corpus_eighth  # noqa: E402
import gym_corpus_fifteenth as corpus_fifteenth  # noqa: E402
import gym_corpus_fifth as corpus_fifth  # noqa: E402
import gym_corpus_fourteenth as corpus_fourteenth  # noqa: E402
import gym_corpus_fourth as corpus_fourth  # noqa: E402
import gym_corpus_fresh as corpus_fresh  # noqa: E402
import gym_corpus_nineteenth as corpus_nineteenth  # noqa: E402
import gym_corpus_ninth as corpus_ninth  # noqa: E402
import gym_corpus_seventeenth as corpus_seventeenth  # noqa: E402
import gym_corpus_seventh as corpus_seventh  # noqa: E402
import gym_corpus_sixteenth as corpus_sixteenth  # noqa: E402
import gym_corpus_sixth as corpus_sixth  # noqa: E402
import gym_corpus_tenth as corpus_tenth  # noqa: E402
import gym_corpus_third as corpus_third  # noqa: E402
import gym_corpus_thirteenth as corpus_thirteenth  # noqa: E402
import gym_corpus_twelfth as corpus_twelfth  # noqa: E402
import gym_corpus_twentieth as corpus_twentieth  # noqa: E402
import gym_corpus_twentyfirst as corpus_twentyfirst  # noqa: E402

from runtime.bisect import bisect  # noqa: E402
from runtime.verify import VerifySettings, verify  # noqa: E402

# Several gym kernels import os/sys/logging/tempfile at module level, which lint PF01 refuses in a kernel file
# (FAIL_LINT before anything runs). The corpus measures numerics: its verify runs skip lint.
NO_LINT = VerifySettings(lint=lambda *a, **k: [])


@dataclass
class Row:
    id: str
    op: str
    kind: str
    span: tuple[int, int]
    verdict: str = ""
    status: str = ""
    named: int | None = None
    score: str = ""
    window: int = 0
    """distinct lines the report points at (1 for a culprit, the suspects otherwise)"""
    in_window: bool = False
    first_suspect: bool = False
    false_claim: bool = False
    drop: bool = False
    case: str = ""
    t_bisect: float = 0.0
    t_verify: float = 0.0
    summary: str = ""


HANDMADE = (corpus_eighteenth, corpus_twentieth, corpus_twentyfirst)
"""corpora that write the directory of an operator the importer cannot (no golden function in its gym test:
bn_training_reduce, swiglu_mlp; gather_pa_kv_cache, whose imported SPEC draws inputs its golden refuses) with their own ``prepare(op, op_root)``, and plant with their own ``materialize``"""


def operator_dir(bug: corpus.GymBug, opdirs: Path) -> Path:
    """The operator directory ``bug`` is planted in: prepared by its corpus when that corpus writes its own
    (:data:`HANDMADE`), else imported as ``runs.tsv`` runs it."""
    own = next((m for m in HANDMADE if bug in m.BUGS), None)
    return own.prepare(bug.op, opdirs) if own is not None else corpus.import_op(bug.op, opdirs)


def pristine_verdict(op: str, op_dir: Path, memo: dict[str, str]) -> str:
    """verify's verdict on the operator as imported (no bug planted), once per operator."""
    if op not in memo:
        r = verify(corpus_fresh.prepare(op, op_dir), f"{op}_impl.py", settings=NO_LINT)
        # (the SPEC cases, the ones bisect tries: an unseen case the vendor's wrapper refuses - a sequence length
        # that is no multiple of its tile - says nothing about the planted bug)
        spec = [c for c in r.cases if not c.unseen]
        memo[op] = "PASS" if r.verdict == "PASS" or (spec and all(c.status == "pass" for c in spec)) else r.verdict
    return memo[op]


def score(bug: corpus.GymBug, op_dir: Path, tmp: Path, cache: dict, check_verify: bool, ratio: bool,
          pristine: str = "PASS") -> Row:
    # (the first and third corpora plant with gym_corpus.materialize; a corpus that writes operator directories of
    # its own (HANDMADE) with its own; every other through gym_corpus_fresh's, which prepares
    # flash_attention_score_grad's correlated inputs)
    own = next((m for m in HANDMADE if bug in m.BUGS), None)
    mod = own or (corpus if bug in corpus.BUGS or bug in corpus_third.BUGS else corpus_fresh)
    d, stage, span = mod.materialize(bug, op_dir, tmp)
    row = Row(bug.id, bug.op, bug.kind, span)
    lo, hi = span
    if check_verify:
        vr = verify(d, stage, settings=NO_LINT)
        row.verdict = vr.verdict
        # (a verdict that outranks the numbers - FAIL_CHEAT: a gather whose kernel program depends on the data it
        # indexes with - still scores the row when a SPEC case fails on numbers or raises: the bug is seen, s49)
        seen = any(c.status in ("fail_numeric", "fail_runtime") for c in vr.cases if not c.unseen)
        if row.verdict not in ("FAIL_NUMERIC", "FAIL_RUNTIME") and not seen:
            row.score = "excluded"
            return row
    t0 = time.perf_counter()
    rep = bisect(d, stage, golden_cache=cache, timeout=600.0)
    row.t_bisect = time.perf_counter() - t0
    row.status, row.case, row.summary = rep.status, rep.case, rep.summary
    if pristine != "PASS" and not (pristine == "FAIL_NUMERIC" and rep.status == "RUNTIME_ERROR"):
        # the operator as imported already fails (or does not run): a departure says nothing about the planted bug;
        # only a bug that makes a numerically failing kernel raise is still scored (its error line is the bug's)
        row.score = f"excluded (imported op: {pristine})"
        return row
    text = " ".join([rep.summary, *rep.evidence])
    row.drop = "size budget" in text
    f = rep.first_divergence
    if f is not None:
        row.named = f.line
        here = [x for x in (f.line, f.call_site) if x is not None]
        row.window = 1
        if f.status in ("match", "input", "const"):
            row.false_claim = True
        if any(lo <= x <= hi for x in here):
            row.score, row.in_window = "hit", True
        elif f.line is not None and f.line > hi:
            row.score = "late"
        else:
            row.score = "miss"
    else:
        row.score = "not localized" if rep.status != "NO_DIVERGENCE" else "no divergence"
        lines = list(dict.fromkeys(s.line for s in rep.suspects if s.line is not None))
        row.window = len(lines)
        row.in_window = any(lo <= x <= hi for x in lines) and len(lines) <= 5
        row.first_suspect = bool(lines) and lo <= lines[0] <= hi
        row.named = None
    if ratio and rep.case:
        t0 = time.perf_counter()
        verify(d, stage, case=rep.case, settings=NO_LINT)
        row.t_verify = time.perf_counter() - t0
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", choices=("gym", "fresh", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth", "twentyfirst", "both", "all"), default="gym",
                    help="gym: tests/bisect/gym_corpus.py; fresh: tests/bisect/gym_corpus_fresh.py; third: "
                         "tests/bisect/gym_corpus_third.py; fourth: tests/bisect/gym_corpus_fourth.py; fifth: "
                         "tests/bisect/gym_corpus_fifth.py (blind, s25); sixth: tests/bisect/gym_corpus_sixth.py (blind, s36); seventh: "
                         "tests/bisect/gym_corpus_seventh.py (blind, s37); eighth: "
                         "tests/bisect/gym_corpus_eighth.py (blind, s38); ninth: tests/bisect/gym_corpus_ninth.py (blind, s38b); "
                         "tenth: tests/bisect/gym_corpus_tenth.py (blind, s39); twelfth: tests/bisect/gym_corpus_twelfth.py (blind, s40); "
                         "thirteenth: tests/bisect/gym_corpus_thirteenth.py (s41); fourteenth: "
                         "tests/bisect/gym_corpus_fourteenth.py (s42); fifteenth: tests/bisect/gym_corpus_fifteenth.py (s43); "
                         "sixteenth: tests/bisect/gym_corpus_sixteenth.py (s44); seventeenth: tests/bisect/gym_corpus_seventeenth.py (s45); "
                         "eighteenth: tests/bisect/gym_corpus_eighteenth.py (s46); "
                         "nineteenth: tests/bisect/gym_corpus_nineteenth.py (s47); twentieth: "
                         "tests/bisect/gym_corpus_twentieth.py (s48); twentyfirst: tests/bisect/gym_corpus_twentyfirst.py (s49); both: gym + fresh; all: every one")
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--ops", nargs="*", default=[])
    ap.add_argument("--opdirs", default="", help="where imported op dirs are kept (reused; default: a temp dir)")
    ap.add_argument("--no-verify", action="store_true", help="skip the FAIL confirmation by verify")
    ap.add_argument("--no-ratio", action="store_true", help="skip the single-case verify timing")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip verify of each operator as imported (default: bugs of an operator that already fails "
                         "are excluded)")
    args = ap.parse_args()
    if corpus.shared_gym() is None:
        print("bisect_gym_corpus: no gym corpus (set FORGE_SHARED to the folder holding gym/); nothing run")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="bisect-gym-"))
    opdirs = Path(args.opdirs) if args.opdirs else tmp / "ops"
    opdirs.mkdir(parents=True, exist_ok=True)
    pool = {"gym": corpus.BUGS, "fresh": corpus_fresh.BUGS, "third": corpus_third.BUGS, "fourth": corpus_fourth.BUGS, "fifth": corpus_fifth.BUGS, "sixth": corpus_sixth.BUGS,
            "seventh": corpus_seventh.BUGS, "eighth": corpus_eighth.BUGS, "ninth": corpus_ninth.BUGS, "tenth": corpus_tenth.BUGS, "twelfth": corpus_twelfth.BUGS,
            "thirteenth": corpus_thirteenth.BUGS, "fourteenth": corpus_fourteenth.BUGS,
            "fifteenth": corpus_fifteenth.BUGS, "sixteenth": corpus_sixteenth.BUGS,
            "seventeenth": corpus_seventeenth.BUGS, "eighteenth": corpus_eighteenth.BUGS,
            "nineteenth": corpus_nineteenth.BUGS, "twentieth": corpus_twentieth.BUGS,
            "twentyfirst": corpus_twentyfirst.BUGS,
            "both": corpus.BUGS + corpus_fresh.BUGS,
            "all": corpus.BUGS + corpus_fresh.BUGS + corpus_third.BUGS + corpus_fourth.BUGS + corpus_fifth.BUGS
            + corpus_sixth.BUGS + corpus_seventh.BUGS + corpus_eighth.BUGS + corpus_ninth.BUGS
            + corpus_tenth.BUGS + corpus_twelfth.BUGS + corpus_thirteenth.BUGS
            + corpus_fourteenth.BUGS + corpus_fifteenth.BUGS + corpus_sixteenth.BUGS + corpus_seventeenth.BUGS
            + corpus_eighteenth.BUGS + corpus_nineteenth.BUGS + corpus_twentieth.BUGS
            + corpus_twentyfirst.BUGS}[args.corpus]
    bugs = [b for b in pool if (not args.only or b.id in args.only) and (not args.ops or b.op in args.ops)]
    cache: dict = {}
    memo: dict[str, str] = {}
    rows: list[Row] = []
    for b in bugs:
        try:
            op_dir = operator_dir(b, opdirs)
            base = "PASS" if args.no_baseline else pristine_verdict(b.op, op_dir, memo)
            r = score(b, op_dir, tmp, cache, not args.no_verify, not args.no_ratio, base)
        except Exception as exc:  # noqa: BLE001 - a bisect that raises is scored "error", the others still run
            r = Row(b.id, b.op, b.kind, (b.line, b.line), score="error", summary=f"{type(exc).__name__}: {exc}"[:300])
        rows.append(r)
        print(f"  {r.id}: {r.score} (named {r.named}, bug {r.span[0]}-{r.span[1]}, window {r.window}) "
              f"{r.t_bisect:.1f} s: {r.summary[:200]}", file=sys.stderr, flush=True)
    print("| variant | op | kind | bug line | named | score | window lines | status | case | bisect s | verify s | "
          "ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r.t_bisect / r.t_verify:.2f}" if r.t_verify else "-"
        flags = (" FALSE CLAIM" if r.false_claim else "") + (" DROP" if r.drop else "")
        extra = ""
        if r.score == "not localized":
            extra = " (bug line first)" if r.first_suspect else (" (bug line in window)" if r.in_window else "")
        line = f"{r.span[0]}" + (f"-{r.span[1]}" if r.span[1] != r.span[0] else "")
        print(f"| {r.id} | {r.op} | {r.kind} | {line} | {r.named} | {r.score}{extra}{flags} | {r.window} | "
              f"{r.status} | {r.case} | {r.t_bisect:.1f} | {r.t_verify:.1f} | {ratio} |")
    # without the confirming verify (--no-verify), a bug no tried case departs on is excluded the same way
    rs = [r for r in rows if not r.score.startswith("excluded") and r.score != "no divergence"]
    excluded = [r.id for r in rows if r.score.startswith("excluded") or r.score == "no divergence"]
    if rs:
        n = len(rs)
        hits = sum(r.score == "hit" for r in rs)
        inwin = sum(r.in_window for r in rs)
        nl = [r for r in rs if r.score == "not localized"]
        worst = max(((r.t_bisect / r.t_verify, r.id) for r in rs if r.t_verify), default=(0.0, "-"))
        print(f"\n{n} bugs in {len({r.op for r in rs})} operators: hit {hits} ({hits / n:.0%}), "
              f"late {sum(r.score == 'late' for r in rs)}, miss {sum(r.score == 'miss' for r in rs)}, "
              f"not localized {len(nl)} (bug line first in {sum(r.first_suspect for r in nl)}); "
              f"inside a window of <= 5 lines {inwin} ({inwin / n:.0%}); false claims {sum(r.false_claim for r in rs)}; "
              f"size-budget drops {sum(r.drop for r in rs)}; worst bisect/verify {worst[0]:.2f} ({worst[1]})"
              + (f"; excluded (verify passes): {excluded}" if excluded else ""))
    if memo:
        print(f"operators as imported (verify): {memo}")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 1 if any(r.false_claim for r in rs) else 0


if __name__ == "__main__":
    sys.exit(main())
