"""User-facing errors of the orchestrator: one clear message, never a traceback."""

from __future__ import annotations


class ForgeError(RuntimeError):
    """A user mistake or an unusable situation (missing dir, invalid SPEC, run in progress, nothing to resume)."""

    def __init__(self, message: str, *, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
