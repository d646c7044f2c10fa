"""Start-up cost of the processes verification spawns: a fresh interpreter importing what the child imports.

Every verification starts a golden child and a sandboxed candidate child per call, bisect and the smoke tool
start more; each one pays Python start-up plus ``numpy``, ``ml_dtypes`` and ``runtime.emulator`` before it runs
a line of the kernel. A dependency release once made this 1.3 s instead of 0.3 s (ml_dtypes 0.7.0's extension
module; the pin in pyproject.toml says so), which cost the test suite minutes. This bench shows each import's
share so such a regression is seen in one command.

Usage: ``python bench/child_startup.py [--repeat N]``. Target: median of the full child import <= 0.5 s on the
idle 2-core development machine (measured 0.3 s with ml_dtypes 0.6.0).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.5
STEPS = (("python start-up", "pass"), ("numpy", "import numpy"), ("ml_dtypes", "import ml_dtypes"),
         ("runtime.emulator (the sandbox child)", "import runtime.emulator"))


def _time(code: str, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-s", "-B", "-c", code], cwd=ROOT, check=True)
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    import ml_dtypes
    import numpy

    print(f"numpy {numpy.__version__}, ml_dtypes {ml_dtypes.__version__}, python {sys.version.split()[0]}")
    full = 0.0
    for label, code in STEPS:
        full = _time(code, args.repeat)
        print(f"  {label:<40} {full * 1000:7.0f} ms (median of {args.repeat}, cumulative imports)")
    ok = full <= TARGET_S
    print(f"child start-up {full:.2f} s: {'within' if ok else 'OVER'} the {TARGET_S:.1f} s target")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
