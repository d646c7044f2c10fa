"""The skills library: what agents may read, split into small addressable sections.

A skill file is ``skills/<topic>.md`` (package data of this package, found with
``importlib.resources`` so an installed wheel has the skills); every ``## `` heading starts a section whose id is
``<topic>#<slug>`` (slug = lowercase heading, non-alphanumerics collapsed to ``-``; an explicit
``{#id}`` at the end of the heading wins). Roles get a few sections injected into their prompt and may
read more through the ``read_skill`` tool, limited to the files their role allows and to a cap on how many
distinct files one dispatch may open (upstream rule: no agent carries more than a handful of skills).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from agents._data import data_dir
from agents.trace import sha256_text

__all__ = ["ROLE_SKILLS", "RoleSkills", "Section", "SkillError", "SkillLibrary", "default_skills_dir"]

_HEADING = re.compile(r"^## +(.+?)\s*$", re.MULTILINE)
_EXPLICIT_ID = re.compile(r"\{#([a-z0-9-]+)\}\s*$")


class SkillError(LookupError):
    """Unknown skill file or section, or a read the role is not allowed to make."""


def default_skills_dir() -> Path:
    """The directory of the shipped skill files (this package's data files)."""
    return data_dir(__name__)


def _headings(text: str) -> list[re.Match[str]]:
    """``## `` headings outside fenced code blocks (templates contain example headings in fences)."""
    fences = [m.start() for m in re.finditer(r"^```", text, re.MULTILINE)]
    spans = list(zip(fences[::2], fences[1::2], strict=False))
    return [m for m in _HEADING.finditer(text) if not any(a < m.start() < b for a, b in spans)]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    text: str

    @property
    def approx_tokens(self) -> int:
        return (len(self.text) + 3) // 4


@dataclass(frozen=True)
class RoleSkills:
    """What one role may read: injected sections (always in its prompt), readable files, and a file cap."""

    inject: tuple[str, ...]
    allowed: tuple[str, ...]
    cap: int


ROLE_SKILLS: dict[str, RoleSkills] = {
    "designer": RoleSkills(
        inject=("design-template#front-matter-and-decision", "design-template#sections",
                "module-interfaces#format", "module-interfaces#rules"),
        allowed=("pypto-api", "execution-constraints", "patterns", "design-template", "module-interfaces"),
        cap=3,
    ),
    "implementer": RoleSkills(
        inject=("stage-file-template#skeleton", "stage-file-template#rules",
                "execution-constraints#pre-write-checklist"),
        allowed=("pypto-api", "execution-constraints", "patterns", "stage-file-template", "lint-rules",
                 "module-interfaces"),
        cap=5,
    ),
    "verifier": RoleSkills(
        inject=("audit-guide#what-an-audit-is", "audit-guide#row-rules"),
        allowed=("audit-guide", "pypto-api", "lint-rules"),
        cap=2,
    ),
    "debugger": RoleSkills(
        inject=("debug-guide#method", "debug-guide#patch-proposals"),
        allowed=("debug-guide", "pypto-api", "execution-constraints", "patterns", "lint-rules"),
        cap=3,
    ),
}


class SkillLibrary:
    """Read-only access to the skill files (``skills/*.md``).

    Example::

        lib = SkillLibrary()
        print(lib.get("patterns#online-softmax").text)
    """

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_skills_dir()
        self._texts: dict[str, str] = {}
        """File contents read once per library: one run sees one consistent version of each skill."""

    def topics(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*.md"))

    def _read(self, topic: str) -> str:
        if topic not in self._texts:
            path = self.root / f"{topic}.md"
            if not path.is_file():
                raise SkillError(f"no skill file {topic!r}; available: {', '.join(self.topics())}")
            self._texts[topic] = path.read_text(encoding="utf-8")
        return self._texts[topic]

    def sections(self, topic: str) -> list[Section]:
        text = self._read(topic)
        matches = _headings(text)
        out: list[Section] = []
        for i, m in enumerate(matches):
            title = m.group(1)
            explicit = _EXPLICIT_ID.search(title)
            if explicit:
                title = title[: explicit.start()].rstrip()
            slug = explicit.group(1) if explicit else _slug(title)
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            out.append(Section(id=f"{topic}#{slug}", title=title, text=text[m.start():end].strip() + "\n"))
        return out

    def overview(self, topic: str) -> Section:
        """The text before the first section plus the list of section ids of a file."""
        text = self._read(topic)
        found = _headings(text)
        head = text[: found[0].start()] if found else text
        listing = "\n".join(f"- {s.id}: {s.title} (~{s.approx_tokens} tokens)" for s in self.sections(topic))
        return Section(id=topic, title=topic, text=f"{head.strip()}\n\nSections:\n{listing}\n")

    def get(self, section_id: str) -> Section:
        topic, _, slug = section_id.partition("#")
        if not slug:
            return self.overview(topic)
        for section in self.sections(topic):
            if section.id == section_id:
                return section
        known = ", ".join(s.id for s in self.sections(topic))
        raise SkillError(f"no section {section_id!r}; sections of {topic}: {known}")

    def menu(self, topics: tuple[str, ...] | list[str]) -> str:
        """One line per readable section: id, title, size. Missing files are listed as such."""
        lines = []
        for topic in topics:
            try:
                sections = self.sections(topic)
            except SkillError:
                lines.append(f"- {topic}: (not available)")
                continue
            for s in sections:
                lines.append(f"- {s.id} — {s.title} (~{s.approx_tokens} tok)")
        return "\n".join(lines)

    @cached_property
    def digest(self) -> str:
        """sha256 over every skill file (goes into the trace manifest)."""
        parts = [f"{t}.md:{sha256_text(self._read(t))}" for t in self.topics()]
        return sha256_text("\n".join(parts))
