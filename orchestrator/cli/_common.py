"""Helpers shared by the subcommand modules."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.markup import escape

from orchestrator.command import cli_command, shell_path
from runtime.cli_io import PIPED_WIDTH

EXIT_PIPE = 141
"""128 + SIGPIPE: the exit code of every command whose output pipe was closed (``... | head``)."""


def detach_stdout() -> int:
    """The output pipe was closed: point stdout at /dev/null, so that no later write (nor the interpreter's
    last flush) fails again; returns :data:`EXIT_PIPE`."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real stdout (embedded, captured): nothing to redirect
        pass
    return EXIT_PIPE




_TRAILING = re.compile(r"[ \t]+\n")


class _Console(Console):
    """rich's Console, with two differences.

    A closed stdout (``status ... | head``) raises BrokenPipeError instead of rich's SystemExit(1): :func:`drive`
    ends a run cleanly and says so on stderr, and :func:`orchestrator.cli.main.main` ends every other command
    quietly with 141.

    Output that is not a terminal is not wrapped (UX audit s46). rich lays out for the width of whichever of
    stdin/stdout/stderr is a terminal, else 80 columns: ``status op | less`` got the summary table folded and
    lines broken mid-path at the terminal's width, ``status op > f`` from cron at 80, and a ``grep`` of a module
    found half of its row. Piped, a console is :data:`PIPED_WIDTH` wide and prints plain text unwrapped (tables
    are as wide as their content, panels fit theirs: :class:`orchestrator.ui.screens.FitPanel`). ``COLUMNS`` in
    the environment still sets the width, a terminal or not.
    """

    def _piped(self) -> bool:
        columns = self._environ.get("COLUMNS")
        return self._width is None and not (columns and columns.isdigit()) and not self.is_terminal

    @property
    def size(self) -> ConsoleDimensions:
        size = Console.size.fget(self)  # type: ignore[attr-defined]
        return ConsoleDimensions(PIPED_WIDTH, size.height) if self._piped() else size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    def print(self, *objects: Any, soft_wrap: bool | None = None, **kwargs: Any) -> None:  # type: ignore[override]
        if soft_wrap is None and self._piped():
            soft_wrap = True
        super().print(*objects, soft_wrap=soft_wrap, **kwargs)

    def _render_buffer(self, buffer: Any) -> str:
        """Piped, no line ends in spaces: a table pads every cell to its column's width, and a short row of the
        gate screen's facts ended in ~200 spaces in ``show op --gate > f`` (UX audit s48)."""
        text = super()._render_buffer(buffer)
        return _TRAILING.sub("\n", text) if self._piped() else text

    def on_broken_pipe(self) -> None:
        if self.stderr:  # as rich does (stderr gone: the command cannot say anything more)
            Console.on_broken_pipe(self)
            return
        detach_stdout()
        raise BrokenPipeError("stdout closed")


console = _Console()
err_console = _Console(stderr=True)
# a line that names a command is printed with soft_wrap=True (``hint``): rich then never breaks the command at the
# terminal width (the terminal wraps it, and it still copies as one command); panels and tables keep wrapping on a
# terminal, and nothing is wrapped in a pipe or a file (_Console)


def fail(message: str, code: int = 1, *, json_out: bool = False) -> int:
    """Print one clear error line and return the exit code (never a traceback for user mistakes).

    ``json_out`` (a command's ``--json``): also print ``{"error": message, "exit_code": code}`` on stdout, so a
    script reading the command's JSON gets JSON on a failure too (it got an empty stdout and a parse error:
    ``status missing_dir --json | jq``, UX audit s40); the line on stderr stays for a human."""
    err_console.print(f"[red]error:[/] {escape(message)}", soft_wrap=True, highlight=False)
    sys.stderr.flush()
    if json_out:
        import json

        print(json.dumps({"error": message, "exit_code": code}))
    return code


def bad_base_url(url: str, name: str = "--base-url") -> str | None:
    """Why ``--base-url`` (or ``name``: ``OPENAI_BASE_URL``) is not an endpoint URL (one line), or None: checked
    before anything runs, so a typo is not found after the model call's retries."""
    from urllib.parse import urlsplit

    if url == "local://llama.cpp":  # agents.llm's name of the embedded local model's endpoint
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        return f"{name} {url!r} is not a URL ({exc}); give an endpoint such as http://127.0.0.1:8000/v1"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (f"{name} {url!r} is not an http(s) URL; give an OpenAI-compatible endpoint such as "
                "http://127.0.0.1:8000/v1")
    return None


