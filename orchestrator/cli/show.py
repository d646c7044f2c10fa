"""`python -m orchestrator show op_dir [REPORT_HASH | --last | --gate]`: render a stored verify report, or
the screen of the gate the run waits at."""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator.cli._common import console, fail


def register(sub) -> None:
    p = sub.add_parser("show", help="render a stored verify report (hash prefix or --last) or the waiting gate")
    p.add_argument("op_dir", help="operator directory")
    p.add_argument("report", nargs="?", default=None, help="report hash or a unique prefix of it")
    p.add_argument("--last", action="store_true", help="the newest report of the op dir (the default)")
    p.add_argument("--gate", action="store_true", help="the screen of the gate the latest run waits at")
    p.add_argument("--json", action="store_true", help="print the report JSON (with --gate: the gate's view) instead; an error is {\"error\": ...} too")
    p.set_defaults(func=_show)


def _show(args: argparse.Namespace) -> int:
    from orchestrator.errors import ForgeError

    chosen = [what for what, given in (("a report hash", args.report is not None), ("--last", args.last),
                                       ("--gate", args.gate)) if given]
    if len(chosen) > 1:  # UX audit s46: `show op --last --gate` showed the gate and ignored --last without a word
        return fail(f"show one thing: {' and '.join(chosen)} were both given (a report: its hash or --last; the "
                    "waiting gate: --gate)", 2, json_out=args.json)
    try:
        if args.gate:
            from orchestrator.ui.screens import print_gate
            from orchestrator.ui.views import gate_view_for

            view = gate_view_for(args.op_dir)
            if args.json:
                print(view.model_dump_json(indent=2))
            else:
                print_gate(console, view)
            return 0
        from orchestrator.store.reports import find_report, parse_report

        path = find_report(Path(args.op_dir), args.report)
        report = parse_report(path)
    except ForgeError as exc:
        return fail(exc.message, exc.code, json_out=args.json)
    except BrokenPipeError:  # the gate screen's output pipe closed (`show --gate | head`): main ends quietly
        raise
    except (OSError, ValueError) as exc:
        return fail(f"cannot read the report: {exc}", json_out=args.json)
    if args.json:
        print(report.to_json())
        return 0
    from orchestrator.ui.screens import report_renderable

    console.print(f"[dim]{path}[/]", highlight=False, soft_wrap=True)
    console.print(report_renderable(report))
    return 0
