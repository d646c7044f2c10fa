"""Lint speed on a 1,000-line kernel file (acceptance: < 200 ms per lint on this machine).

Builds a realistic stage file (one JIT kernel, dozens of marked modules of view/compute/assemble code inside
a `pypto.loop`, tiles, casts, a wrapper) and times `lint_source` (parse + every module-stage rule) cold,
then the median of repeated runs. Run: `.venv/bin/python bench/lint_speed.py`.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runtime.lint import lint_source  # noqa: E402

BUDGET_MS = 200.0


def make_kernel(target_lines: int = 1000) -> str:
    head = [
        '"""Synthetic stage file for the lint benchmark."""',
        "",
        "import numpy as np",
        "import pypto",
        "",
        "ROWS = 16",
        "D = 256",
        "",
        "",
        "@pypto.frontend.jit",
        "def bench_kernel(",
        "    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),",
        "    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),",
        "):",
        "    n = x.shape[0]",
        "    pypto.set_vec_tile_shapes(ROWS, 64)",
        '    for i in pypto.loop(pypto.ceildiv(n, ROWS), name="rows", idx_name="i", unroll_list=[1]):',
        "        valid = (n - i * ROWS).min(ROWS)",
        "        xt = pypto.view(x, [ROWS, D], [i * ROWS, 0], valid_shape=[valid, D])  # [ROWS, D]",
        "        acc = pypto.cast(xt, pypto.DT_FP32)  # [ROWS, D]",
    ]
    tail = [
        "        pypto.assemble(pypto.cast(acc, pypto.DT_BF16), [i * ROWS, 0], y)",
        "",
        "",
        "def bench_wrapper(x):",
        "    y = np.empty_like(x)",
        "    bench_kernel(x, y)",
        "    return y",
        "",
    ]
    body: list[str] = []
    k = 0
    while len(head) + len(body) + len(tail) < target_lines - 12:
        k += 1
        body += [
            f"        # --- Module M{k}: block {k} ---",
            f"        t{k}a = pypto.mul(acc, 0.5)  # [ROWS, D]",
            f"        t{k}b = pypto.exp(pypto.sub(t{k}a, 1.0))  # [ROWS, D]",
            f"        t{k}c = pypto.sum(t{k}b, -1, keepdim=True)  # [ROWS, 1]",
            f"        t{k}d = pypto.amax(t{k}b, -1, keepdim=True)  # [ROWS, 1]",
            f"        t{k}e = t{k}b / (t{k}c + t{k}d)  # [ROWS, D]",
            f"        t{k}f = pypto.sigmoid(t{k}e) * t{k}e  # [ROWS, D]",
            f"        t{k}g = pypto.maximum(t{k}f, acc)  # [ROWS, D]",
            f"        t{k}h = pypto.rsqrt(pypto.add(t{k}c, 1e-6))  # [ROWS, 1]",
            f"        acc = t{k}g * t{k}h  # [ROWS, D]",
            "",
        ]
    return "\n".join(head + body + tail)


def main() -> int:
    src = make_kernel()
    n_lines = src.count("\n") + 1
    t0 = time.perf_counter()
    findings = lint_source(src, "bench_impl.py", stage="module")  # first call also loads the API surface
    cold_ms = (time.perf_counter() - t0) * 1000
    wall, cpu = [], []
    for _ in range(15):
        t0, c0 = time.perf_counter(), time.process_time()
        lint_source(src, "bench_impl.py", stage="module")
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    med_wall, med_cpu = statistics.median(wall), statistics.median(cpu)
    print(f"lint of a {n_lines}-line kernel: median {med_wall:.1f} ms wall, {med_cpu:.1f} ms CPU "
          f"(best {min(wall):.1f} ms, first call {cold_ms:.1f} ms); budget {BUDGET_MS:.0f} ms; "
          f"findings: {len(findings)}")
    # CPU time is the budget's measure: wall time also counts other processes competing for the 2 cores
    return 0 if med_cpu < BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
