"""Differential test: random kernels through the emulator and the real pypto 0.2.0; list every disagreement.

    python bench/difftest/run.py --pypto-python /work/pypto-venv/bin/python [--count 200] [--seed 0]
    python bench/difftest/run.py --emulator-only ...      # the emulator side alone (no pypto needed)

Accept/reject is compared per kernel: the emulator *accepts* when ``run()`` returns (warnings allowed), the
real toolchain accepts when the SIM compile and the cost model finish. Each disagreement is classified:

* ``emulator-stricter``: the emulator rejects what 0.2.0 SIM silently accepts. Several are deliberate
  (spec/pypto-api.md §0.3 "what SIM does not detect": out-of-bounds views, shape mismatches, unaligned
  elementwise tiles, reads of unwritten tensors): the device would compute garbage, the emulator says so.
* ``emulator-lenient``: the real compiler rejects what the emulator runs: a fidelity gap (a kernel that
  PASSes verification and still fails to compile).

Writes ``results.json`` (every kernel: features, both outcomes) and ``REPORT.md`` (agreement rate, classes,
each disagreement with its kernel) into ``--out`` (default: this folder). Disagreements are copied to
``tests/toolchain/fixtures/probes/`` with their recorded real outcome by ``--write-probes``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import generate  # noqa: E402

EXTRA_FINDINGS = """## Found outside the random suite


- `tests/toolchain/fixtures/probes/ub_overflow_tile.py` (perf-stage tile search on quick_gelu): a [64, 512] fp32
  vector tile. Real pypto 0.2.0 rejects it in the pass pipeline (plog: `OP MULS[...] in/output total size
  [262144] exceeds MEM_UB size [196608]!`, mapped to the `pypto.mul` line); the emulator accepts it
  (emulator-lenient: the unified-buffer capacity is not checked).
