"""Assemble the subcommands of ``python -m orchestrator``.

Each subcommand lives in its own module exposing ``register(subparsers)``; this file only wires them.
Exit codes: 0 success, 1 a failing result (invalid op dir, failing verdict, blocked run), 2 misuse,
130 Ctrl-C (128 + the signal for SIGTERM/SIGHUP, 141 a closed output pipe).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from typing import Any, NoReturn

from orchestrator.command import cli_command
from runtime.cli_io import HelpFormatter, closest_option

# subcommand name -> module under orchestrator.cli
SUBCOMMANDS: dict[str, str] = {
    "run": "run",
    "resume": "resume",
    "approve": "decide",
    "reject": "decide",
    "status": "status",
    "show": "show",
    "report": "report",
    "audit": "audit",
    "prune": "prune",
    "replay": "replay",
    "demo": "demo",
    "author": "author",
    "intake": "intake",
    "verify": "verify",
    "lint": "lint",
    "import": "gym_import",
    "campaign": "campaign",
}

EXAMPLES: dict[str, tuple[str, ...]] = {
    "run": ("run my_op/", "run my_op/ --approve stop", "run my_op/ --model local",
            "run my_op/ --agents scripted:script.yaml --approve auto"),
    "resume": ("resume my_op/", "resume my_op/ --base-url http://127.0.0.1:8000/v1 --model qwen"),
    "approve": ("approve my_op/", "approve my_op/ --gate design --note \"keep the tail rows in M1\"",
                "approve my_op/ --choice raise_budget --budget 5"),
    "reject": ("reject my_op/ --note \"split at probs: verify the softmax on its own\"",),
    "status": ("status my_op/", "status my_op/ --json"),
    "show": ("show my_op/ --gate", "show my_op/ --last", "show my_op/ 3e2ba2f6"),
    "report": ("report my_op/", "report my_op/ --out run.html"),
    "audit": ("audit my_op/",),
    "prune": ("prune my_op/ --keep 5",),
    "replay": ("replay my_op/ --fresh", "replay my_op/ --fresh --trace other/traces/default"),
    "demo": ("demo", "demo workspace/rms_norm"),
    "author": ("author workspace/my_op",),
    "intake": ("intake my_op/", "intake my_op/ --json"),
    "import": ("import ../gym/ops/rms_norm my_op/", "import level1/19_ReLU.py relu/"),
    "campaign": ("campaign run workspace/ --out runs/ -k 3", "campaign report runs/"),
    "campaign run": ("campaign run workspace/ --out runs/ -k 3", "campaign run suite.yaml --out runs/ --gates stop"),
    "campaign report": ("campaign report runs/", "campaign report runs/ --json"),
}
"""Command lines every subcommand's ``--help`` ends with (UX audit s46: 12 of the 15 said neither what the command
does beyond its one-line summary nor how it is typed; tests/orchestrator/test_ux_s46.py parses each one)."""

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse's parser, naming the closest choice for a mistyped one (UX audit s45: ``approve op --gate desing``
    and ``campaign rnu`` listed the choices and suggested none, unlike a mistyped command or option). Every
    subcommand's parser is one of these (argparse gives subparsers their parent's class).

    No abbreviated long options (``allow_abbrev=False``): argparse takes any unique prefix of an option, so a typo
    that happens to be one is silently the option - UX audit s46: ``approve op --not hi`` recorded a decision with
    the note "hi" (``--note``). A command that records a decision must do what was typed or refuse; the mistyped
    option now gets the unknown-option line with its suggestion."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        super().error(closest_option(self, message))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=cli_command(),
        description="PTO Forge: develop PyPTO operator kernels module by module, verified on a CPU emulator.",
        formatter_class=_HelpFormatter,
        epilog="a first session (`COMMAND --help` for each command, with examples):\n" + "\n".join(
            f"  {cli_command()} {line}" for line in (
                "demo                          # replay workspace/sdpa end to end, offline",
                "intake my_op/                 # check SPEC.md + golden.py (writes nothing)",
                "run my_op/ --approve stop     # develop it; stop at each gate",
                "show my_op/ --gate            # what the gate shows",
                "approve my_op/                # or: reject my_op/ --note \"...\"",
                "resume my_op/                 # continue (also after Ctrl-C or a crash)",
                "report my_op/                 # one HTML page of the run")),
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    # UX audit s44: `--version` (what a bug report asks for first) was "the following arguments are required"
    parser.add_argument("-V", "--version", action="version", version=f"PTO Forge {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    seen: set[str] = set()
    for module_name in SUBCOMMANDS.values():
        if module_name in seen:
            continue
        seen.add(module_name)
        module = importlib.import_module(f"orchestrator.cli.{module_name}")
        module.register(sub)
    _document(sub, "")
    return parser


class _HelpFormatter(HelpFormatter):
    """argparse's formatter, except that a line of the description or epilog indented by spaces (a command line
    of the examples) is kept as it is, not reflowed into the paragraph around it; in a pipe or a file ``--help``
    is not wrapped (UX audit s47: it was folded at 80 columns, unlike every other output of the commands)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        for line in text.splitlines() or [""]:
            out.append(indent + line if line.startswith(" ") or not line else super()._fill_text(line, width, indent))
        return "\n".join(out)