def bad_endpoint(base_url: str | None) -> str | None:
    """:func:`bad_base_url` for ``--base-url`` when given, else for ``OPENAI_BASE_URL`` from the environment (it
    was only found after 15 s of retries: ``no answer from localhost:8000 after 4 retries``)."""
    import os

    if base_url is not None:
        return bad_base_url(base_url)
    env = os.environ.get("OPENAI_BASE_URL")
    return bad_base_url(env, "OPENAI_BASE_URL") if env else None


def given(**options: object) -> dict[str, object]:
    """The run options a user actually gave (None = not given), so a replay keeps its recording's for the rest."""
    return {k: v for k, v in options.items() if v is not None}


def warn_without_sandbox(required: bool = False) -> None:
    """Say so (stderr, one line) when model-written kernels will run without the OS sandbox here; with
    ``--require-sandbox`` the API refuses instead, with its own message."""
    from orchestrator.api import sandbox_notice

    notice = sandbox_notice()
    if notice and not required:
        err_console.print(f"[yellow]warning:[/] {escape(notice)}", soft_wrap=True, highlight=False)


def print_result(result, op_dir: str) -> int:
    """Summary table plus what to do next; exit 0 delivered/waiting, 1 aborted/stopped/interrupted.

    The run's message is printed soft-wrapped, like every hint: it can name a command (``still waiting at gate
    ... record a decision with `python -m orchestrator approve sq1` ...`` was broken after ``python -m`` in a
    piped resume, UX audit s44)."""
    from orchestrator.ui.progress import summary_table

    console.print(summary_table(result))
    for divergence in getattr(result, "divergences", []):
        console.print(f"[red]divergence:[/] {escape(divergence)}")
    if getattr(result, "divergences", []):
        console.print("[red]the replay diverged from its recording[/] (the live verdicts above decided the run)")
        return 1
    if result.status == "waiting" and result.gate is not None:
        g = result.gate
        if result.message:
            console.print(escape(result.message), soft_wrap=True)  # it may name a command: never broken
        label = f" #{g.seq}" if g.seq else ""
        console.print(f"[yellow]waiting at gate '{g.gate}'{label}[/]: {escape(g.title)}")
        console.print(f"  see what it shows with `{cli_command()} show {shell_path(op_dir)} --gate`", soft_wrap=True)
        if g.gate == "blocked":
            console.print(f"  decide with `{cli_command()} approve {shell_path(op_dir)} --choice "
                          "hint|raise_budget|rollback|abort [--note ...]`, then `resume`", soft_wrap=True)
        else:
            console.print(f"  decide with `{cli_command()} approve {shell_path(op_dir)}` or "
                          f"`{cli_command()} reject {shell_path(op_dir)} --note \"...\"`, then "
                          f"`{cli_command()} resume {shell_path(op_dir)}`", soft_wrap=True)
        return 0
    if result.status == "delivered":
        console.print(f"[green]delivered[/] {result.final.get('file')} + README.md "
                      f"(final report {str(result.final.get('report_hash'))[:12]})")
        for line in _toolchain_lines(result.final):
            console.print(line)
        if result.message:
            console.print(escape(result.message), soft_wrap=True)
        return 0
    if result.status == "stopped":
        console.print(f"[red]stopped[/]: {escape(result.cause)}")
        console.print(f"  this is not the kernel's failure, so no agent was asked to fix it; fix the cause, then "
                      f"`{cli_command()} resume {shell_path(op_dir)}`", soft_wrap=True)
        if result.message:
            console.print(escape(result.message), soft_wrap=True)
        return 1
    cause = getattr(result, "cause", "")
    console.print(f"[red]{result.status}[/]" + (f": {escape(cause)}" if cause else "")
                  + (f" {escape(result.message)}" if result.message else ""), soft_wrap=bool(result.message))
    return 1


