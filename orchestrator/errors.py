"""Exceptions of the orchestrator (a leaf: imports nothing of the project, so every layer can raise them).

:class:`ForgeError` is a user mistake or an unusable situation: one clear message, never a traceback.
:class:`RunStopped` is a failure that is not the candidate's: it stops a run, resumable once fixed.
"""

from __future__ import annotations

from pathlib import Path


class ForgeError(RuntimeError):
    """A user mistake or an unusable situation (missing dir, invalid SPEC, run in progress, nothing to resume)."""

    def __init__(self, message: str, *, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class RunStopped(ForgeError):
    """A failure that is not the candidate's stops the run at once (ARCHITECTURE §0.5).

    Raised by a node before it changes anything, so the checkpoint stays before that node and ``resume``
    runs it again once the cause is fixed. ``cause`` is ``golden`` | ``op_dir`` | ``machine`` | ``tool``.
    """

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause


def no_op_dir(op_dir: object) -> str:
    """The message for an operator directory argument that is not one (UX audit s33: `run /etc/passwd` said "not
    found" of a file that exists)."""
    path = Path(str(op_dir))
    # imported here: runtime.opdir loads numpy, and this module loads with every --help
    from runtime.opdir import closest_dir_hint, enclosing_op_dir_hint

    if path.is_file():
        return (f"{op_dir} is a file, not an operator directory (give the directory holding SPEC.md and golden.py)"
                + enclosing_op_dir_hint(path))
    return f"operator directory not found: {op_dir}" + closest_dir_hint(path)

