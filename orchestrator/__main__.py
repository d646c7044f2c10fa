"""``python -m orchestrator``: the PTO Forge command line.

A dependency missing from the interpreter (``python -m orchestrator`` with the system Python instead of the
project's ``.venv``) is one line saying which environment to use, not a ``ModuleNotFoundError`` traceback.
"""

import sys

PROJECT_PACKAGES = {"orchestrator", "runtime", "agents", "prompts", "skills"}


def missing_dependency_line(exc: ModuleNotFoundError) -> str | None:
    """The one line for a third-party package this interpreter lacks; None for the project's own modules (a
    bug: keep the traceback)."""
    name = (exc.name or "").split(".")[0]
    if not name or name in PROJECT_PACKAGES:
        return None
    if sys.prefix == sys.base_prefix:  # not a virtual environment: most likely the system Python
        return (f"error: the Python package '{name}' is not installed in {sys.executable}: PTO Forge runs in the "
                "project's environment; create it with `make venv`, then `source .venv/bin/activate` (or run "
                "`.venv/bin/python -m orchestrator ...`)")
    return (f"error: the Python package '{name}' is not installed in this environment ({sys.prefix}); `make venv` "
            "installs the project's dependencies (optional extras such as '.[torch]' or '.[local]': README)")


def _entry() -> int:
    try:
        from orchestrator.cli.main import main

        return main()
    except ModuleNotFoundError as exc:
        line = missing_dependency_line(exc)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(_entry())
