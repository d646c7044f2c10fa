"""What every ``python -m runtime.<tool>`` does with its standard output when its reader goes away.

Why: ``python -m runtime.bisect ... | head -2`` closed the pipe before the report was written, and the user got a
``BrokenPipeError`` traceback (UX audit s35) where the orchestrator's commands exit quietly. Python's own advice:
point stdout at ``/dev/null`` (so the interpreter's final flush cannot fail again) and exit with the shell's status
for SIGPIPE.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["CLOSED_STDOUT_EXIT", "PIPED_WIDTH", "HelpFormatter", "Parser", "kernel_path_problem", "output_console",
           "piped", "run_main"]

CLOSED_STDOUT_EXIT = 141
"""128 + SIGPIPE: what a shell reports for a writer whose reader went away."""


def run_main(main: Callable[[], int]) -> int:
    """``main()``'s exit status; :data:`CLOSED_STDOUT_EXIT`, quietly, when its standard output was closed."""
    try:
        return main()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return CLOSED_STDOUT_EXIT


PIPED_WIDTH = 1000
"""The width output is laid out for when it goes to a pipe or a file, as the orchestrator's commands do (docs/cli.md,
Terminal): wide enough that a table row, a case name or a usage line stays one line for ``grep`` or ``less -S``."""


def piped(stream: Any = None) -> bool:
    """True when ``stream`` (stdout) is not a terminal and ``COLUMNS`` does not set a width: lay output out unwrapped.

    Why: rich and argparse lay out for 80 columns when stdout is a pipe or a file, so ``runtime.verify ... > f``
    broke case names mid-word (``B16_D32-fp32-s0-no`` / ``rmal``) and ``verify --help | less`` folded every option
    (UX audit s47)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return False
    stream = sys.stdout if stream is None else stream
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):
        return True


def output_console() -> Any:
    """A rich Console for stdout: the terminal's width on a terminal, :data:`PIPED_WIDTH` and no colours piped."""
    from rich.console import Console

    return Console(width=PIPED_WIDTH) if piped() else Console()


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, not wrapping ``--help`` in a pipe or a file (:func:`piped`); a terminal's width and
    ``COLUMNS`` are kept as argparse uses them."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None and piped():
            width = PIPED_WIDTH
        super().__init__(prog, indent_increment, max_help_position, width)


def closest_option(parser: argparse.ArgumentParser, message: str) -> str:
    """``message`` (an argparse error) with ``; did you mean '--json'?`` for a mistyped option or choice."""
    import re

    found = re.search(r"unrecognized arguments: (\S+)", message)
    if found and found.group(1).startswith("-"):
        word = found.group(1).split("=", 1)[0]
        options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    else:
        found = re.search(r"invalid choice: '([^']*)' \(choose from ([^)]*)\)", message)
        if not found:
            return message
        word = found.group(1)
        options = [c.strip().strip("'") for c in found.group(2).split(",")]
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f"{message}; did you mean '{close[0]}'?" if close else message


class Parser(argparse.ArgumentParser):
    """The parser of a ``python -m runtime.<tool>`` command: one error line naming the closest option or choice,
    exit 2; no abbreviated options (argparse would take ``--req`` for ``--require-sandbox``: a typo must not be
    another option, as the orchestrator's commands refuse it since s46); ``--help`` unwrapped in a pipe.

    ``name`` (default: the prog) starts the error line; ``usage_on_error`` also prints the usage first."""

    def __init__(self, *args: Any, name: str | None = None, usage_on_error: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.name = name or self.prog
        self.usage_on_error = usage_on_error

    def error(self, message: str) -> NoReturn:
        if self.usage_on_error:
            self.print_usage(sys.stderr)
        print(f"{self.name}: {closest_option(self, message)} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def _kernel_files(folder: Path) -> list[Path]:
    """The kernel files a user may mean in ``folder``: its ``.py`` files and those of its ``modules/``, sorted."""
    found: list[Path] = []
    for where in (folder, folder / "modules"):
        try:
            found += sorted(p for p in where.iterdir() if p.suffix == ".py" and p.is_file())
        except OSError:
            continue
    return found


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except (OSError, ValueError):
        return False
    return True


def _closest_kernel(target: str, op_dir: Path) -> str:
    """``; did you mean 'silu/modules/silu_module1_impl.py'?`` for a mistyped kernel file: the closest ``.py`` name
    next to where it was looked for (the folder it names, in the op dir or the current one), else ""."""
    given = Path(target)
    names: dict[str, Path] = {}
    for place in (op_dir / given.parent, given.parent, op_dir):
        for path in _kernel_files(place):
            if _inside(path, op_dir):  # a file next to the op dir would be refused as outside it
                names.setdefault(path.name, path)
    close = difflib.get_close_matches(given.name, list(names), n=1, cutoff=0.6)
    return f"; did you mean '{os.path.normpath(names[close[0]])}'?" if close else ""


def kernel_path_problem(op_dir: str, target: str, *, what: str = "target") -> str | None:
    """One sentence for an op dir or kernel file that is not there (with the closest name), else None.

    ``target`` is taken as the tools take it: as given when it is a file, else relative to ``op_dir``. Why: ``python
    -m runtime.verify slu k.py`` said only "does not exist", ``runtime.bisect nodir k.py`` named the folder twice
    ("invalid op directory nodir: nodir: does not exist") and ``runtime.bisect silu silu`` called a directory "stage
    file not found" (UX audit s48/s49); the orchestrator's commands name the closest folder since s44."""
    from runtime.opdir import closest_dir_hint, enclosing_op_dir_hint

    op = Path(op_dir)
    if op.is_file():
        return f"operator directory {op_dir} is a file, not a directory{enclosing_op_dir_hint(op)}"
    if not op.is_dir():
        return f"operator directory {op_dir} does not exist{closest_dir_hint(op)}"
    given = Path(target)
    path = given if given.is_file() or given.is_absolute() or not (op / given).exists() else op / given
    if path.is_dir():
        # the delivered <op>_impl.py when the folder has one, else its last (longest) stage file
        kernels = [p for p in _kernel_files(path) if p.name.endswith("_impl.py") and _inside(p, op)]
        finals = [p for p in kernels if p.parent == path]
        hint = f"; did you mean '{(finals or kernels)[-1 if not finals else 0]}'?" if kernels else ""
        return (f"{what} {target} is a directory: give the kernel's .py file (a stage file or <op>_impl.py inside "
                f"{op_dir}){hint}")
    if not path.exists():
        return f"{what} {target} does not exist (give a path inside {op_dir}){_closest_kernel(target, op)}"
    return None
