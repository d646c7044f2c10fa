"""What every ``python -m runtime.<tool>`` does with its standard output when its reader goes away.

Why: ``python -m runtime.bisect ... | head -2`` closed the pipe before the report was written, and the user got a
``BrokenPipeError`` traceback (UX audit s35) where the orchestrator's commands exit quietly. Python's own advice:
point stdout at ``/dev/null`` (so the interpreter's final flush cannot fail again) and exit with the shell's status
for SIGPIPE.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["CLOSED_STDOUT_EXIT", "run_main"]

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
