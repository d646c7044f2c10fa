"""``python -m orchestrator``: the PTO Forge command line.

A dependency missing from the interpreter (``python -m orchestrator`` with the system Python instead of the
project's ``.venv``) is one line saying which environment to use, not a ``ModuleNotFoundError`` traceback; so is
a Ctrl-C before the command line is parsed (exit 130).
"""

import sys

from runtime.missing_deps import missing_dependency_line  # standard library only


def _entry() -> int:
    try:
        from orchestrator.cli.main import main

        return main()
    except KeyboardInterrupt:  # Ctrl-C while the CLI itself is imported: one line, not a traceback
        print("interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as exc:
        line = missing_dependency_line(exc)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(_entry())
