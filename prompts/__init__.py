"""Prompt templates: ``prompts/<role>.md``, versioned files whose sha256 goes into every trace record.

The templates are package data of this package (found with ``importlib.resources``), so an installed wheel
has them wherever it is installed.

Templates use ``{{name}}`` placeholders; rendering with a missing or unused value is an error, so a template
and its caller cannot drift apart silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agents._data import data_dir
from agents.trace import sha256_text

__all__ = ["PromptError", "PromptTemplate", "default_prompts_dir", "load_prompt"]

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


class PromptError(ValueError):
    """A prompt template is missing or does not match the values given to it."""


def default_prompts_dir() -> Path:
    """The directory of the shipped templates (this package's data files)."""
    return data_dir(__name__)


@dataclass(frozen=True)
class PromptTemplate:
    role: str
    text: str
    path: Path

    @property
    def sha256(self) -> str:
        return sha256_text(self.text)

    @property
    def placeholders(self) -> set[str]:
        return set(_PLACEHOLDER.findall(self.body))

    def render(self, **values: str) -> str:
        missing = self.placeholders - set(values)
        unused = set(values) - self.placeholders
        if missing or unused:
            raise PromptError(f"{self.path}: placeholders missing values {sorted(missing)}, "
                              f"values without placeholder {sorted(unused)}")
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.body)

    @property
    def body(self) -> str:
        """The template without its leading ``<!-- ... -->`` header (which documents contents and size)."""
        text = self.text
        if text.startswith("<!--") and "-->" in text:
            text = text[text.index("-->") + 3:].lstrip("\n")
        return text


def load_prompt(role: str, prompts_dir: Path | str | None = None) -> PromptTemplate:
    path = Path(prompts_dir or default_prompts_dir()) / f"{role}.md"
    if not path.is_file():
        raise PromptError(f"prompt template for role {role!r} not found at {path}")
    return PromptTemplate(role=role, text=path.read_text(encoding="utf-8"), path=path)
