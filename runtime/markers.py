"""Module markers and module regions: the one definition of ``# --- Module Mk: <role> ---`` and ``# STUB``.

Why one definition at the bottom of ``runtime``: a verified module's region must stay frozen, and three
readers disagreed on what a region is (the orchestrator reported an M1 violation on a file where lint
reported none). Lint (PF05/PF09), the verifier, the op-dir intake (markers in golden.py) and the
orchestrator (feedback pointers, cleanup) all import from here; nothing here imports the project.

A marker is a comment line ``# --- Module M<k>[:] <role> [---]`` (the colon and the closing dashes are
optional). The region of module Mk runs from the line after its marker to the next module marker, an
``# --- end ...`` line (e.g. ``# --- end of modules ---``) or the first non-blank line indented less than
the marker. ``# STUB`` lines (golden-fed stand-ins that cleanup deletes), trailing whitespace and trailing
blank lines are not part of the region, nor is the marker's role text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["END_RE", "MARKER_RE", "STUB_RE", "Marker", "Region", "looks_like_marker", "markers", "module_regions"]

MARKER_RE = re.compile(r"^(?P<indent>\s*)#\s*---\s*Module\s+M(?P<num>\d+)\s*:?\s*(?P<role>.*?)\s*-*\s*$")
STUB_RE = re.compile(r"#\s*STUB\b")
END_RE = re.compile(r"^\s*#\s*---\s*end\b", re.IGNORECASE)
# anything a person may have meant as a marker (for a "malformed marker" hint where MARKER_RE fails)
_LOOSE_RE = re.compile(r"^\s*#\s*-{2,}\s*Module\b", re.IGNORECASE)


@dataclass(frozen=True)
class Marker:
    """One ``# --- Module Mk: role ---`` line (``line`` is 1-based, ``indent`` in characters)."""

    module: int
    line: int
    role: str
    indent: int


@dataclass(frozen=True)
class Region:
    """The frozen-comparable body of one module: its marker line and ``(line, text)`` pairs."""

    marker_line: int
    body: tuple[tuple[int, str], ...]

    @property
    def texts(self) -> list[str]:
        """The region's lines (trailing whitespace stripped), for comparisons."""
        return [text for _, text in self.body]


def markers(lines: list[str]) -> list[Marker]:
    """Every module marker, in file order."""
    out = []
    for i, text in enumerate(lines, start=1):
        m = MARKER_RE.match(text)
        if m:
            out.append(Marker(int(m.group("num")), i, m.group("role").strip(), len(m.group("indent"))))
    return out


def looks_like_marker(text: str) -> bool:
    """True for a line that resembles a module marker but is not one (so no region starts there)."""
    return bool(_LOOSE_RE.match(text)) and not MARKER_RE.match(text)


def module_regions(lines: list[str]) -> dict[int, Region]:
    """Module number -> its region (the first marker of a number wins)."""
    found = markers(lines)
    out: dict[int, Region] = {}
    for j, mk in enumerate(found):
        nxt = found[j + 1].line if j + 1 < len(found) else len(lines) + 1
        body: list[tuple[int, str]] = []
        for k in range(mk.line + 1, nxt):
            text = lines[k - 1]
            if END_RE.match(text) or (text.strip() and len(text) - len(text.lstrip()) < mk.indent):
                break
            if not STUB_RE.search(text):
                body.append((k, text.rstrip()))
        while body and not body[-1][1].strip():
            body.pop()
        out.setdefault(mk.module, Region(mk.line, tuple(body)))
    return out
