"""Verify an operator whose inputs and outputs total several GB, and report wall time and peak memory.

Usage: ``python bench/verify_scale.py [--gib 2.0] [--keep DIR]``. Builds an op dir (SiLU over ``[B, 1024]`` fp32
rows, ``B`` chosen so that the one SPEC case's input + output is ``--gib`` GiB; golden.py makes its input with
``make_inputs`` and computes in place, so the golden side stays small), verifies its honest kernel on that case
plus the unseen cases, and prints the verdict, seconds, and the peak resident memory of this process (the
verifier) and of its largest child (``getrusage``: golden, candidate and device are children).

Why it exists (issue #24): every output used to travel back through the candidate's result pipe (a 1 GiB cap);
now inputs are sealed shared memory that the candidate and the device map, and outputs come from the device.
``tests/verify/test_unseen.py::test_a_several_gb_spec_case_runs_once_and_unseen_cases_stay_under_the_cap``
holds the bound logic (the big case runs once; unseen cases stay under the 64 MiB cap). The peak of the whole
process tree is sampled as PSS (shared memory counted once) every 50 ms.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

COLS = 1024
SPEC = """---
schema_version: 1
op_name: silu_big
inputs:
  - {{name: x, shape: [B, D], dtype: fp32, range: [-4.0, 4.0]}}
outputs:
  - {{name: y, shape: [B, D], dtype: fp32}}
dynamic_axes: [B]
p0_shapes:
  - {{B: {rows}, D: {cols}}}
supported_dtypes: [fp32]
tolerance:
  fp32: {{atol: 1.0e-5, rtol: 1.0e-5}}
seeds: [0, 1, 2]
---

# silu_big

y = x * sigmoid(x) over rows of 1024 fp32 values; one SPEC shape of several GB (bench/verify_scale.py).
"""
GOLDEN = """# Golden function inventory
# | # | Golden operation     | Shape transformation |
# |---|----------------------|----------------------|
# | 1 | x * sigmoid(x)       | [B,D] -> [B,D]       |
import numpy as np


def make_inputs(case, rng):
    shape = (case["dims"]["B"], case["dims"]["D"])
    x = rng.random(shape, dtype=np.float32)
    x *= 8.0
    x -= 4.0
    return [x]


def golden(x):
    y = np.negative(x)           # [B, D]; in place below: the golden holds two arrays, not five
    np.exp(y, out=y)
    y += 1.0
    np.divide(x, y, out=y)
    return y
"""
KERNEL = """import numpy as np
import pypto

TILE = 16
D = 1024


@pypto.frontend.jit
def silu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        pypto.assemble(xt * pypto.sigmoid(xt), [i * TILE, 0], y)


def silu_big_wrapper(x):
    y = np.empty_like(x)
    silu_kernel(x, y)
    return y
"""


def build(dest: Path, gib: float) -> Path:
    """An op dir whose one SPEC shape holds ``gib`` GiB of input + output (fp32, 1024 columns)."""
    rows = max(16, int(gib * 2**30 / (2 * 4 * COLS)))
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "SPEC.md").write_text(SPEC.format(rows=rows, cols=COLS), encoding="utf-8")
    (dest / "golden.py").write_text(GOLDEN, encoding="utf-8")
    (dest / "silu_big_impl.py").write_text(KERNEL, encoding="utf-8")
    return dest


def measure(op: Path, *, wall_s: float = 600.0) -> dict:
    """Verify the first SPEC case (+ unseen cases); seconds and peak RSS (GiB) of the verifier and its largest
    child."""
    import os
    import threading

    from runtime.opdir import load_op_dir
    from runtime.sandbox import SandboxPolicy
    from runtime.verify import VerifySettings, verify

    def role(pid: int) -> str:
        """Which process of a verification ``pid`` is (from its command line)."""
        if pid == os.getpid():
            return "verifier"
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            return "other"
        for marker, name in ((b"_device.py", "device"), (b"_runner.py", "candidate"), (b"golden", "golden")):
            if marker in cmd:
                return name
        return "other"

    def tree_pss_kib() -> tuple[int, dict[str, int]]:
        """Proportional set size of this process and all its descendants (shared memory counted once), in
        total and per role (verifier, golden, candidate, device; a bwrap wrapper counts as other)."""
        pids, total, roles = [os.getpid()], 0, {}  # type: ignore[var-annotated]
        while pids:
            pid = pids.pop()
            try:
                with open(f"/proc/{pid}/smaps_rollup") as f:
                    pss = sum(int(line.split()[1]) for line in f if line.startswith("Pss:"))
                with open(f"/proc/{pid}/task/{pid}/children") as f:
                    pids += [int(c) for c in f.read().split()]
            except OSError:
                continue
            total += pss
            name = role(pid)
            roles[name] = roles.get(name, 0) + pss
        return total, roles

    peak = [0]
    peak_roles: dict[str, int] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.05):
            total, roles = tree_pss_kib()
            peak[0] = max(peak[0], total)
            for name, kib in roles.items():
                peak_roles[name] = max(peak_roles.get(name, 0), kib)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    case = load_op_dir(op).cases()[0]
    settings = VerifySettings(sandbox=SandboxPolicy(wall_timeout_s=wall_s, cpu_timeout_s=int(wall_s)),
                              golden_timeout_s=wall_s)
    t0 = time.perf_counter()
    report = verify(op, op / "silu_big_impl.py", case=case.name, settings=settings, unseen_seed=1)
    seconds = time.perf_counter() - t0
    stop.set()
    sampler.join()
    kib_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kib_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"verdict": report.verdict, "reasons": report.reasons[:3], "seconds": round(seconds, 1),
            "case_gib": round(2 * 4 * COLS * case.dims["B"] / 2**30, 2), "cases": len(report.cases),
            "peak_verifier_gib": round(kib_self / 2**20, 2), "peak_child_gib": round(kib_child / 2**20, 2),
            "peak_tree_pss_gib": round(peak[0] / 2**20, 2),
            "peak_pss_gib_by_process": {k: round(v / 2**20, 2) for k, v in sorted(peak_roles.items())},
            "peak_tree_over_case": round(peak[0] / 2**20 / max(1e-9, 2 * 4 * COLS * case.dims["B"] / 2**30), 2)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gib", type=float, default=2.0, help="input + output of the SPEC case, in GiB")
    p.add_argument("--keep", type=Path, help="build the op dir here (default: a temporary folder)")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="forge-scale-") as tmp:
        op = build(a.keep or Path(tmp) / "silu_big", a.gib)
        print(measure(op))
    return 0


if __name__ == "__main__":
    sys.exit(main())
