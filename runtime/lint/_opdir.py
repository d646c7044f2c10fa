"""Read-only view of an operator directory for the cross-file rules.

The lint reads SPEC.md / DESIGN.md front matter and MEMORY.md itself (plain YAML and text, no execution)
instead of going through ``runtime.opdir``: it must keep working on half-written or invalid directories,
where a loader would refuse, and it must never run golden.py. module_interfaces.yaml is read with the one
model of it (`runtime.interfaces`); an invalid file is PF06's finding and counts as absent elsewhere.
"""

from __future__ import annotations

import ast
import logging
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from runtime import pyast
from runtime.frontmatter import split_front_matter
from runtime.interfaces import ModuleInterfaces, parse_interfaces
from runtime.stages import StageName, parse_stage_name

__all__ = ["OpContext", "StageName", "front_matter", "parse_stage_name"]

log = logging.getLogger(__name__)



def front_matter(text: str) -> tuple[dict[str, Any] | None, str, int]:
    """Split ``---`` YAML front matter from a markdown text.

    Returns:
        (mapping or None when absent/invalid, error message or "", line number of the body start).
    """
    fm = split_front_matter(text)
    return fm.data, fm.message, (fm.body_line - 1 if fm.problem not in ("missing", "unclosed") else 0)


@dataclass
class OpContext:
    """Lazily loaded files of one operator directory."""

    root: Path
    problems: list[str] = field(default_factory=list)

    def _read(self, rel: str) -> str | None:
        path = self.root / rel
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    @cached_property
    def spec(self) -> dict[str, Any]:
        text = self._read("SPEC.md")
        if text is None:
            return {}
        data, _err, _ = front_matter(text)
        return data or {}

    @cached_property
    def design_text(self) -> str | None:
        return self._read("DESIGN.md")

    @cached_property
    def design(self) -> dict[str, Any]:
        if self.design_text is None:
            return {}
        data, _err, _ = front_matter(self.design_text)
        return data or {}

    @cached_property
    def interfaces(self) -> ModuleInterfaces | None:
        """The op's module_interfaces.yaml when it is valid (PF06 reports an invalid one)."""
        text = self._read("module_interfaces.yaml")
        return None if text is None else parse_interfaces(text)[0]

    @cached_property
    def memory_text(self) -> str | None:
        return self._read("MEMORY.md")

    @cached_property
    def op_name(self) -> str | None:
        for value in (self.spec.get("op_name"), self.interfaces.op if self.interfaces else None,
                      self.design.get("op_name")):
            if isinstance(value, str) and value:
                return value
        return None

    @cached_property
    def golden_signature(self) -> tuple[list[str], int] | None:
        """(parameter names, number of required parameters) of ``golden(...)`` in golden.py, by AST."""
        text = self._read("golden.py")
        if text is None:
            return None
        try:
            tree = pyast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            return None
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "golden":
                args = node.args
                names = [a.arg for a in args.posonlyargs + args.args]
                return names, len(names) - len(args.defaults)
        return None

    def primary_inputs(self) -> list[str] | None:
        """Primary input names in module_interfaces.yaml order (SPEC inputs as fallback)."""
        if self.interfaces is not None:
            return self.interfaces.primary_names
        items = self.spec.get("inputs")
        if not isinstance(items, list):
            return None
        names = [str(i.get("name")) for i in items if isinstance(i, dict) and i.get("name")]
        return names or None

    def primary_inputs_used(self, modules: tuple[int, ...]) -> list[str] | None:
        """Primary inputs that modules ``modules`` read (``source: primary``), in primary_inputs order."""
        names = self.primary_inputs()
        if names is None or self.interfaces is None:
            return None
        used = {i.name for m in self.interfaces.modules if m.id in modules for i in m.inputs if i.source == "primary"}
        return [n for n in names if n in used]

    def outputs_for(self, modules: tuple[int, ...] | None) -> list[str] | None:
        """Declared outputs: boundary outputs of modules 1..k (stage file) or final outputs (None = final)."""
        if modules is None:
            if self.interfaces is not None:
                return [f.name for f in self.interfaces.final_outputs]
            outs = self.spec.get("outputs")
            if isinstance(outs, list):
                return [str(o.get("name")) for o in outs if isinstance(o, dict) and o.get("name")]
            return None
        if self.interfaces is None:
            return None
        return [o.name for m in self.interfaces.modules if m.id in modules for o in m.outputs]

    def dynamic_axes(self) -> list[Any]:
        axes = self.design.get("dynamic_axes")
        return list(axes) if isinstance(axes, list) else []
