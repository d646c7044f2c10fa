"""Wall time of an offline replay of each workspace operator, split into where the time goes.

    python bench/replay_e2e.py [--repeat N]

For each op: a fresh copy (SPEC.md, golden.py, traces/) is replayed with `orchestrator.api.run` (no model
configured). The split:
  - verification: time inside the verification tool (lint, golden and sandboxed candidate, compare);
  - replay I/O:   time inside the agent roles, which in replay only look recorded answers up in the trace
                  (and re-read blobs) - no model is called;
  - orchestration: everything else (graph steps, SQLite checkpoints, MEMORY.md, git audit commits, bisect
                  for the debugger's context).
The orchestration share has a part paid once per run, before the first node: intake's check of the op dir,
whose golden.py run is a child Python process (interpreter + numpy start-up, ~0.2-0.4 s whatever the op);
``intake ms`` shows it and ``w/o intake`` is the orchestration per transition without it (what each node
transition itself costs: LangGraph, checkpoints, MEMORY.md, trace, git commits).
With ``--split``, the orchestration share is broken down by wrapping the parts that cost (wall ms per node
transition, summed over the run): checkpoint writes and reads (LangGraph's SqliteSaver, durability "sync"),
MEMORY.md rendering and writing, the audit repository's git commands (each subprocess counted) and in-process
commits, trace events and flushes (fsync), compiling the graph, and what no wrapper covers ("rest").
With ``--cli-order`` each run gets its own process, started as ``python -m orchestrator run/replay`` starts (the
golden server boots while the api is imported): the per-transition cost a CLI user sees.
Not a test: numbers depend on the machine (and on its load: the last line gives it). Issue 8's target: a fresh
clone's `make demo` under 60 s; issue 31's: orchestration <= 20 ms per node transition.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS = sorted(p.parents[2].name for p in (ROOT / "workspace").glob("*/traces/default/manifest.json"))
"""Every workspace op that ships a trace (the first four of issue 8 and those added since)."""


SPLIT: dict[str, float] = {}


def _wrap(modname: str, attr: str, label: str) -> None:
    import functools
    import importlib

    obj = importlib.import_module(modname)
    *path, name = attr.split(".")
    for p in path:
        obj = getattr(obj, p)
    orig = getattr(obj, name)

    @functools.wraps(orig)
    def timed(*a, **k):  # noqa: ANN002, ANN003, ANN202
        t = time.perf_counter()
        try:
            return orig(*a, **k)
        finally:
            SPLIT[label] = SPLIT.get(label, 0.0) + time.perf_counter() - t

    setattr(obj, name, timed)


def install_intake_timer() -> None:
    """Always on: intake's check (its golden child) is reported apart from the per-transition cost, and every
    golden run (intake's and each verification's, which is part of ``verify s``) is counted apart too."""
    _wrap("orchestrator.api", "check_op_dir", INTAKE)
    import runtime.opdir
    import runtime.opdir._golden_runner as runner
    import runtime.opdir._intake as intake

    orig = runner.run_golden_cases

    def counted(*a, **k):  # noqa: ANN002, ANN003, ANN202
        GOLDEN_RUNS[0] += 1
        t = time.perf_counter()
        try:
            return orig(*a, **k)
        finally:
            SPLIT[GOLDEN] = SPLIT.get(GOLDEN, 0.0) + time.perf_counter() - t

    for mod in (runtime.opdir, runner, intake):  # every name callers reach it by (the verifier: runtime.opdir's)
        mod.run_golden_cases = counted  # type: ignore[attr-defined]

    # the golden server answers a request once its interpreter has booted (numpy imported): the first answer's wait
    # is intake's wait for the boot (plus a fork, ~1 ms)
    from runtime.opdir._golden_server import GoldenServer

    orig_run = GoldenServer.run

    def first_answer(self, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        if self.forks or BOOT_WAIT in SPLIT:
            return orig_run(self, *a, **k)
        orig_readline = self._readline
        t = time.perf_counter()

        def readline(deadline):  # noqa: ANN001, ANN202
            line = orig_readline(deadline)
            SPLIT.setdefault(BOOT_WAIT, time.perf_counter() - t)
            return line

        self._readline = readline
        try:
            return orig_run(self, *a, **k)
        finally:
            del self._readline

    GoldenServer.run = first_answer  # type: ignore[method-assign]


INTAKE = "intake: golden run + checks"
BOOT_WAIT = "intake: waiting for the golden server's boot"
GOLDEN = "golden runs"
GOLDEN_RUNS = [0]


def fresh_golden_processes(on: bool) -> None:
    """``--golden fresh``: every golden run starts its own interpreter, as before the run-wide golden process
    (``runtime.opdir.golden_server``, entered by ``orchestrator.api.run``) existed."""
    import contextlib

    import orchestrator.api as api_mod
    from runtime.opdir import golden_server

    @contextlib.contextmanager
    def none(**_: object):  # noqa: ANN202
        yield None

    api_mod.golden_server = none if on else golden_server  # type: ignore[assignment]


def install_split() -> None:
    """Time the parts of the orchestration (``--split``)."""
    import git.cmd

    # the driver's saver (orchestrator.store.checkpoints.RunSaver) commits a node's writes inside its put: timing
    # its own methods keeps that commit (the fsync) under "checkpoint put", not under "rest"
    for m in ("put", "put_writes", "get_tuple", "setup"):
        _wrap("orchestrator.store.checkpoints", f"RunSaver.{m}", f"checkpoint {m}")
    _wrap("orchestrator.core.nodes._common", "write_memory", "MEMORY.md render+write")
    _wrap("agents.trace._trace", "Trace.emit", "trace emit")
    _wrap("agents.trace._trace", "Trace.flush", "trace flush (fsync)")
    _wrap("orchestrator.core.driver", "compile_graph", "graph compile")
    _wrap("orchestrator.store.gitaudit", "AuditRepo._commit_index", "git commit (in-process)")
    orig = git.cmd.Git.execute

    def execute(self, command, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        t = time.perf_counter()
        try:
            return orig(self, command, *a, **k)
        finally:
            label = f"git {command[1] if isinstance(command, list) and len(command) > 1 else '?'}"
            SPLIT[label] = SPLIT.get(label, 0.0) + time.perf_counter() - t
            SPLIT["#" + label] = SPLIT.get("#" + label, 0) + 1

    git.cmd.Git.execute = execute


def one(op: str, golden: str) -> dict[str, float]:
    from orchestrator import api

    SPLIT.clear()
    GOLDEN_RUNS[0] = 0
    fresh_golden_processes(golden == "fresh")

    with tempfile.TemporaryDirectory(prefix="forge-bench-") as tmp:
        op_dir = api.copy_op_inputs(ROOT / "workspace" / op, Path(tmp) / op)
        start = time.perf_counter()
        result = api.run(op_dir)
        wall = time.perf_counter() - start
        if result.status != "delivered":
            raise SystemExit(f"{op}: replay ended {result.status}")
    verification = result.timers.get("verifier", 0.0)
    replay_io = result.timers.get("agents", 0.0)
    orchestration = wall - verification - replay_io
    intake = SPLIT.get(INTAKE, 0.0)
    boot_wait = SPLIT.pop(BOOT_WAIT, 0.0)
    golden = SPLIT.pop(GOLDEN, 0.0)
    parts = sum(v for k, v in SPLIT.items() if not k.startswith("#") and k != INTAKE)
    rest = {"rest (LangGraph, nodes, setup)": orchestration - intake - parts} if len(SPLIT) > 1 else {}
    return {"wall": wall, "verification": verification, "replay_io": replay_io, "intake": intake, "golden": golden,
            "boot_wait": boot_wait,
            "golden_runs": float(GOLDEN_RUNS[0]),
            "orchestration": orchestration, "transitions": float(result.transitions),
            **{f"split:{k}": v for k, v in {**SPLIT, **rest}.items() if k != INTAKE}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--split", action="store_true", help="break the orchestration share down by part")
    parser.add_argument("--golden", choices=("server", "fresh", "both"), default="server",
                        help="golden runs fork from one process per run (server, as orchestrator.api.run does), "
                             "start their own interpreter each (fresh, as before), or both, alternated run by run")
    parser.add_argument("--cli-order", action="store_true",
                        help="each run in its own process, started the way `python -m orchestrator run/replay` starts: "
                             "the golden server boots while orchestrator.api is imported (what a CLI user waits for); "
                             "without it, the server boots inside api.run, in a process that imported the api already")
    parser.add_argument("--as-cli-child", help=argparse.SUPPRESS)
    parser.add_argument("ops", nargs="*", help="only these workspace ops")
    args = parser.parse_args()
    if args.as_cli_child:
        _cli_child(args.as_cli_child, args.split)
        return
    _instrument(args.split)
    modes = ["server", "fresh"] if args.golden == "both" else [args.golden]
    print(f"{'op':<20} {'golden':>7} {'wall s':>8} {'verify s':>9} {'replay I/O s':>13} {'orchestr. s':>12} "
          f"{'transitions':>12} {'ms/transition':>14} {'intake ms':>10} {'(boot wait)':>11} {'w/o intake':>11} "
          f"{'golden runs ms':>18}")
    pooled: dict[str, list[tuple[float, float, float]]] = {m: [] for m in modes}
    for op in OPS:
        if args.ops and op not in args.ops:
            continue
        by_mode: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
        for _ in range(args.repeat):  # alternated: both modes see the same load
            for m in modes:
                by_mode[m].append(_in_cli_order(op, args.split) if args.cli_order and m == "server" else one(op, m))
        for m, runs in by_mode.items():
            med = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in runs[0]}
            n = max(med["transitions"], 1)
            per = 1000 * med["orchestration"] / n
            without = 1000 * (med["orchestration"] - med["intake"]) / n
            pooled[m].append((med["orchestration"], med["intake"], n))
            golden = f"{1000 * med['golden']:.0f} ({int(med['golden_runs'])} runs)"
            print(f"{op:<20} {m:>7} {med['wall']:8.2f} {med['verification']:9.2f} {med['replay_io']:13.3f} "
                  f"{med['orchestration']:12.2f} {int(med['transitions']):12d} {per:14.1f} "
                  f"{1000 * med['intake']:10.0f} {1000 * med['boot_wait']:11.0f} {without:11.1f} {golden:>18}")
            for k, v in sorted(((k[6:], v) for k, v in med.items() if k.startswith("split:") and "#" not in k),
                               key=lambda kv: -kv[1]):
                calls = med.get(f"split:#{k}")
                print(f"    {k:<30} {1000 * v / n:7.1f} ms/transition" + (f" ({int(calls)} calls)" if calls else ""))
    for m, rows in pooled.items():
        if len(rows) > 1:
            n = sum(t for _, _, t in rows)
            print(f"{'all ops':<20} {m:>7} {'':>8} {'':>9} {'':>13} {sum(o for o, _, _ in rows):12.2f} {int(n):12d} "
                  f"{1000 * sum(o for o, _, _ in rows) / n:14.1f} {1000 * sum(i for _, i, _ in rows):10.0f} {'':>11} "
                  f"{1000 * sum(o - i for o, i, _ in rows) / n:11.1f}")
    print(f"(median of {args.repeat} run(s); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def _instrument(split: bool) -> None:
    """What every measured run needs: intake's timer, the split's wrappers, and no model configured (a replay)."""
    install_intake_timer()
    if split:
        install_split()
    for var in ("FORGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        os.environ.pop(var, None)


def _in_cli_order(op: str, split: bool) -> dict[str, float]:
    """One run of ``op`` in a fresh process that starts as the CLI does (see ``--cli-order``)."""
    cmd = [sys.executable, __file__, "--as-cli-child", op] + (["--split"] if split else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _cli_child(op: str, split: bool) -> None:
    from orchestrator.cli._common import golden_process_early

    with golden_process_early():  # as orchestrator/cli/run.py and replay.py: the server boots during the import
        import orchestrator.api  # noqa: F401

        _instrument(split)
        print(json.dumps(one(op, "server")))


if __name__ == "__main__":
    main()
