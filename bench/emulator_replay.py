"""Replay captured kernel calls on the device executor: time each one and check it reproduces the capture bit for bit.

    FORGE_EMUREAL_CAPTURE=DIR python bench/emulator_real.py ...   # capture (bench/emulator_real_hook)
    python bench/emulator_replay.py DIR [--filter TEXT] [--repeat N]

A capture holds, per kernel call, the encoded program, the arguments before and after the run and the result
(error, warnings, counters, written arguments) of the executor that ran then. This replays each call with
today's executor and prints its CPU time against the captured one, the peak memory of the call (arguments +
what the executor added at its peak, over the arguments), and ``identical`` only when every
argument's bytes, the error, the warnings and the counters (but ``batched_iterations``) are the same. No torch and no vendor script is
needed: this is how a change of the executor is measured and checked on the real gym kernels.
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


def replay(d: Path, repeat: int) -> dict:
    meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
    program = decode((d / "program.bin").read_bytes())
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
    want_res["counters"] = {k: v for k, v in want_res["counters"].items() if k != "batched_iterations"}
    got["counters"] = {k: v for k, v in got["counters"].items() if k != "batched_iterations"}
    diffs += [k for k in ("error", "warnings", "counters", "written") if got[k] != want_res[k]]
    nbytes = sum(a.nbytes for a in want)
    return {"name": d.name, "before": meta["exec_cpu"], "now": best, "diffs": diffs,
            "peak": (nbytes + peak) / nbytes if nbytes and peak >= 0 else None,
            "mb": sum(a.nbytes for a in want) / 2**20, "error": got["error"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture", type=Path)
    ap.add_argument("--filter", default="")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    dirs = sorted(p for p in a.capture.rglob("meta.json"))
    bad = 0
    tb = tn = 0.0
    print(f"{'kernel call':<60} {'MB':>7} {'before s':>9} {'now s':>8} {'speed-up':>8} {'peak/args':>9}  result")
    for m in dirs:
        d = m.parent
        if a.filter not in str(d):
            continue
        r = replay(d, a.repeat)
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
