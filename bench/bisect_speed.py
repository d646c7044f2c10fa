"""Bisect time versus one verification of the same case (issue 9 asks for at most 3x).

For every op of the bisect corpus (tests/bisect/corpus_data) and a bugged variant of each, time
``runtime.verify.verify(op_dir, stage, case=C)`` and ``runtime.bisect.bisect(op_dir, stage, case=C)`` on the
same case C (the first tail case), median of ``--repeat`` runs, with the real emulator (or ``--emulator``).
Prints one row per kernel and exits 1 when some ratio exceeds the limit.

    .venv/bin/python bench/bisect_speed.py [--repeat 3] [--emulator runtime.emulator]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bisect"))

from bisect_corpus import CORPUS, VARIANTS, materialize  # noqa: E402

from runtime.bisect import bisect  # noqa: E402
from runtime.opdir import load_op_dir  # noqa: E402
from runtime.verify import VerifySettings, verify  # noqa: E402

LIMIT = 3.0


def _median_time(fn, repeat: int, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn(*args, **kwargs)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _workspace_attempts(tmp: Path) -> list[tuple[str, Path, Path]]:
    """Failed implementer attempts of the workspace ops (bigger kernels than the corpus)."""
    out = []
    for script in sorted((ROOT / "workspace").glob("*/authoring/script.yaml")):
        data = yaml.safe_load(script.read_text()) or {}
        src = script.parents[1]
        for mod, entries in (data.get("debug") or {}).items():
            for e in entries or []:
                verdict = (data.get("verdicts") or {}).get(mod, [None] * e["attempt"])[e["attempt"] - 1]
                if verdict not in ("FAIL_NUMERIC", "FAIL_RUNTIME") or not e.get("proposals"):
                    continue
                attempt = data["implement"][mod][e["attempt"] - 1]
                op_dir = tmp / f"ws-{src.name}-{Path(attempt).stem}"
                shutil.copytree(src, op_dir, ignore=shutil.ignore_patterns("authoring", "traces", ".forge"))
                if (src / "authoring" / "module_interfaces.yaml").exists():
                    shutil.copy(src / "authoring" / "module_interfaces.yaml", op_dir)
                stage = op_dir / e["proposals"][0]["file"]
                stage.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(src / "authoring" / attempt, stage)
                out.append((f"ws {src.name} {Path(attempt).stem}", op_dir, stage))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--emulator", default="runtime.emulator")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bisect-bench-"))
    kernels: list[tuple[str, Path, Path]] = []
    for op in sorted(p.name for p in CORPUS.iterdir() if (p / "SPEC.md").exists()):
        kernels.append((f"{op} (correct)", CORPUS / op, CORPUS / op / f"{op}_impl.py"))
        v = next((v for v in VARIANTS if v.op == op and v.kind != "off_by_one"), None)
        if v is not None:
            op_dir, stage, _ = materialize(v, tmp)
            kernels.append((v.id, op_dir, stage))
    kernels.extend(_workspace_attempts(tmp))
    settings = VerifySettings(emulator=args.emulator)
    print(f"{'kernel':28s} {'case':26s} {'verify s':>9s} {'bisect s':>9s} {'ratio':>6s}  status")
    worst = 0.0
    for label, op_dir, stage in kernels:
        case = next(c for c in load_op_dir(op_dir).cases() if c.tail).name
        tv, vrep = _median_time(verify, args.repeat, op_dir, stage, case=case, settings=settings)
        tb, brep = _median_time(bisect, args.repeat, op_dir, stage, case=case, emulator=args.emulator)
        verdict = vrep.verdict
        if verdict in ("FAIL_LINT", "ERROR"):  # verification stopped before running the kernel: no baseline
            print(f"{label:28s} {case:26s} {tv:9.2f} {tb:9.2f} {'n/a':>6s}  {brep.status} "
                  f"(verify: {verdict})")
            continue
        ratio = tb / tv
        worst = max(worst, ratio)
        print(f"{label:28s} {case:26s} {tv:9.2f} {tb:9.2f} {ratio:6.2f}  {brep.status} (verify: {verdict})")
    print(f"worst ratio {worst:.2f} (limit {LIMIT:g}x)")
    return 0 if worst <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
