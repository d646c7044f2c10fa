"""How the user invoked the CLI, for the hints messages give (a leaf: imports nothing of the project).

Why: an installed wheel is run as ``pto-forge``; hints that say ``python -m orchestrator resume ...`` name a
command such a user never typed. Both work; a message names the one in use.
"""

from __future__ import annotations

import os
import shlex
import sys

MODULE_COMMAND = "python -m orchestrator"
SCRIPT_COMMAND = "pto-forge"


def cli_command() -> str:
    """``pto-forge`` when this process was started as the console script, else ``python -m orchestrator``."""
    return SCRIPT_COMMAND if os.path.basename(sys.argv[0] if sys.argv else "") == SCRIPT_COMMAND else MODULE_COMMAND


def shell_path(path: object) -> str:
    """``path`` as a suggested command must spell it to be pasted into a shell (UX audit s33: `show my ops/silu
    --gate` failed with "unrecognized argument" for an op dir with a space in its name)."""
    return shlex.quote(str(path))
