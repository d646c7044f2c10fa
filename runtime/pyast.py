"""``ast.parse`` and ``compile`` of a syntax tree, one thread at a time.

Why: CPython 3.11 keeps the recursion depth of its syntax-tree conversion (C tree <-> Python ``ast`` objects) in
state shared by the whole interpreter. A conversion allocates objects; a collection it triggers can run a
finaliser, and the interpreter may switch threads there - so two threads converting at once corrupt that count and
one of them fails with ``SystemError: AST constructor recursion depth mismatch``. It happens here: verify and
bisect trace the candidate (the emulator parses the kernel) while a golden thread runs, lint runs in a worker
thread, and the held-out bisect tests run two bisections in a thread pool (one ``make test`` failed so; three
threads parsing a 700-line module with finalisers around reproduce it within seconds - ``tests/test_pyast.py``).
Every parse and every compile of an ``ast`` tree in the project goes through here; source text compiled by
``compile(str, ...)`` never builds Python ``ast`` objects and needs no lock. Code outside the project (a library's
own ``ast.parse`` in another thread) does not take the lock, so a parse that still trips the interpreter's check
is retried: ``ast.parse`` is pure and the error is the interpreter's bookkeeping, not the source's.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType
from typing import Any

__all__ = ["compile_tree", "parse"]

_LOCK = threading.RLock()
_RETRIES = 5


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec", **kwargs: Any) -> Any:
    """``ast.parse`` under the project's syntax-tree lock (retried on gh-106905 only)."""
    for attempt in range(_RETRIES):
        with _LOCK:
            try:
                return ast.parse(source, filename, mode, **kwargs)
            except SystemError as exc:  # gh-106905 only; any other SystemError is re-raised
                if "recursion depth mismatch" not in str(exc) or attempt == _RETRIES - 1:
                    raise
    raise AssertionError("unreachable")


def compile_tree(tree: ast.Module | ast.Expression | ast.Interactive, filename: str, mode: str, *,
                 dont_inherit: bool = False) -> CodeType:
    """``compile(tree, filename, mode)`` of an ``ast`` tree under the project's syntax-tree lock."""
    with _LOCK:
        return compile(tree, filename, mode, dont_inherit=dont_inherit)