def _document(sub: argparse._SubParsersAction, prefix: str) -> None:
    """Give every subcommand (nested ones too) a description - its summary where it has none -, its examples
    and ``-v/--verbose`` (UX audit s46: ``status op -v`` was "unrecognized option '-v'", as the option was the
    top-level parser's only, to be typed before the command)."""
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, parser in sub.choices.items():
        if name in PASS_THROUGH:  # its own parser (runtime.verify / runtime.lint) documents it
            continue
        full = f"{prefix}{name}"
        parser.formatter_class = _HelpFormatter
        if not parser.description and helps.get(name):
            summary = str(helps[name])
            parser.description = summary[:1].upper() + summary[1:] + "."
        examples = EXAMPLES.get(full, ())
        if examples:
            parser.epilog = "examples:\n" + "\n".join(f"  {cli_command()} {e}" for e in examples)
        if not any("--verbose" in a.option_strings for a in parser._actions):
            parser.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                                help="debug logging (also before the command)")
        nested = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if nested is not None:
            _document(nested, f"{full} ")


def _version() -> str:
    """The installed distribution's version (pyproject.toml's when run from a checkout without an install)."""
    from importlib import metadata

    try:
        return metadata.version("pto-forge")
    except metadata.PackageNotFoundError:
        return "(not installed: run from a checkout)"


# subcommands that are the same command as a runtime CLI: their arguments pass through untouched
PASS_THROUGH: dict[str, str] = {"verify": "runtime.verify.__main__", "lint": "runtime.lint.__main__"}


def _unknown_command(argv: list[str]) -> str | None:
    """The message for a mistyped subcommand, naming the closest one (argparse only lists all 17).

    Checked before the parser is built: building it imports every subcommand module, seconds on a loaded machine
    for what is a typo.
    """
    word = next((a for a in argv if not a.startswith("-")), None)
    if word is None or word in SUBCOMMANDS:
        return None
    close = difflib.get_close_matches(word, list(SUBCOMMANDS), n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return (f"{cli_command()}: error: unknown command '{word}'; {hint}"
            f"commands: {', '.join(SUBCOMMANDS)} (--help for each)")


def _unknown_options(parser: argparse.ArgumentParser, args: argparse.Namespace, extras: list[str]) -> str:
    """The message for arguments the subcommand does not take, naming the closest option of that subcommand
    for a mistyped one (argparse prints the top-level usage and no suggestion). A nested command (``campaign
    run``) is followed down: ``campaign run ... --gatse auto`` named ``campaign`` and suggested nothing, as
    ``--gates`` is an option of ``campaign run`` (UX audit s44)."""
    names: list[str] = []
    chosen = parser
    while (sub := next((a for a in chosen._actions if isinstance(a, argparse._SubParsersAction)), None)) is not None:
        name = getattr(args, sub.dest, None)
        if name not in sub.choices:
            break
        names.append(name)
        chosen = sub.choices[name]
    command = " ".join(names)
    options = [o for a in chosen._actions for o in a.option_strings if o.startswith("--")]
    first = next((e for e in extras if e.startswith("-")), extras[0])
    name = first.split("=", 1)[0]
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6) if name.startswith("-") else []
    what = "option" if name.startswith("-") else "argument"
    hint = f"did you mean '{close[0]}'? " if close else ""
    return (f"{cli_command()} {command}: error: unrecognized {what} '{name}'; {hint}"
            f"see `{cli_command()} {command} --help`")


