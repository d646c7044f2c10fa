"""Token discipline for user messages: named sections, a contents header, and priority-based trimming.

Tokens are approximated as ``len(text) / 4`` (no tokenizer dependency). When a message would exceed its
budget, the lowest-priority sections are cut first, keeping their head and tail with a visible marker, so
the model always knows something was left out and where.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Part", "approx_tokens", "assemble"]


def approx_tokens(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass
class Part:
    title: str
    text: str
    priority: int = 5
    """Higher survives longer; 10 = never trimmed."""
    fence: str | None = None
    """Code-fence language (``python``, ``yaml`` ...) or None for plain text."""


def _cut(text: str, keep: int) -> str:
    if len(text) <= keep:
        return text
    if keep < 200:
        return f"[... all {len(text)} chars omitted for the token budget ...]"
    head = keep * 2 // 3
    tail = keep - head
    return f"{text[:head]}\n[... {len(text) - keep} chars omitted for the token budget ...]\n{text[-tail:]}"


def _render(part: Part) -> str:
    body = part.text.rstrip("\n")
    if part.fence is not None:
        body = f"```{part.fence}\n{body}\n```"
    return f"## {part.title}\n{body}\n"


def assemble(parts: list[Part], *, max_chars: int) -> str:
    """Render parts under one budget, trimming low-priority parts first; a contents header lists sizes."""
    parts = [Part(p.title, p.text, p.priority, p.fence) for p in parts if p.text is not None and p.text != ""]
    overhead = sum(len(p.title) + 40 for p in parts) + 200
    total = sum(len(p.text) for p in parts) + overhead
    for part in sorted(parts, key=lambda p: p.priority):
        if total <= max_chars or part.priority >= 10:
            continue
        excess = total - max_chars
        keep = max(0, len(part.text) - excess - 80)  # room for the marker
        new = _cut(part.text, keep)
        total -= len(part.text) - len(new)
        part.text = new
    header = "This message contains: " + "; ".join(
        f"{p.title} (~{approx_tokens(p.text)} tok)" for p in parts) + "\n\n"
    return header + "\n".join(_render(p) for p in parts)
