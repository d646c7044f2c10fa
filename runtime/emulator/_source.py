"""The source block of a kernel or helper function, found without tokenizing it.

Why: ``inspect.getsourcelines`` finds where a function ends by running Python's tokenizer over it (pure Python:
~1.5 ms for a 60-line kernel), and every ``@pypto.frontend.jit`` kernel and ``@pypto.frontend.function`` helper is
parsed once per process - a quarter of a small gym kernel's first call. Here the block ends at the first line
after the ``def`` that starts a statement at the ``def``'s indentation or less (skipping blank and comment lines,
and lines starting with a closing bracket); that is where the tokenizer ends it too, unless the line lies inside
a bracket, a string or a backslash continuation - and then the lines before it do not parse, so the caller parses
what this returns and falls back to ``inspect.getsourcelines`` when it does not parse to exactly one function of
that name (`tests/emulator/test_source.py` compares both on every corpus kernel and on awkward layouts).
"""

from __future__ import annotations

import inspect
import linecache
import os
import re
import sys
import textwrap
from collections.abc import Callable
from typing import Any

__all__ = ["dedent", "findsource", "quick_block"]

_DEF = ("def ", "def\t", "async ")

_WHITESPACE_ONLY = re.compile("^[ \t]+$", re.MULTILINE)
"""``textwrap``'s pattern of the lines `textwrap.dedent` empties (the same pattern and flags: ``re``'s cache has it)"""


def dedent(lines: list[str]) -> str:
    """``textwrap.dedent("".join(lines))``, without its work when it would return the text unchanged.

    Why: every kernel and helper is parsed once per process from its source block, and ``textwrap.dedent`` scans
    the block twice with regular expressions, lists every line's indentation and loops over it in Python
    (~50-100 us for attn_softmax's 58 lines, a tenth of its ``ast.parse``) - for a module-level function, whose
    first line has no indentation, to give the text back as it was. It does so exactly when the first line starts
    with a character other than a space, a tab or a newline (its empty indentation makes the common margin empty)
    and no line is spaces and tabs only (`textwrap.dedent` empties those: inside a string literal that changes
    the literal); one scan of the text decides it. Anything else is `textwrap.dedent`'s
    (`tests/emulator/test_first_call_work.py` compares the two)."""
    text = "".join(lines)
    if text[:1] not in ("", " ", "\t", "\n") and _WHITESPACE_ONLY.search(text) is None:
        return text
    return textwrap.dedent(text)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _code_line(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def findsource(func: Callable[..., Any]) -> tuple[list[str], int]:
    """``inspect.findsource(func)``: the lines of ``func``'s file and the 0-based index of its first line.

    Why not always inspect's: it compiles a regular expression on every call (cached by ``re`` after the first,
    which costs ~0.25 ms per process - on a small gym kernel's first call), to look backwards from the code's
    first line for a ``def`` / decorator / lambda line. A function's first line already is its first decorator
    or its ``def`` line in every ordinary source file: when that line starts with ``@`` or ``def``, inspect's
    search would stop right there, and its answer is computed here the way inspect computes it (same file name,
    same linecache refresh, same module globals for lazily loaded sources); anything else is inspect's."""
    code = getattr(func, "__code__", None)
    if code is not None and not inspect.ismethod(func):
        file = code.co_filename
        lnum = code.co_firstlineno - 1
        # a source file that exists: what inspect.getsourcefile returns for it (else inspect decides)
        if isinstance(file, str) and file.endswith(".py") and os.path.exists(file):
            linecache.checkcache(file)
            mod = sys.modules.get(func.__module__) if hasattr(func, "__module__") else None
            lines = linecache.getlines(file, mod.__dict__) if mod else linecache.getlines(file)
            if lines and 0 <= lnum < len(lines) and lines[lnum].lstrip().startswith(("@", "def ", "def\t")):
                return lines, lnum
    return inspect.findsource(func)


def quick_block(func: Callable[..., Any]) -> tuple[list[str], int] | None:
    """(lines of ``func``'s block from its first decorator, 1-based first line) as ``inspect.getsourcelines`` gives
    them (but trailing comment lines), or None when the source cannot be found this way. Unverified: the caller
    parses it (see the module doc)."""
    try:
        lines, lnum = findsource(func)
    except (OSError, TypeError, IndexError):
        return None
    block = lines[lnum:]
    if not block:
        return None
    base = _indent(block[0])
    seen_def = block[0].lstrip().startswith(_DEF)
    end = len(block)
    for i in range(1, len(block)):
        line = block[i]
        # `_code_line` and `_indent` inlined: two calls per line of the kernel were a fifth of this function
        s = line.lstrip()
        if not s or s[0] == "#" or len(line) - len(s) > base:
            continue
        if s[0] in ")]}":
            continue  # the end of a bracket opened on an earlier line (decorator arguments, a long signature)
        if not seen_def:
            if s.startswith("@"):
                continue
            if s.startswith(_DEF):
                seen_def = True
                continue
            return None
        end = i
        break
    while end > 1 and not _code_line(block[end - 1]):
        end -= 1  # trailing blank and comment lines belong to what follows (inspect leaves them out too)
    return block[:end], lnum + 1
