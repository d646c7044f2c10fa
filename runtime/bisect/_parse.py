"""Thread-safe ``ast.parse`` for bisection.

CPython 3.11 (through at least 3.11.7) can raise ``SystemError: AST constructor recursion depth mismatch``
when two threads call ``ast.parse`` at once (CPython gh-106905). ``bisect()`` is called from thread pools
(tests and callers that fan out over cases), so every parse in this package goes through one lock.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse_source(source: str) -> ast.Module:
    """Parse ``source`` like ``ast.parse``, serialised across threads."""
    with _LOCK:
        return ast.parse(source)
