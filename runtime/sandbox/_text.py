"""Text that candidate code controls, made safe to show in a terminal and to store.

A candidate's exception message, its type and file names, what it printed on stderr and the paths it tried to open
reach reports, ``--json``, MEMORY.md and the agents' feedback. Rich escapes markup and drops carriage returns, but
not ESC: ``ESC[1A ESC[2K`` moved the cursor up and rewrote the FAIL banner as PASS in a real terminal, OSC 8 made a
hidden hyperlink, and a right-to-left override (U+202E) showed text reversed. :func:`safe_text` replaces every such
character with a visible escape (``\\x1b``, ``\\u202e``); the text stays readable and nothing in it acts on a
terminal. It is applied once, where candidate text enters the host (``runtime.sandbox._exec``: every record of the
sandboxed child and of the device, the child's stderr, the sandbox's denials), so every consumer gets the clean text.
"""

from __future__ import annotations

import re

__all__ = ["safe_text"]

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
"""C0 controls but tab and newline (ESC, CR, BEL, backspace ...), DEL and the C1 controls (CSI U+009B, OSC U+009D)."""
_INVISIBLE = "\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
"""Bidirectional marks, embeddings, overrides and isolates, and the line/paragraph separators."""
_UNSAFE = re.compile(f"[{_CONTROLS}{_INVISIBLE}]")
_UNSAFE_ONE_LINE = re.compile(f"[\t\n{_CONTROLS}{_INVISIBLE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str, *, one_line: bool = False) -> str:
    """``text`` with every terminal control character and bidi override written as a visible escape.

    Tab and newline stay unless ``one_line`` (names, types, paths). Lone surrogates (``"\\ud800"`` from an
    exception message) become ``?``, so the text always encodes as UTF-8. Idempotent.
    """
    if not isinstance(text, str):
        text = str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return (_UNSAFE_ONE_LINE if one_line else _UNSAFE).sub(_escape, text)
