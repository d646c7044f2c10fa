"""A kernel's first call, measured many times: the real gym kernels' cost of tracing, lowering and preparing.

    python bench/first_call.py [attn_softmax] [llada2_gate_select] [--rounds 8] [--reloads 30] [--ab VAR]
    python bench/first_call.py attn_softmax --bytecodes [--top 40] [--json FILE]

Why: a gym script calls each kernel a handful of times in a fresh process, so the first call (parse, trace, lower,
prepare, run) is most of what the emulator costs there - but one process gives one sample of a few milliseconds on
a shared machine. Here each process reloads the kernel's module ``--reloads`` times (a new ``JitFunction`` each
time: every first call traces again; what the process keeps across reloads is what a real process keeps between
kernels - imports, numpy's caches) and calls it as the vendor's test does; ``--rounds`` processes per setting, and
the medians. ``--ab VAR`` alternates processes with ``VAR=0`` and ``VAR=1`` (``PTO_FORGE_WALK``: expressions
walked or compiled, `runtime/emulator/_trace_walk.py`), so a change is compared under the same load. One BLAS /
OpenMP thread. Needs ``$FORGE_SHARED/gym`` (or ``<repo>/../shared/gym``) and torch. CPU milliseconds; not a test.

``--bytecodes``: one fresh process (no reload: the vendor's calls as its test makes them, first call first) counts the
Python bytecodes executed inside each call, per call, per emulator file and per function (a ``sys.settrace`` opcode
counter switched on only around the calls; ``PYTHONHASHSEED=0``). Why: on this shared machine the host's clock moves
1.5-2x within minutes and helpers load both cores, so two timings minutes apart are not evidence of a 5% change; the
count is the same on every run of the same tree, so a change's effect on the Python work of a first call is exact
(C work - ``ast.parse``, numpy - is not in it: `valgrind --tool=callgrind` counts that, see
docs/history/emulator-speed-log.md, session 43).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GYM = (Path(os.environ.get("FORGE_SHARED") or ROOT.parent / "shared") / "gym").resolve()

# each: the module to reload, sys.path entries (relative to the gym's ops/<op>), and the calls of its vendor test (one
# function per call in CALLS: `--bytecodes` counts them apart)
SCRIPTS = {
    "attn_softmax": '''
import sys, torch
sys.path.insert(0, OPS + "/attn_softmax/src/pypto_gym/ops/pypto_tile/gemma4_31b_it")
import attn_softmax.attn_softmax_impl as M
xs = [torch.randn([1, s], dtype=torch.bfloat16) for s in (1, 128, 512, 1024)]
CALLS = [lambda x=x: M.attn_softmax_wrapper(x, scale=0.0625) for x in xs]
def calls():
    for one in CALLS:
        one()
''',
    "llada2_gate_select": '''
import sys, torch
sys.path.insert(0, OPS + "/llada2_gate_select/src")
import pypto_gym.ops.pypto_tile.llada2_moe.llada2_gate_select_impl as M
torch.manual_seed(0)
cases = [(torch.randn(bs, 2048, dtype=torch.bfloat16) * 0.02, torch.randn(256, 2048) * 0.05, torch.randn(256) * 0.01,
          torch.empty(bs, 8), torch.empty(bs, 8, dtype=torch.int32)) for bs in (1, 8, 16, 32, 32)]
CALLS = [lambda c=c: M.llada2_gate_select(*c, top_k=8, topk_group=4, num_expert_group=8, routed_scaling_factor=2.5)
         for c in cases]
def calls():
    for one in CALLS:
        one()
''',
}
_LOOP = '''
import importlib, json, time
total = 0.0
for _ in range(RELOADS):
    importlib.reload(M)
    t0 = time.process_time()
    calls()
    total += time.process_time() - t0
print(json.dumps({"per_round_ms": total / RELOADS * 1e3}))
'''


def _one(op: str, reloads: int, env: dict[str, str]) -> float:
    code = f"OPS = {str(GYM / 'ops')!r}\nRELOADS = {reloads}\n" + SCRIPTS[op] + _LOOP
    r = subprocess.run([sys.executable, "-m", "runtime.emulator", "--quiet", "-c", code], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600, check=False)
    for line in reversed(r.stdout.splitlines()):
        if line.startswith("{"):
            return float(json.loads(line)["per_round_ms"])
    raise RuntimeError(f"{op}: no result (rc {r.returncode}): {r.stderr[-800:]}")


_COUNT = '''
import collections, json, os, sys
C = collections.Counter()
def _tr(frame, event, arg):
    if event == "call":
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return _tr
    if event == "opcode":
        C[frame.f_code] += 1
    return _tr
per_call = []
for one in CALLS:  # the vendor's calls one by one, each counted apart
    before = sum(C.values())
    sys.settrace(_tr)
    try:
        one()
    finally:
        sys.settrace(None)
    per_call.append(sum(C.values()) - before)
root = os.getcwd() + os.sep
files, funcs = collections.Counter(), collections.Counter()
for code, n in C.items():
    f = code.co_filename.replace(root, "")
    files[f] += n
    funcs[f"{f}:{code.co_firstlineno}({code.co_name})"] += n
print(json.dumps({"per_call": per_call, "files": files.most_common(), "funcs": funcs.most_common(TOP)}))
'''
"""counts bytecodes per call (each of the script's ``CALLS``)"""


def bytecodes(op: str, top: int, env: dict[str, str]) -> dict:
    """One fresh process's bytecode counts inside the vendor's calls of ``op`` (see ``--bytecodes``)."""
    code = f"OPS = {str(GYM / 'ops')!r}\nTOP = {top}\n" + SCRIPTS[op] + _COUNT
    r = subprocess.run([sys.executable, "-m", "runtime.emulator", "--quiet", "-c", code], cwd=ROOT,
                       env=dict(env, PYTHONHASHSEED="0"), capture_output=True, text=True, timeout=600, check=False)
    for line in reversed(r.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"{op}: no result (rc {r.returncode}): {r.stderr[-800:]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ops", nargs="*", help=f"of {', '.join(sorted(SCRIPTS))} (default: all)")
    ap.add_argument("--rounds", type=int, default=8, help="processes per setting (default 8)")
    ap.add_argument("--reloads", type=int, default=30, help="first calls per process (default 30)")
    ap.add_argument("--ab", metavar="VAR", help="alternate processes with VAR=0 and VAR=1")
    ap.add_argument("--bytecodes", action="store_true", help="count Python bytecodes per call (deterministic)")
    ap.add_argument("--top", type=int, default=40, help="with --bytecodes: functions shown (default 40)")
    ap.add_argument("--json", metavar="FILE", help="with --bytecodes: write the counts as JSON")
    args = ap.parse_args(argv)
    unknown = [o for o in args.ops if o not in SCRIPTS]
    if unknown:
        ap.error(f"unknown operator(s) {', '.join(unknown)}; choose from {', '.join(sorted(SCRIPTS))}")
    args.ops = args.ops or sorted(SCRIPTS)
    if not (GYM / "ops").is_dir():
        print(f"the gym operators are not here ({GYM}; set FORGE_SHARED)", file=sys.stderr)
        return 2
    base = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
                PYTHONPATH=str(ROOT), TILE_FWK_DEVICE_ID="0")
    if args.bytecodes:
        out = {}
        for op in args.ops:
            got = out[op] = bytecodes(op, args.top, base)
            print(f"{op}: {sum(got['per_call'])} bytecodes in {len(got['per_call'])} calls "
                  f"({' / '.join(str(n) for n in got['per_call'])})")
            for name, n in got["files"][:15]:
                print(f"  {n:9d}  {name}")
            for name, n in got["funcs"]:
                print(f"  {n:9d}  {name}")
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
        return 0
    settings = [("", base)] if not args.ab else [(f"{args.ab}={v}", dict(base, **{args.ab: v})) for v in "01"]
    print(f"{'operator':22} {'setting':22} {'median ms':>10} {'min ms':>8}  (CPU ms per round of the vendor's calls, "
          f"{args.rounds} processes x {args.reloads} first calls)")
    for op in args.ops:
        got: dict[str, list[float]] = {name: [] for name, _ in settings}
        for _ in range(args.rounds):
            for name, env in settings:
                got[name].append(_one(op, args.reloads, env))
        for name, vals in got.items():
            print(f"{op:22} {name or '-':22} {statistics.median(vals):10.2f} {min(vals):8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
