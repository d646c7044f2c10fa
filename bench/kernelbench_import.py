"""Import every KernelBench task file of ../shared/kernelbench and print the table of docs/kernelbench.md.

    python bench/kernelbench_import.py [--shared DIR] [--json OUT] [--keep DIR] [FILTER ...]

For each task: imported or not (and why, in one line), the dynamic axes, the P0 shapes, the number of
verification cases, what was guessed, and the seconds the import took (three child processes that load torch,
plus intake's golden run on every case). Needs torch; the corpus is ``$FORGE_SHARED/kernelbench`` or
``<repo>/../shared/kernelbench``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestrator.adapters.kernelbench import TaskImportError, import_task  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("filters", nargs="*", help="only files whose path contains one of these")
    ap.add_argument("--shared", default=os.environ.get("FORGE_SHARED") or str(REPO.parent / "shared"))
    ap.add_argument("--json", default=None, help="also write the rows as JSON")
    ap.add_argument("--keep", default=None, help="also copy each imported SPEC.md to KEEP/<level>_<file>.md "
                    "(to compare two runs' SPECs: a change of the importer must say which SPEC it changes)")
    args = ap.parse_args(argv)
    root = Path(args.shared) / "kernelbench"
    files = sorted(root.glob("*/*.py"), key=lambda p: (p.parent.name, int(p.name.split("_")[0]) if p.name[0].isdigit() else 0))
    if args.filters:
        files = [f for f in files if any(a in str(f) for a in args.filters)]
    rows = []
    print("| task | imported | dynamic axes | P0 shapes | cases | notes / why not | s |")
    print("|---|---|---|---|---|---|---|")
    for f in files:
        start = time.monotonic()
        with tempfile.TemporaryDirectory() as tmp:
            try:
                rep = import_task(f, Path(tmp) / "op")
                if args.keep:
                    Path(args.keep).mkdir(parents=True, exist_ok=True)
                    spec = (Path(tmp) / "op" / "SPEC.md").read_text(encoding="utf-8")
                    (Path(args.keep) / f"{f.parent.name}_{f.stem}.md").write_text(spec, encoding="utf-8")
                row = {"task": f"{f.parent.name}/{f.name}", "ok": True, "dynamic": rep.dynamic_axes,
                       "p0": rep.p0_shapes, "cases": rep.cases, "why": "; ".join(rep.unmapped)}
            except TaskImportError as exc:
                row = {"task": f"{f.parent.name}/{f.name}", "ok": False, "dynamic": [], "p0": [], "cases": 0,
                       "why": str(exc)}
        row["seconds"] = round(time.monotonic() - start, 1)
        rows.append(row)
        p0 = " / ".join(",".join(f"{k}={v}" for k, v in p.items()) for p in row["p0"]) or "task's own"
        why = str(row["why"]).replace("|", "/")
        print(f"| {row['task']} | {'yes' if row['ok'] else '**no**'} | {', '.join(row['dynamic']) or '-'} | "
              f"{p0 if row['ok'] else '-'} | {row['cases'] or '-'} | {why or '-'} | {row['seconds']} |", flush=True)
    ok = sum(r["ok"] for r in rows)
    print(f"\n{ok} of {len(rows)} task files imported; {sum(r['seconds'] for r in rows):.0f} s in total")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
