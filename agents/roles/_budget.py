"""Token discipline for user messages: named sections, a contents header, and priority-based trimming.

A prompt must be identical on every machine (ARCHITECTURE §0.2). A budget measured in raw characters would
turn a one-digit difference in a measurement anywhere in the message into a different cut point and a
different size header - an amplifier. So sizes here are measured **without numbers** (:func:`size`: the
length of the text with every numeric literal removed), cut points fall on line boundaries (or, inside one
over-long line, after a fixed count of non-numeric characters), and the contents header lists line counts.
When a message would exceed its budget, the lowest-priority sections are cut first, keeping their head and
tail with a visible marker, so the model always knows something was left out and where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Part", "approx_tokens", "assemble", "assemble_noted", "floor_chars", "size"]

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def approx_tokens(text: str) -> int:
    """Rough token estimate (``len / 4``), for logs and budget checks only: never rendered into a prompt."""
    return (len(text) + 3) // 4


def size(text: str) -> int:
    """Budget size of ``text``: its length without numeric literals (a number's digits never move a cut)."""
    return len(_NUMBER.sub("", text))


@dataclass
class Part:
    title: str
    text: str
    priority: int = 5
    """Higher survives longer; 10 = never trimmed."""
    fence: str | None = None
    """Code-fence language (``python``, ``yaml`` ...) or None for plain text."""


def _prefix(line: str, budget: int) -> str:
    """The longest prefix of ``line`` whose :func:`size` is at most ``budget`` (numbers kept whole)."""
    out: list[str] = []
    used = pos = 0
    for m in _NUMBER.finditer(line):
        chunk = line[pos:m.start()]
        if used + len(chunk) > budget:
            return "".join(out) + chunk[: budget - used]
        out += [chunk, m.group()]
        used += len(chunk)
        pos = m.end()
    rest = line[pos:]
    return "".join(out) + rest[: max(0, budget - used)]


def _take(lines: list[str], budget: int) -> list[str]:
    kept: list[str] = []
    for line in lines:
        n = size(line) + 1
        if n > budget:
            if budget > 20:
                kept.append(_prefix(line, budget - 1) + " [...]")
            break
        kept.append(line)
        budget -= n
    return kept


def _cut(text: str, keep: int) -> str:
    if size(text) <= keep:
        return text
    lines = text.splitlines()
    if keep < 200:
        return f"[... all {len(lines)} lines omitted for the token budget ...]"
    head = _take(lines, keep * 2 // 3)
    tail = list(reversed(_take(list(reversed(lines[len(head):])), keep - keep * 2 // 3)))
    if len(head) + len(tail) > len(lines):  # pragma: no cover - keep < size guarantees a gap
        return text
    dropped = len(lines) - len(head) - len(tail)
    return "\n".join([*head, f"[... {max(dropped, 1)} lines omitted for the token budget ...]", *tail])


def _render(part: Part) -> str:
    body = part.text.rstrip("\n")
    if part.fence is not None:
        body = f"```{part.fence}\n{body}\n```"
    return f"## {part.title}\n{body}\n"


def assemble(parts: list[Part], *, max_chars: int) -> str:
    """Render parts under one budget (measured by :func:`size`), trimming low-priority parts first."""
    return assemble_noted(parts, max_chars=max_chars)[0]


def assemble_noted(parts: list[Part], *, max_chars: int) -> tuple[str, list[str]]:
    """:func:`assemble`, plus one note per part it shortened (``"MEMORY.md: shortened from 80 to 12 lines"``)."""
    parts = [Part(p.title, p.text, p.priority, p.fence) for p in parts if p.text is not None and p.text != ""]
    overhead = sum(len(p.title) + 40 for p in parts) + 200
    total = sum(size(p.text) for p in parts) + overhead
    notes: list[str] = []
    for part in sorted(parts, key=lambda p: p.priority):
        if total <= max_chars or part.priority >= 10:
            continue
        excess = total - max_chars
        keep = max(0, size(part.text) - excess - 80)  # room for the marker
        new = _cut(part.text, keep)
        if new != part.text:
            notes.append(f"{part.title}: shortened from {len(part.text.splitlines())} to "
                         f"{len(new.splitlines())} lines")
        total -= size(part.text) - size(new)
        part.text = new
    header = "This message contains: " + "; ".join(
        f"{p.title} ({len(p.text.splitlines())} lines)" for p in parts) + "\n\n"
    return header + "\n".join(_render(p) for p in parts), notes


def floor_chars(parts: list[Part], priority: int = 10) -> int:
    """The budget (in :func:`size` units) a message needs to keep every part of at least ``priority`` whole."""
    kept = [p for p in parts if p.text and p.priority >= priority]
    return sum(size(p.text) for p in kept) + sum(len(p.title) + 40 for p in parts if p.text) + 200
