"""``python -m runtime.bisect op_dir stage_file [--case NAME] [--json]``.

Exit codes: 0 = no divergence, 1 = divergence found / localized, 2 = usage or op-directory error,
3 = the kernel did not run (runtime error, timeout), 4 = divergence not localized or infrastructure error.
"""

from __future__ import annotations

import argparse
import logging
import sys

from runtime.bisect.api import BisectError, bisect
from runtime.bisect.report import BisectReport
from runtime.cli_io import Parser, kernel_path_problem, run_main

_EXIT = {"NO_DIVERGENCE": 0, "DIVERGENCE_FOUND": 1, "RUNTIME_ERROR": 3, "NOT_LOCALIZED": 4, "ERROR": 4}


def _text(r: BisectReport) -> str:
    out = [f"bisect {r.op_name} {r.stage_file} case {r.case} [{r.method}]: {r.status}", f"  {r.summary}"]
    f = r.first_divergence
    if f is not None:
        out.append(f"  culprit: line {f.line} {f.op} iteration {f.iteration or '-'} offsets {f.offsets} "
                   f"valid {f.valid_shape}")
        if f.stats:
            out.append(f"    {f.stats.out_of_tolerance}/{f.stats.elements} out of tolerance vs "
                       f"{f.golden}, max |diff| {f.stats.max_abs_diff}, NaN {f.stats.nan_count}")
    o = r.observed_at
    if o is not None and (f is None or (o.line, o.iteration) != (f.line, f.iteration)):
        out.append(f"  first departing value: line {o.line} {o.op} iteration {o.iteration or '-'} vs {o.golden}")
    if r.candidates:
        out.append(f"  window lines: {sorted({c.line for c in r.candidates if c.line})}")
    out.extend(f"  - {e}" for e in r.evidence)
    for res in r.outputs:
        s = res.stats
        out.append(f"  output {res.name}: {'ok' if res.all_close else 'FAIL'}"
                   + (f" ({s.out_of_tolerance}/{s.elements} off, max {s.max_abs_diff})" if s and not res.all_close else ""))
    for c in r.checkpoints:
        out.append(f"  checkpoint {c.name}: {c.status}" + (f", drift onset {c.drift_onset}" if c.drift_onset else "")
                   + (f", {c.not_written} never written" if c.not_written > 0 else ""))
    if r.unmapped:
        out.append(f"  unmapped ops: {len(r.unmapped)} (e.g. line {r.unmapped[0].line} {r.unmapped[0].op}: "
                   f"{r.unmapped[0].reason})")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    # the runtime commands' parser: the closest option named, no prefix taken for an option, --help unwrapped piped
    p = Parser(prog="python -m runtime.bisect", name="runtime.bisect", usage_on_error=True,
               description="Localize the first diverging op.")
    p.add_argument("op_dir")
    p.add_argument("stage_file")
    p.add_argument("--case", default=None, help="case name (default: try cases until one diverges)")
    p.add_argument("--json", action="store_true", help="print the full JSON report")
    p.add_argument("--emulator", default="runtime.emulator", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    problem = kernel_path_problem(args.op_dir, args.stage_file, what="stage file")  # the closest name (UX s49)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        report = bisect(args.op_dir, args.stage_file, case=args.case, emulator=args.emulator)
    except BisectError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.to_json() if args.json else _text(report))
    return _EXIT.get(report.status, 4)


if __name__ == "__main__":
    sys.exit(run_main(main))