def main(argv: list[str] | None = None) -> int:
    """Run one command; a closed output pipe ends any of them quietly with 141 (``run`` also says so on stderr).

    Ctrl-C ends any command with one line and 130, also while the parser imports the subcommands (seconds on a
    loaded machine: it was a ``KeyboardInterrupt`` traceback, UX audit s40). Called as the process's command
    (``argv`` None: ``python -m orchestrator``, ``pto-forge``), a Ctrl-C after the command has finished - during
    the interpreter's teardown, ~2 s at load 10 - exits at once with the command's own code (it killed a
    delivered run's process with SIGINT).
    """
    try:
        try:
            code = _main(argv)
        except SystemExit:  # argparse's --help and usage errors (it ignores a failed write itself)
            sys.stdout.flush()
            raise
        sys.stdout.flush()  # what print() left in the buffer: a closed pipe shows here, not at interpreter exit
    except BrokenPipeError:  # the output pipe was closed (`status ... | head`): no traceback, exit 141
        from orchestrator.cli._common import detach_stdout

        code = detach_stdout()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    if argv is None:
        ignore_late_interrupts()
    return code


def ignore_late_interrupts() -> None:
    """From now on a Ctrl-C (SIGINT) is ignored: the command is over and its exit code decided, only the
    interpreter's teardown is left.

    Why ignored rather than handled: the interpreter resets every Python-level handler to the default as the first
    step of its teardown (strace: the default SIGINT action then killed the process, exit -2), and leaves only an
    ignored signal alone. The teardown runs no project code that could hang (atexit handlers have their own
    timeouts); SIGTERM and SIGQUIT (Ctrl-\\) still end it. Only for the process's own command: never call it where
    ``main`` runs inside another program.
    """
    import signal

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):  # not the main thread: nothing to guard
        pass


def _empty_path(args: argparse.Namespace) -> str | None:
    """One line when a path argument is the empty string, else None.

    Why (UX audit s48): ``run "$OP"`` with ``OP`` unset ran in the current directory (``Path("")`` is ``.``), and
    ``intake ""`` said ``intake failed: : 2 problems``."""
    for name in ("op_dir", "source", "dest", "suite", "trace", "out"):
        if getattr(args, name, None) == "":
            positional = name in ("op_dir", "source", "dest", "suite")
            return (f"{cli_command()} {getattr(args, 'command', '') or ''}: {name if positional else '--' + name} "
                    "is empty (an unset shell variable?)" + ("; give . for the current directory" if positional else ""))
    return None


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["help"] and len(argv) <= 2:  # UX audit s48: `help` / `help run` was "unknown command 'help'"
        argv = [*argv[1:], "--help"]
    if argv and argv[0] in PASS_THROUGH:
        module = importlib.import_module(PASS_THROUGH[argv[0]])
        # usage and messages name the command typed (UX audit s47: `verify --help` said `python -m runtime.verify`)
        return int(module.main(argv[1:], prog=f"{cli_command()} {argv[0]}") or 0)
    if argv in (["--version"], ["-V"]):  # what a bug report asks first: no parser (it imports every subcommand)
        print(f"PTO Forge {_version()}")
        raise SystemExit(0)  # as argparse's version action ends
    unknown = _unknown_command(argv)
    if unknown:
        print(unknown, file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        print(_unknown_options(parser, args, extras), file=sys.stderr)
        return EXIT_USAGE
    if (empty := _empty_path(args)) is not None:
        print(empty, file=sys.stderr)
        return EXIT_USAGE
    from orchestrator.cli._logging import configure_logging

    configure_logging(verbose=bool(args.verbose))
    return int(args.func(args) or 0)  # Ctrl-C: main() says "interrupted" and returns 130


if __name__ == "__main__":
    sys.exit(main())
