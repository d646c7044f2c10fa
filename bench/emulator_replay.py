"""Replay captured kernel calls on the device executor: time each one and check it reproduces the capture bit for bit.

    FORGE_EMUREAL_CAPTURE=DIR python bench/emulator_real.py ...   # capture (bench/emulator_real_hook)
    python bench/emulator_replay.py DIR [--filter TEXT] [--repeat N] [--programs-from DIR2]

A capture holds, per kernel call, the encoded program, the arguments before and after the run and the result
(error, warnings, counters, written arguments) of the executor that ran then. This replays each call with
today's executor and prints its CPU time against the captured one, the peak memory of the call (arguments +
what the executor added at its peak, over the arguments), and ``identical`` only when every
argument's bytes, the error, the warnings and the counters (but ``batched_iterations``) are the same. No torch and no vendor script is
needed: this is how a change of the executor is measured and checked on the real gym kernels.

``--programs-from DIR2`` runs, on each call's captured inputs, the program of the same call in another capture -
how a change of the *tracer* is checked: capture once with ``PTO_FORGE_ROLL=0`` (Python range loops unrolled) and
once without, then replay the rolled capture with the unrolled programs (the inputs of two runs of a vendor script
differ - ``torch.empty`` outputs, unseeded data - so the two captures cannot be compared directly).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from runtime.emulator._executor import ROLLED_PREFIX  # noqa: E402
from runtime.emulator.device import DTYPES, ExecOptions, decode, execute  # noqa: E402


def load_args(d: Path, meta: dict, which: str) -> list[np.ndarray]:
    raw = (d / f"{which}.bin").read_bytes()
    out, pos = [], 0
    for a in meta["args"]:
        dt = DTYPES[a["dtype"]]
        n = int(np.prod(a["shape"], dtype=np.int64)) * dt.itemsize
        out.append(np.frombuffer(raw[pos:pos + n], dtype=dt).reshape(a["shape"]).copy())
        pos += n
    return out


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _hwm() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def replay(d: Path, repeat: int, program_dir: Path | None = None) -> dict:
    meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
    program = decode(((program_dir or d) / "program.bin").read_bytes())
    want = load_args(d, meta, "out")
    opts = ExecOptions(**meta["options"])
    best = float("inf")
    res = args = None
    peak = 0
    for _ in range(repeat):
        args = load_args(d, meta, "in")
        rss = _rss()
        reset = _reset_hwm()
        t = time.process_time()
        res = execute(program, args, opts)
        best = min(best, time.process_time() - t)
        if reset:
            peak = max(peak, _hwm() - rss)
    assert res is not None and args is not None
    got = {"error": None if res.error is None else [res.error.code, res.error.message, res.error.line],
           "warnings": [[w.code, w.message, w.line] for w in res.warnings],
           "counters": json.loads(json.dumps(res.counters, default=str)), "written": res.written}
    diffs = [f"arg{i}" for i, (a, b) in enumerate(zip(args, want, strict=True)) if a.tobytes() != b.tobytes()]
    want_res = dict(meta["result"])
    # how many iterations ran batched is the executor's own business: every other counter must match
    # and a Python range loop traced once (`_roll`) is not a loop of the kernel: its trips are not counted
    for r in (want_res, got):
        c = {k: v for k, v in r["counters"].items() if k != "batched_iterations"}
        c["loop_trips"] = {k: v for k, v in c["loop_trips"].items() if not k.startswith(ROLLED_PREFIX)}
        r["counters"] = c
    diffs += [k for k in ("error", "warnings", "counters", "written") if got[k] != want_res[k]]
    nbytes = sum(a.nbytes for a in want)
    return {"name": d.name, "before": meta["exec_cpu"], "now": best, "diffs": diffs,
            "peak": (nbytes + peak) / nbytes if nbytes and peak >= 0 else None,
            "mb": sum(a.nbytes for a in want) / 2**20, "error": got["error"]}


def _by_kernel(capture: Path) -> dict[str, list[Path]]:
    """A capture's call directories (``<pid>-<seq>-<kernel>``) by kernel, in call order."""
    got: dict[str, list[tuple[int, int, Path]]] = {}
    for m in capture.rglob("meta.json"):
        pid, seq, kernel = m.parent.name.split("-", 2)
        got.setdefault(kernel, []).append((int(pid), int(seq), m.parent))
    return {k: [d for _, _, d in sorted(v)] for k, v in got.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture", type=Path)
    ap.add_argument("--filter", default="")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--programs-from", type=Path, default=None,
                    help="run each call's program from this other capture of the same calls (the n-th call of a "
                         "kernel there): e.g. a capture made with PTO_FORGE_ROLL=0, to check that the programs of "
                         "two tracers compute the same bits on the same inputs")
    a = ap.parse_args()
    dirs = sorted(p for p in a.capture.rglob("meta.json"))
    others: dict[Path, Path] = {}
    if a.programs_from is not None:
        mine, theirs = _by_kernel(a.capture), _by_kernel(a.programs_from)
        for k, ds in mine.items():
            if len(theirs.get(k, [])) != len(ds):
                print(f"{k}: {len(ds)} calls here, {len(theirs.get(k, []))} in {a.programs_from}")
                return 2
            others.update(zip(ds, theirs[k], strict=True))
    bad = 0
    tb = tn = 0.0
    print(f"{'kernel call':<60} {'MB':>7} {'before s':>9} {'now s':>8} {'speed-up':>8} {'peak/args':>9}  result")
    for m in dirs:
        d = m.parent
        if a.filter not in str(d):
            continue
        r = replay(d, a.repeat, others.get(d))
        tb += r["before"]
        tn += r["now"]
        ok = "identical" if not r["diffs"] else "DIFFERENT: " + ", ".join(r["diffs"])
        if r["diffs"]:
            bad += 1
        err = f" (kernel error {r['error'][0]})" if r["error"] else ""
        print(f"{str(d.relative_to(a.capture))[:60]:<60} {r['mb']:>7.1f} {r['before']:>9.3f} {r['now']:>8.3f} "
              f"{r['before'] / max(r['now'], 1e-9):>7.1f}x {r['peak'] or 0:>9.2f}  {ok}{err}", flush=True)
    print(f"total: before {tb:.2f} s, now {tn:.2f} s ({tb / max(tn, 1e-9):.1f}x); {bad} different")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
