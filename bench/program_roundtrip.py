"""Run the real gym operators (``$FORGE_SHARED/gym``) on the emulator with every kernel call checked through the
kernel-program codec: each call runs directly and as ``decode(encode(program))`` and must give the same bytes,
counters, warnings and errors (``PTO_FORGE_EMU_ROUNDTRIP=check``; a difference aborts the script).

Usage: ``python bench/program_roundtrip.py [op ...] [--timeout S]``. Prints one line per operator: the
vendor's own pass signal (as in ``runs.tsv``), the wall time, and the number of kernel programs checked; an
operator the emulator cannot run yet is reported as such (that is the gym issue's business, not the codec's).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _shared() -> Path:
    return Path(os.environ.get("FORGE_SHARED") or ROOT.parent / "shared").resolve()  # runs change directory


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ops", nargs="*")
    p.add_argument("--timeout", type=float, default=600)
    a = p.parse_args()
    gym = _shared() / "gym"
    if not (gym / "runs.tsv").is_file():
        print(f"program_roundtrip: no gym corpus at {gym} (set FORGE_SHARED); nothing run")
        return 0
    rows = [line.split("\t") for line in (gym / "runs.tsv").read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    env = dict(os.environ, PTO_FORGE_EMU_ROUNDTRIP="check", PYTHONPATH=str(ROOT))
    bad = 0
    print(f"{'op':28s} {'result':10s} {'s':>7s}  detail")
    for name, folder, command, signal in rows:
        if a.ops and name not in a.ops:
            continue
        cwd = gym / "ops" / folder
        cmd = [sys.executable, "-m", "runtime.emulator", "--quiet", *command.split()]
        if command.startswith("-m "):
            cmd = [sys.executable, "-m", "runtime.emulator", "--quiet", "-m", *command.split()[1:]]
        t = time.perf_counter()
        try:
            r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=a.timeout)
            out, rc = r.stdout + r.stderr, r.returncode
        except subprocess.TimeoutExpired:
            out, rc = "timeout", -1
        dt = time.perf_counter() - t
        if "RoundTripMismatch" in out:
            result, bad = "MISMATCH", bad + 1
            detail = next((ln for ln in out.splitlines() if "RoundTripMismatch" in ln), "")[:120]
        elif (rc == 0 if signal.strip() == "rc0" else re.search(signal.strip(), out)) and rc == 0:
            result, detail = "ok", "vendor signal seen, every kernel call identical through the codec"
        else:
            result, detail = "not-run", (out.strip().splitlines() or ["(no output)"])[-1][:120]
        print(f"{name:28s} {result:10s} {dt:7.1f}  {detail}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
