"""`python -m orchestrator report op_dir [--run ID] [--out FILE]`: write the run as one self-contained HTML file."""

from __future__ import annotations

import argparse

from rich.markup import escape

from orchestrator.cli._common import console, fail


def register(sub) -> None:
    p = sub.add_parser("report", help="write an HTML report of a run (timeline, attempts, diffs, plots, model calls)")
    p.add_argument("op_dir", help="operator directory")
    p.add_argument("--run", dest="run_id", default=None, help="a specific run id (default: the latest)")
    p.add_argument("--out", default=None, help="output file, or a folder to write <op>-run-<id>.html in (default .forge/run-<id>/report.html)")
    p.set_defaults(func=_report)


def _report(args: argparse.Namespace) -> int:
    from orchestrator.errors import ForgeError
    from orchestrator.ui.run_report import build_report

    try:
        result = build_report(args.op_dir, run_id=args.run_id, out=args.out)
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    console.print(f"wrote {escape(result.path)} ({result.size_bytes / 1024:.0f} KiB, {result.plots} plot(s), "
                  f"{result.seconds:.1f} s); open it in a browser (no server needed)", soft_wrap=True)
    return 0
