"""One line, not a traceback, for a third-party package the interpreter lacks - and for a Ctrl-C that reaches the top.

Why: ``python3 -m runtime.emulator script.py`` with the system Python (docs/gym.md tells gym users to type it in place
of ``python``) printed 14-21 lines of ``ModuleNotFoundError: No module named 'ml_dtypes'`` (UX audit s35), where
``python3 -m orchestrator`` said which environment to use. Standard library only: it runs before any dependency is
known to be there.

Ctrl-C (s43): each tool's ``main`` turns an interrupt into one line and exit 130, but ``python -m runtime.<tool>``
imports the tool's package (numpy, the emulator, the verifier: 0.6 s on a quiet machine, seconds on a busy one) before
its ``main`` runs, and an interrupt in that time was a traceback ending in ``KeyboardInterrupt`` with exit status 1 or
death by SIGINT (``make test`` on a loaded machine: ``tests/verify/test_cli_interrupt.py`` interrupted the verifier
while it was still importing). The hook below says ``<tool>: interrupted`` and exits 130 there too.
"""

from __future__ import annotations

import atexit
import os
import sys
from types import TracebackType

__all__ = ["PROJECT_PACKAGES", "install_hook", "missing_dependency_line", "tool_name"]

PROJECT_PACKAGES = {"orchestrator", "runtime", "agents", "prompts", "skills"}


def missing_dependency_line(exc: BaseException) -> str | None:
    """The one line for a third-party package this interpreter lacks; None for anything else, the project's own
    modules included (a bug: keep the traceback)."""
    if not isinstance(exc, ModuleNotFoundError):
        return None
    name = (exc.name or "").split(".")[0]
    if not name or name in PROJECT_PACKAGES:
        return None
    if sys.prefix == sys.base_prefix:  # not a virtual environment: most likely the system Python
        return (f"error: the Python package '{name}' is not installed in {sys.executable}: PTO Forge runs in the "
                "project's environment; create it with `make venv`, then `source .venv/bin/activate` (or run "
                "`.venv/bin/python -m ...`)")
    return (f"error: the Python package '{name}' is not installed in this environment ({sys.prefix}); `make venv` "
            "installs the project's dependencies (optional extras such as '.[torch]' or '.[local]': README)")


def tool_name() -> str:
    """``runtime.verify`` for ``python -m runtime.verify ...`` (the interpreter's own command line), else ``runtime``."""
    argv = list(getattr(sys, "orig_argv", []))
    if "-m" in argv[:-1]:
        return argv[argv.index("-m") + 1].removesuffix(".__main__")
    return "runtime"


def install_hook() -> None:
    """Print :func:`missing_dependency_line` instead of the traceback of an uncaught missing package (exit status 1
    as before), and one line with exit status 130 for an uncaught Ctrl-C (the module doc); every other uncaught
    exception goes to the hook that was there."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if isinstance(exc, KeyboardInterrupt):
            print(f"{tool_name()}: interrupted", file=sys.stderr)
            # the interpreter would now end by SIGINT; exit 130 as the tools' own handlers do, after what a normal
            # exit runs (atexit: temporary directories' finalizers, logging's flush)
            try:
                atexit._run_exitfuncs()
            finally:
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except (OSError, ValueError):
                        pass
                os._exit(130)
        line = missing_dependency_line(exc)
        if line is None:
            previous(kind, exc, tb)
        else:
            print(line, file=sys.stderr)

    sys.excepthook = hook
