"""How long intake waits in a CLI run, with the run's golden process booted before or after the api import.

    python bench/cli_intake.py [--repeat N] [op]

Each measurement is a fresh interpreter (as ``python -m orchestrator run``): ``early`` enters
``orchestrator.cli._common.golden_process_early`` first (what the CLI does), ``late`` does not (the golden process
then boots inside ``api.run``, after LangGraph is imported); both then import ``orchestrator.api`` and time
``api.check_op_dir`` on a fresh copy of the op (intake: SPEC.md, static checks, golden.py on every case), alternated
so both see the same load. Not a test: numbers depend on the machine and its load (printed).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import sys, tempfile, time
from pathlib import Path
t0 = time.perf_counter()
if sys.argv[1] == "early":
    from orchestrator.cli._common import golden_process_early
    held = golden_process_early()  # kept: a dropped generator context manager would end the server at once
    held.__enter__()
from orchestrator import api
from runtime.opdir import golden_server
t1 = time.perf_counter()
with tempfile.TemporaryDirectory() as tmp:
    op = api.copy_op_inputs(Path(sys.argv[2]), Path(tmp) / "op")
    t2 = time.perf_counter()
    with golden_server():  # as api.run holds it
        api.check_op_dir(op)
    t3 = time.perf_counter()
print(f"{t1 - t0:.3f} {t3 - t2:.3f}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("op", nargs="?", default="silu")
    args = parser.parse_args()
    for _ in range(args.repeat):
        for mode in ("late", "early"):
            out = subprocess.run([sys.executable, "-c", CHILD, mode, str(ROOT / "workspace" / args.op)], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout.split()
            print(f"{mode:>5}: imports {float(out[0]):.2f} s, intake {1000 * float(out[1]):.0f} ms")
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
