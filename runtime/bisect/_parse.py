"""Thread-safe ``ast.parse`` for bisection.

CPython 3.11 (through at least 3.11.7) can raise ``SystemError: AST constructor recursion depth mismatch``
when two threads build ASTs at once (CPython gh-106905). ``bisect()`` is called from thread pools
(tests and callers that fan out over cases), so every parse in this package goes through one lock. Other
threads of the same process (an import compiling a module, a caller's own ``ast.parse``) do not take that lock,
so a parse that still trips the interpreter's check is retried: ``ast.parse`` is pure and the error is the
interpreter's bookkeeping, not the source's.
"""

from __future__ import annotations

import ast
import threading

from runtime import pyast

_LOCK = threading.Lock()
_RETRIES = 5


def parse_source(source: str) -> ast.Module:
    """Parse ``source`` like ``ast.parse``, serialised across threads."""
    for attempt in range(_RETRIES):
        with _LOCK:
            try:
                return pyast.parse(source)
            except SystemError as exc:  # gh-106905 only; any other SystemError is re-raised
                if "recursion depth mismatch" not in str(exc) or attempt == _RETRIES - 1:
                    raise
    raise AssertionError("unreachable")
