"""The verdict of one verification: the one definition (``runtime.verify`` reports it, the orchestrator acts on it).

Why a leaf module: the orchestrator's store, views and nodes compare verdicts without importing the verifier
(its package pulls in the sandbox and the emulator). A ``StrEnum``, so a verdict compares equal to and
serialises as its name; state and trace events keep the plain name (``verdict.value``).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["AGENT_ERROR", "Verdict"]


class Verdict(StrEnum):
    PASS = "PASS"
    FAIL_LINT = "FAIL_LINT"
    FAIL_RUNTIME = "FAIL_RUNTIME"
    FAIL_NUMERIC = "FAIL_NUMERIC"
    FAIL_CHEAT = "FAIL_CHEAT"
    ERROR = "ERROR"


AGENT_ERROR = "AGENT_ERROR"
"""An attempt's outcome that is NOT a verdict: the implementer gave no usable file, so nothing was verified.
The orchestrator records it in a module's state and attempt log (and routes back to implement); the verifier
never reports it."""
