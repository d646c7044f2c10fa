"""One line, not a traceback, for a third-party package the interpreter lacks.

Why: ``python3 -m runtime.emulator script.py`` with the system Python (docs/gym.md tells gym users to type it in place
of ``python``) printed 14-21 lines of ``ModuleNotFoundError: No module named 'ml_dtypes'`` (UX audit s35), where
``python3 -m orchestrator`` said which environment to use. Standard library only: it runs before any dependency is
known to be there.
"""

from __future__ import annotations

import sys
from types import TracebackType

__all__ = ["PROJECT_PACKAGES", "install_hook", "missing_dependency_line"]

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


def install_hook() -> None:
    """Print :func:`missing_dependency_line` instead of the traceback of an uncaught missing package (exit status 1
    as before); every other uncaught exception goes to the hook that was there."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        line = missing_dependency_line(exc)
        if line is None:
            previous(kind, exc, tb)
        else:
            print(line, file=sys.stderr)

    sys.excepthook = hook