def _toolchain_lines(final: dict) -> list[str]:
    """The real compiler's answer and the perf stage's outcome, when the run has them (docs/toolchain.md)."""
    out = []
    opinion = final.get("toolchain") or {}
    perf = final.get("perf") or {}
    if opinion.get("summary"):
        on = " (on the first verified kernel)" if perf.get("delivered") else ""
        out.append(escape(f"second opinion{on}: {opinion['summary']}"))
    if opinion.get("fidelity_finding"):
        out.append(f"[red]FIDELITY FINDING[/]: {escape(opinion['fidelity_finding'])} "
                   f"(probe candidate {escape(str(opinion.get('probe_candidate')))})")
    if perf.get("baseline") is not None and perf.get("delivered_score") is not None:
        unit = "cycles" if perf.get("scorer") == "cost_model" else "eu (emulator estimate)"
        which = "the verified kernel" if not perf.get("delivered") else f"variant v{perf['delivered']}"
        out.append(escape(f"performance stage: delivered {which}: {perf.get('delivered_score'):g} vs "
                          f"{perf.get('baseline'):g} {unit} for the first verified kernel (both summed over every case shape; "
                          "the second opinion above gives the first shape's)"))
    return out


class _Terminated(KeyboardInterrupt):
    """SIGTERM/SIGHUP, handled like Ctrl-C: unwind, clean up, leave the run resumable."""


