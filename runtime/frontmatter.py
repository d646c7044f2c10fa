"""The one reader of a markdown file's ``---`` YAML front matter (SPEC.md, DESIGN.md, a gym SPEC).

Why one reader at the bottom of ``runtime``: SPEC.md was split in five places, and they disagreed: a
SPEC.md that starts with a byte-order mark passed intake while the orchestrator's copy returned ``{}``.
Intake (:mod:`runtime.opdir`), lint (PF07 and the op-dir context), the agent builder, the orchestrator and
the gym importer all call :func:`split_front_matter`; nothing here imports the project but the YAML loader.

The block is a first line ``---`` (after an optional UTF-8 byte-order mark), YAML keys, then a closing
``---`` or ``...`` line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from runtime.yamlio import load_yaml

__all__ = ["FrontMatter", "split_front_matter"]

Problem = Literal["", "missing", "unclosed", "yaml", "not_mapping"]


@dataclass(frozen=True)
class FrontMatter:
    """A front matter block split from its text."""

    data: dict[str, Any] | None
    """The YAML mapping; None when the block is missing, unclosed, invalid YAML or not a mapping."""
    problem: Problem = ""
    message: str = ""
    """What is wrong, in plain words ("" when nothing is)."""
    yaml_text: str = ""
    """The YAML lines of the block (for callers that need positions: ``yaml.compose``)."""
    first_line: int = 2
    """File line (1-based) of the first YAML line."""
    body: str = ""
    """The text after the block (all of it when there is no block)."""
    body_line: int = 1
    """File line (1-based) where the body starts."""
    error_line: int | None = field(default=None)
    """File line of a YAML syntax error, when the parser gave one."""


def split_front_matter(text: str) -> FrontMatter:
    """Split ``text`` into its front matter (parsed) and its body; BOM-safe; never raises."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return FrontMatter(None, "missing", "no `---` front matter block at the top", body="\n".join(lines))
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            block = "\n".join(lines[1:i]) + "\n"
            body, body_line = "\n".join(lines[i + 1:]), i + 2
            try:
                data = load_yaml(block) if block.strip() else {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
                reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
                return FrontMatter(None, "yaml", f"front matter is not valid YAML: {reason}", block, 2, body,
                                   body_line, error_line=mark.line + 2 if mark is not None else None)
            if not isinstance(data, dict):
                return FrontMatter(None, "not_mapping", "front matter is not a YAML mapping", block, 2, body,
                                   body_line)
            return FrontMatter(data, "", "", block, 2, body, body_line)
    return FrontMatter(None, "unclosed", "front matter block is not closed by `---`", body="\n".join(lines))