"""

PROBES = ROOT / "tests" / "toolchain" / "fixtures" / "probes"


def emulator_outcome(path: Path) -> dict[str, Any]:
    """Run one kernel script on the emulator in this process (fresh session); accept = run() returned."""
    import runtime.emulator as emu

    emu.install()
    spec = importlib.util.spec_from_file_location(f"emu_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    try:
        with emu.session(options=emu.Options(compat="0.2.0")):
            spec.loader.exec_module(mod)
            mod.run()
    except emu.EmulatorError as exc:
        return {"status": "rejected", "kind": exc.code or type(exc).__name__, "line": exc.line,
                "message": str(exc.message)[:300]}
    except Exception as exc:  # noqa: BLE001 - the kernel's own error is an outcome
        return {"status": "rejected", "kind": type(exc).__name__, "line": None, "message": str(exc)[:300]}
    return {"status": "accepted"}


def classify(emu: dict[str, Any], real: dict[str, Any]) -> str:
    if emu["status"] == real["status"]:
        return "agree"
    return "emulator-stricter" if emu["status"] == "rejected" else "emulator-lenient"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pypto-python", help="python of a venv with pypto==0.2.0, torch, sympy")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--emulator-only", action="store_true")
    parser.add_argument("--write-probes", action="store_true", help="copy disagreements to tests/toolchain/fixtures/probes")
    parser.add_argument("--from-results", type=Path, metavar="JSON",
                        help="rebuild REPORT.md (and probes) from an earlier results.json without running anything")
    args = parser.parse_args()
    if args.from_results:
        data = json.loads(args.from_results.read_text())
        args.count, args.seed = data["count"], data["seed"]
        sources = {k.name: k.source for k in generate(args.count, args.seed)}
        rows = [dict(r, source=sources[r["kernel"]]) for r in data["kernels"]]
        _write(args.out, rows, data["emulator_s"], data["real_s"], args)
        if args.write_probes:
            _probes(rows)
        return 0
    kernels = generate(args.count, args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="difftest-"))
    try:
        paths = []
        for k in kernels:
            p = tmp / f"{k.name}.py"
            p.write_text(k.source)
            paths.append(p)
        t0 = time.perf_counter()
        emu = [emulator_outcome(p) for p in paths]
        emu_s = time.perf_counter() - t0
        print(f"emulator: {sum(e['status'] == 'accepted' for e in emu)}/{len(emu)} accepted in {emu_s:.1f} s")
        if args.emulator_only:
            return 0
        from runtime.toolchain import run_scripts

        t0 = time.perf_counter()
        real = [o.model_dump(mode="json", exclude={"cost"}) | {"total_cycles": o.cost.total_cycles if o.cost else None}
                for o in run_scripts(paths, python=args.pypto_python)]
        real_s = time.perf_counter() - t0
        print(f"real pypto: {sum(r['status'] == 'accepted' for r in real)}/{len(real)} accepted in {real_s:.1f} s")
        rows = []
        for k, e, r in zip(kernels, emu, real, strict=True):
            rows.append({"kernel": k.name, "features": k.features, "emulator": e, "real": r,
                         "class": classify(e, r), "source": k.source})
        _write(args.out, rows, emu_s, real_s, args)
        if args.write_probes:
            _probes(rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _key(row: dict[str, Any]) -> str:
    e, r = row["emulator"], row["real"]
    side = e if row["class"] == "emulator-stricter" else r
    return f"{row['class']}: {side.get('kind') or side.get('stage')}"


def _write(out: Path, rows: list[dict[str, Any]], emu_s: float, real_s: float, args: Any) -> None:
    out.mkdir(parents=True, exist_ok=True)
    agree = sum(r["class"] == "agree" for r in rows)
    classes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["class"] != "agree":
            classes[_key(r)].append(r)
    slim = [{k: v for k, v in r.items() if k != "source"} for r in rows]
    (out / "results.json").write_text(json.dumps({"count": len(rows), "seed": args.seed, "agree": agree,
                                                  "emulator_s": round(emu_s, 1), "real_s": round(real_s, 1),
                                                  "kernels": slim}, indent=1) + "\n")
    both = Counter((r["emulator"]["status"], r["real"]["status"]) for r in rows)
    lines = [
        "# Differential test: emulator vs real pypto 0.2.0 (RunMode.SIM)",
        "",
        f"Generated by `python bench/difftest/run.py --count {len(rows)} --seed {args.seed}` "
        f"(`bench/difftest/generate.py`). Compared: accept/reject per kernel.",
        "",
        f"**Agreement: {agree}/{len(rows)} = {100 * agree / len(rows):.1f}%**  "
        f"(emulator {emu_s:.0f} s, real toolchain {real_s:.0f} s on this machine)",
        "",
        "| emulator \\ real | accepted | rejected |",
        "|---|---|---|",
        f"| accepted | {both[('accepted', 'accepted')]} | {both[('accepted', 'rejected')]} |",
        f"| rejected | {both[('rejected', 'accepted')]} | {both[('rejected', 'rejected')]} |",
        "",
        "## Classes of disagreement",
        "",
        "| class | kernels | features seen in every kernel of the class |",
        "|---|---|---|",
    ]
    for key in sorted(classes):
        group = classes[key]
        common = set(group[0]["features"])
        for g in group[1:]:
            common &= set(g["features"])
        lines.append(f"| {key} | {len(group)} | {', '.join(sorted(common)) or '-'} |")
    lines += ["", "## Every disagreement", ""]
    for key in sorted(classes):
        for r in classes[key]:
            e, rr = r["emulator"], r["real"]
            lines += [f"### {r['kernel']} ({key})", "",
                      f"- features: {', '.join(r['features'])}",
                      f"- emulator: {e['status']}" + (f" `{e.get('kind')}` line {e.get('line')}: "
                                                       f"{_md(e.get('message', ''))}" if e["status"] != "accepted" else ""),
                      f"- real: {rr['status']}" + (f" `{rr.get('kind')}` ({rr.get('stage')}) line {rr.get('line')}: "
                                                   f"{_md(rr.get('message', ''))}" if rr["status"] != "accepted" else ""),
                      "", "```python", r["source"].rstrip(), "```", ""]
    (out / "REPORT.md").write_text("\n".join(lines) + "\n\n" + EXTRA_FINDINGS)
    print(f"agreement {agree}/{len(rows)}; {len(classes)} classes of disagreement; wrote {out / 'REPORT.md'}")


def _md(text: str) -> str:
    return " ".join(str(text).split())[:200].replace("|", "\\|")


def _probes(rows: list[dict[str, Any]]) -> None:
    """One probe per disagreement class (first kernel of each), with the real outcome recorded."""
    PROBES.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    expectations = {}
    for r in rows:
        if r["class"] == "agree":
            continue
        key = _key(r)
        if key in seen:
            continue
        seen.add(key)
        (PROBES / f"{r['kernel']}.py").write_text(r["source"])
        expectations[r["kernel"]] = {"class": r["class"], "features": r["features"],
                                     "real": {k: r["real"].get(k) for k in ("status", "kind", "stage", "line",
                                                                             "message")},
                                     "emulator_when_recorded": r["emulator"]}
    (PROBES / "expectations.json").write_text(json.dumps(expectations, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(expectations)} probes to {PROBES}")


if __name__ == "__main__":
    raise SystemExit(main())