def _on_signal(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    raise _Terminated(signum)


def golden_process_early():  # noqa: ANN201 - a context manager (runtime.opdir.golden_server's)
    """The run's golden process (``runtime.opdir.golden_server``), started before the command imports
    ``orchestrator.api``.

    Why: intake's golden check waits for that process's interpreter and numpy (0.2-0.4 s idle, ~1 s at load 5);
    LangGraph and the rest of the orchestrator take longer than that to import, so booting it first hides the
    wait in a CLI run. ``api.run``/``replay`` then use this one (nested blocks share the outer server).
    """
    from runtime.opdir import golden_server

    return golden_server(start=True)


def _has_run(op_dir: str) -> bool:
    """Whether ``op_dir`` holds a run ``resume`` can continue (any run: the one just stopped is the latest)."""
    from orchestrator.errors import ForgeError
    from orchestrator.store.runs import latest_run

    try:
        latest_run(Path(op_dir).resolve())
    except (ForgeError, OSError):
        return False
    return True


def drive(op_dir: str, start, progress=None) -> int:
    """Run ``start()`` (an api call returning a RunResult) and print its result; the one error policy of
    run/replay/resume: a user mistake is one line, an infrastructure failure says how to continue, and
    Ctrl-C, SIGTERM or a closed output pipe end the run cleanly (no child process or temp dir left) and
    resumably."""
    import logging
    import signal

    from agents.llm import LLMError
    from agents.trace import TraceError
    from orchestrator.errors import ForgeError

    saved = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            saved[sig] = signal.signal(sig, _on_signal)
        except (ValueError, OSError):  # not the main thread
            pass
    try:
        result = start()
    except ForgeError as exc:
        return fail(exc.message, exc.code)
    except (KeyboardInterrupt, BrokenPipeError) as exc:
        if progress is not None:
            progress.stop()
        if isinstance(exc, BrokenPipeError):  # stdout is gone (`run ... | head`): say it on stderr only
            why, code = "the output pipe was closed (SIGPIPE)", detach_stdout()
        elif isinstance(exc, _Terminated):
            why, code = f"signal {signal.Signals(exc.args[0]).name}", 128 + int(exc.args[0])
        else:
            why, code = "Ctrl-C", 130
        if not _has_run(op_dir):  # stopped during the intake check, before the run existed
            return fail(f"stopped ({why}) before the run started; nothing was written: start it again with "
                        f"`{cli_command()} run {shell_path(op_dir)}`", code)
        return fail(f"run stopped ({why}); nothing is lost: continue it with "
                    f"`{cli_command()} resume {shell_path(op_dir)}`", code)
    except LLMError as exc:  # the endpoint failed for good: say what happened, not "internal error"
        if getattr(exc, "status", None) in (401, 403):  # the key, not the endpoint
            return fail(f"model call failed: {exc}; the endpoint refused the API key: set OPENAI_API_KEY to a valid "
                        f"key for it, then continue with `{cli_command()} resume {shell_path(op_dir)}` (nothing is lost)")
        where = getattr(exc, "endpoint", None) or "the endpoint"
        if getattr(exc, "status", None) == 404 and "model" in str(exc).replace(where, "").lower():  # UX audit s44:
            # a model name the server lacks was told to "fix the endpoint"; the name is the fix
            return fail(f"model call failed: {exc}; the endpoint does not serve that model: continue with one it "
                        f"serves, `{cli_command()} resume {shell_path(op_dir)} --model M` (`curl {where}/models` lists "
                        "them; nothing is lost)")
        return fail(f"model call failed: {exc}; nothing is lost: {_llm_advice(exc)}, then continue with "
                    f"`{cli_command()} resume {shell_path(op_dir)}` (or continue on another one: `{cli_command()} resume "
                    f"{shell_path(op_dir)} --base-url URL [--model M]`)")
    except TraceError as exc:  # UX audit s44: a blob of the replayed recording deleted was "internal error"
        again = (f"`{cli_command()} resume {shell_path(op_dir)}`" if _has_run(op_dir)
                 else f"`{cli_command()} run {shell_path(op_dir)}`")
        return fail(f"a recorded trace is damaged: {exc}; restore an intact copy of it (a shipped trace: `git checkout "
                    f"-- traces/`), then continue with {again} (nothing is lost)")
    except PermissionError as exc:
        return fail(f"cannot write in {op_dir}: {exc.strerror or exc} ({exc.filename}); a run needs a writable "
                    "operator directory")
    except Exception as exc:  # infrastructure failure: the checkpoint keeps the run resumable
        logging.getLogger(__name__).debug("run failed", exc_info=True)
        started = _has_run(op_dir)
        again = (f"continue it with `{cli_command()} resume {shell_path(op_dir)}`" if started else
                 f"no run was started: start it again with `{cli_command()} run {shell_path(op_dir)}`")
        if (full := disk_full(exc)) is not None:
            return fail(f"the disk is full ({full}): free space where {op_dir} is (`df -h {shell_path(op_dir)}`), "
                        f"then {again}; nothing written before is lost")
        if started:
            return fail(f"internal error: {type(exc).__name__}: {exc} (rerun with -v for details; the run can be "
                        f"continued with `{cli_command()} resume {shell_path(op_dir)}`)")
        return fail(f"internal error: {type(exc).__name__}: {exc} (rerun with -v for details; {again})")
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        if progress is not None:
            progress.stop()
    try:
        return print_result(result, op_dir)
    except BrokenPipeError:
        return detach_stdout()


def disk_full(exc: BaseException) -> str | None:
    """What said the disk is full, when ``exc`` (or what caused it) is a full file system, else None.

    Why: a run on a full disk ended in ``internal error: OperationalError: database or disk is full`` (the
    checkpoint's SQLite) or an ``OSError`` [Errno 28] - an infrastructure failure the user fixes by freeing space,
    not a bug to rerun with -v (UX audit s40, a 200 kB tmpfs)."""
    import errno
    import sqlite3

    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno in (errno.ENOSPC, errno.EDQUOT):
            return f"{cur.strerror or cur}" + (f": {cur.filename}" if cur.filename else "")
        if isinstance(cur, sqlite3.OperationalError) and "disk is full" in str(cur):
            return f"the run's checkpoint database: {cur}"
        cur = cur.__cause__ or cur.__context__
    return None


def _llm_advice(exc: Exception) -> str:
    """What to change after an endpoint failed for good. UX audit s33: a prompt over the model's context window
    (HTTP 400 "exceeds the available context size") and a slow local server (every request timed out at 120 s) were
    both told to "fix the endpoint" - the endpoint was fine both times; forge.toml was the fix."""
    text = str(exc).lower()
    if getattr(exc, "status", None) == 400 and "context" in text:
        return ("the prompt is larger than the model's context window: declare it in forge.toml (`[context]` "
                "`\"<model>\" = <tokens>`, docs/agents.md) so prompts are fitted to it")
    if getattr(exc, "status", None) == 404:  # no such path: a model name the server lacks is handled by drive()
        return ("the endpoint has no chat-completions API at that URL: an OpenAI-compatible base URL usually ends "
                "in /v1 (`--base-url http://HOST:PORT/v1`)")
    if getattr(exc, "status", None) is None and ("timed out" in text or "timeout" in text):
        return ("every try timed out: a slow endpoint needs a larger `[llm] timeout_s` and a smaller `max_tokens` "
                "in forge.toml (docs/agents.md)")
    return "fix the endpoint"
