"""The gym measurement of issue #25: every operator of ``shared/gym`` run as its ``runs.tsv`` line says, on the emulator.

    .venv/bin/python bench/gym_runs.py [--gym DIR] [--only NAME ...] [--flags "--npuarch DAV_3510"]
                                       [--installed] [--timeout S] [--json OUT]

Each line of ``runs.tsv`` is a gym user's command on a device host, with ``python -m runtime.emulator`` in place
of ``python``::

    cd ops/<dir> && TILE_FWK_DEVICE_ID=0 PYTHONPATH=<op>/src python -m runtime.emulator <command>

run on a throw-away copy of the operator (vendor tests write output/ folders and caches; the shared tree stays
untouched). A run passes when it exits 0, its output matches the ``pass`` regex, and a kernel ran (the
emulator's ``[emulator] kernel calls`` line, printed by the runner and by every child process it starts).
``--installed`` runs the gym the way ``pip install -e .`` leaves it instead (``PYTHONPATH`` unset, ``<op>/src``
importable through ``--site-path``), which is what the tests that re-run themselves with a
``PYTHONPATH = test_dir + ":" + os.environ.get("PYTHONPATH", "")`` expect. Reported per run: the verdict, the exit
status, wall seconds and the peak resident memory of the process tree (GNU time's maximum RSS).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL_RAN = re.compile(r"^\[emulator\] kernel calls [1-9]", re.M)


def gym_dir(arg: str | None) -> Path:
    """The gym folder, absolute: each run changes into its operator's folder, so a relative ``--gym`` or
    ``FORGE_SHARED`` (``FORGE_SHARED=../shared``) would otherwise name the wrong ``<op>/src`` on its PYTHONPATH."""
    if arg:
        return Path(arg).resolve()
    shared = os.environ.get("FORGE_SHARED")
    return ((Path(shared) if shared else ROOT.parent / "shared") / "gym").resolve()


def read_runs(gym: Path) -> list[dict[str, str]]:
    """The lines of runs.tsv: name, dir (relative to ops/), command (after `python`), pass (regex or rc0)."""
    runs = []
    for line in (gym / "runs.tsv").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, folder, command, pattern = line.split("\t")
        runs.append({"name": name, "dir": folder, "command": command, "pass": pattern})
    return runs


# `python -m runtime.emulator` from this checkout although the child's PYTHONPATH is only `<op>/src`: put the
# checkout first just long enough to import the runner, then start it as `-m` would (argv[0] its file, sys.path[0]
# the working directory), so the script sees the sys.path a gym user's `python -m runtime.emulator` gives it.
_BOOT = ("import os, runpy, sys; sys.path.insert(0, {root!r}); import runtime.emulator; "
         "sys.path.remove({root!r}); sys.path[0] = os.getcwd(); "
         "runpy.run_module('runtime.emulator', run_name='__main__', alter_sys=True)")


def runner_argv(env: dict[str, str]) -> list[str]:
    """How to start this checkout's runner. Why: the interpreter may import ``runtime`` from another checkout (an
    editable install of the main one maps ``runtime`` there), and the run drops ``PYTHONPATH`` for the gym's own,
    so a clone measured with ``python -m runtime.emulator`` ran the other checkout's emulator."""
    probe = subprocess.run([sys.executable, "-c", "import runtime, os; print(os.path.dirname(runtime.__file__))"],
                           cwd=tempfile.gettempdir(), env=env, capture_output=True, text=True, check=False)
    if probe.returncode == 0 and Path(probe.stdout.strip()).resolve() == ROOT / "runtime":
        return [sys.executable, "-m", "runtime.emulator"]
    return [sys.executable, "-c", _BOOT.format(root=str(ROOT))]


def run_one(gym: Path, run: dict[str, str], work: Path, flags: list[str], installed: bool,
            timeout: float) -> dict[str, object]:
    src = gym / "ops" / run["name"]
    op = work / "ops" / run["name"]
    shutil.copytree(src, op, symlinks=True)
    for p in [op, *op.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    cwd = work / "ops" / run["dir"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}
    env["TILE_FWK_DEVICE_ID"] = "0"
    site = []
    if installed:
        site = ["--site-path", str(op / "src")]
    else:
        env["PYTHONPATH"] = str(op / "src")
    rss_file = work / f"{run['name']}.rss"
    cmd = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *runner_argv(env), *flags, *site,
           *shlex.split(run["command"])]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        out, rc = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        rc = None
    seconds = time.perf_counter() - t0
    rss_text = rss_file.read_text().strip().splitlines() if rss_file.exists() else []
    peak_mb = round(int(rss_text[-1]) / 1024) if rss_text and rss_text[-1].isdigit() else None
    pattern = run["pass"]
    matched = rc == 0 if pattern == "rc0" else bool(re.search(pattern, out))
    ran = bool(KERNEL_RAN.search(out))
    verdict = "TIMEOUT" if rc is None else ("PASS" if rc == 0 and matched and ran else "FAIL")
    errors = [ln for ln in out.splitlines() if ln.startswith("ERROR") or "Error" in ln.split(":")[0]]
    return {"name": run["name"], "verdict": verdict, "rc": rc, "seconds": round(seconds, 1), "peak_mb": peak_mb,
            "kernel_ran": ran, "signal_matched": matched, "last_error": (errors[-1] if errors else "")[:240],
            "command": " ".join([*flags, *site, run["command"]])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gym", help="the gym folder (default: $FORGE_SHARED/gym or <repo>/../shared/gym)")
    ap.add_argument("--only", nargs="*", default=[], help="operator names to run (default: all)")
    ap.add_argument("--flags", default="", help="extra runner switches, e.g. \"--npuarch DAV_3510\"")
    ap.add_argument("--installed", action="store_true", help="PYTHONPATH unset, <op>/src through --site-path")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per run (default 3600)")
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args()
    gym = gym_dir(args.gym)
    if not (gym / "runs.tsv").is_file():
        print(f"gym_runs: no runs.tsv under {gym} (set FORGE_SHARED or --gym)", file=sys.stderr)
        return 2
    runs = [r for r in read_runs(gym) if not args.only or r["name"] in args.only]
    results = []
    print(f"{'operator':28} {'verdict':8} {'rc':>4} {'seconds':>8} {'peak MB':>8}  last error")
    with tempfile.TemporaryDirectory(prefix="gym-runs-") as tmp:
        for run in runs:
            r = run_one(gym, run, Path(tmp), shlex.split(args.flags), args.installed, args.timeout)
            results.append(r)
            print(f"{r['name']:28} {r['verdict']:8} {r['rc']!s:>4} {r['seconds']:>8} {r['peak_mb']!s:>8}  "
                  f"{r['last_error']}", flush=True)
    passed = sum(r["verdict"] == "PASS" for r in results)
    print(f"{passed}/{len(results)} pass")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
