"""`python -m orchestrator demo [op_dir]`: replay a workspace operator end to end in a scratch copy.

The copy (``build/demo/<op>``, made afresh each time from SPEC.md, golden.py and traces/) keeps the
workspace clean and makes two demos produce identical artifacts. Needs no model and no network: the
shipped trace answers for the agents, the verification tool runs live.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from rich.markup import escape

from orchestrator.cli._common import console, fail, print_result, warn_without_sandbox
from orchestrator.command import cli_command, shell_path

DEFAULT_OP = "workspace/sdpa"


def register(sub) -> None:
    p = sub.add_parser("demo", help="replay a workspace operator end to end, offline, in build/demo/<op>")
    p.add_argument("op_dir", nargs="?", default=DEFAULT_OP, help=f"operator directory (default {DEFAULT_OP})")
    p.add_argument("--out", default="build/demo", help="where the scratch copy goes (default build/demo)")
    p.add_argument("--require-sandbox", action="store_true",
                   help="refuse to run where the kernels would run without the OS sandbox (bubblewrap)")
    p.set_defaults(func=_demo)


def _demo(args: argparse.Namespace) -> int:
    from orchestrator import api
    from orchestrator.errors import ForgeError
    from orchestrator.ui.progress import Progress

    src = Path(args.op_dir)
    if not src.exists() and src.parent.name == "workspace" and (shipped := api.example_op_dir(src.name)) is not None:
        src = shipped  # run from anywhere (an installed wheel): the example that ships with the package
    if not (src / "SPEC.md").is_file() or not (src / api.DEFAULT_TRACE / "manifest.json").is_file():
        import difflib

        names = api.example_names()
        meant = difflib.get_close_matches(src.name, names, n=1, cutoff=0.6)  # UX audit s48: `demo workspace/slu`
        return fail(f"{src} is not a workspace operator with a shipped trace "
                    f"(needs SPEC.md, golden.py and {api.DEFAULT_TRACE}/)"
                    + (f"; the examples: {', '.join('workspace/' + n for n in names)}" if names else "")
                    + (f"; did you mean 'workspace/{meant[0]}'?" if meant else ""))
    dest = Path(args.out) / src.resolve().name
    if dest.exists():
        shutil.rmtree(dest)
    api.copy_op_inputs(src, dest)
    console.print(f"[bold]PTO Forge demo[/]: {src} -> {dest} (replaying {api.DEFAULT_TRACE}: recorded agent "
                  "answers and human decisions; the verification tool runs live)")
    progress = Progress(console)
    try:
        warn_without_sandbox(args.require_sandbox)
        try:
            result = api.replay(dest, dest / api.DEFAULT_TRACE, api.RunOptions(require_sandbox=args.require_sandbox),
                                hooks=api.Hooks(on_update=progress, on_start=progress.start,
                                                on_notice=progress.notice))
        finally:  # UX audit s48: the last step's spinner stayed live under the results, and on the shell's line
            progress.stop()
        code = print_result(result, str(dest))
        audit = api.audit(dest)
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    except KeyboardInterrupt:  # UX audit s35: a bare "interrupted", though the replay's run is resumable
        progress.stop()
        return fail(f"demo stopped (Ctrl-C); nothing is lost: continue it with `{cli_command()} resume "
                    f"{shell_path(dest)}`, or start the demo again", 130)
    console.print(f"audit: {'OK' if audit.ok else 'FAILED'} ({audit.checked} check(s))")
    impl = dest / f"{result.final.get('file') or ''}"
    console.print("\n[bold]results[/]")
    for label, path in (("kernel", impl), ("README", dest / "README.md"), ("MEMORY", dest / "MEMORY.md"),
                        ("design", dest / "DESIGN.md"), ("stage files", dest / "modules"),
                        ("verify reports + trace", dest / ".forge")):
        if path.exists():
            console.print(f"  {label:<24} {escape(str(path))}")
    console.print(f"  {'audit history':<24} git --git-dir {escape(str(dest / '.forge' / 'git'))} log")
    return code if audit.ok else 1
