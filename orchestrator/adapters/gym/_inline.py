"""What a gym golden takes from the operator's own package, copied into golden.py.

A gym golden module may import helpers from the operator's implementation module
(``quant_batch_matmul_golden.py``: ``from experimental.matmul.quant_batch_matmul.quant_batch_matmul_impl import
QuantBatchMatmulConfig, QuantBatchMatmulInputs, compute_combined_scale``). The op dir has no such package, and
golden.py must not import the op dir's kernel file either: the agents rewrite it, and golden.py runs outside the
sandbox (`runtime.opdir._golden_child`). So the import copies what the golden uses - the named definitions and,
transitively, the module-level functions, classes, constants and imports they use - into golden.py in place of the
``from ... import``, unchanged: a snapshot of the vendor's helpers as they were at import time, which later kernel
edits cannot change.

Refused (the import stays, and the import report says why): a name the module does not define at top level, a
definition that is decorated with something of ``pypto`` (a kernel: a golden must not run kernel code), an import
the helpers need of a module golden.py cannot import (another module of the gym package), ``import *``, and a
copied helper whose name golden.py binds itself (copying it would change what that name means).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

from runtime import pyast

__all__ = ["Closure", "closure", "inline_package_imports", "package_module", "statement_source"]

_THIRD_PARTY = frozenset({"torch", "numpy", "pypto", "torch_npu", "ml_dtypes"})
"""modules golden.py may import besides the standard library (pypto: gym config dataclasses hold its dtypes)"""


class _NotInlined(Exception):
    """One line: why an import of the operator's package stays as it is."""


@dataclass
class Closure:
    """The top-level statements of a module that a set of names needs: its imports and its definitions (functions,
    classes, assignments), each in source order."""

    imports: list[ast.Import | ast.ImportFrom]
    definitions: list[ast.stmt]
    missing: list[str]
    """the wanted names the module binds nowhere at top level"""


def _bound(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return []


def closure(tree: ast.Module, wanted: list[str]) -> Closure:
    """The statements of ``tree`` that define ``wanted`` and what those use, transitively (by the names their code
    mentions; an attribute ``a.b`` mentions ``a``)."""
    defs: dict[str, ast.stmt] = {}
    imports: dict[str, ast.Import | ast.ImportFrom] = {}
    for node in tree.body:  # the last binding of a name is the one the module leaves
        for name in _bound(node):
            if isinstance(node, ast.Import | ast.ImportFrom):
                imports[name] = node
                defs.pop(name, None)
            else:
                defs[name] = node
                imports.pop(name, None)
    needed: list[ast.stmt] = []
    used_imports: list[ast.Import | ast.ImportFrom] = []
    seen: set[str] = set()
    todo = list(reversed(wanted))
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        node = defs.get(name)
        if node is None:  # an import, or a local / builtin name of the code that mentions it
            imp = imports.get(name)
            if imp is not None and imp not in used_imports:
                used_imports.append(imp)
            continue
        if node not in needed:
            needed.append(node)
            todo += [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
    return Closure(sorted(used_imports, key=lambda n: n.lineno), sorted(needed, key=lambda n: n.lineno),
                   [w for w in wanted if w not in defs and w not in imports])


def statement_source(lines: list[str], node: ast.stmt) -> str:
    """The source lines of a top-level statement, its decorators included."""
    first = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno  # type: ignore[attr-defined]
    return "\n".join(lines[first - 1:node.end_lineno])


def _module_file(module: str, src: Path) -> Path | None:
    """The file of ``module`` under the gym operator's ``src/`` folder (any prefix of it on the path), or None."""
    tail = Path(*module.split("."))
    for cand in sorted(src.rglob(tail.name + ".py")):  # a module, else a package of that name
        if cand.with_suffix("").parts[-len(tail.parts):] == tail.parts:
            return cand
    for cand in sorted(src.rglob(tail.name)):
        if cand.parts[-len(tail.parts):] == tail.parts and (cand / "__init__.py").is_file():
            return cand / "__init__.py"
    return None


def package_module(node: ast.ImportFrom, src: Path) -> Path | None:
    """The file of the gym operator's package that ``from <module> import ...`` names, or None."""
    return None if node.level or not node.module else _module_file(node.module, src)


def _allowed(node: ast.Import | ast.ImportFrom) -> bool:
    mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    return not getattr(node, "level", 0) and all(
        m.split(".")[0] in sys.stdlib_module_names or m.split(".")[0] in _THIRD_PARTY for m in mods)


def _copy(file: Path, names: list[str], taken: set[str]) -> str:
    text = file.read_text(encoding="utf-8")
    tree = pyast.parse(text)
    c = closure(tree, names)
    if c.missing:
        raise _NotInlined(f"{file.name} does not define {', '.join(sorted(c.missing))} at top level")
    for node in c.definitions:
        for dec in getattr(node, "decorator_list", []):
            if any(isinstance(n, ast.Name) and n.id == "pypto" for n in ast.walk(dec)):
                raise _NotInlined(f"{file.name}:{node.lineno}: {_bound(node)[0]} is a pypto kernel or function (a "
                                  "golden must not run kernel code)")
    for imp in c.imports:
        if not _allowed(imp):
            raise _NotInlined(f"{file.name}:{imp.lineno}: its helpers need an import golden.py cannot make")
    copied = {n for node in c.definitions for n in _bound(node)} - set(names)
    clash = sorted(copied & taken)
    if clash:
        raise _NotInlined(f"the helpers it needs from {file.name} ({', '.join(clash)}) have names golden.py binds "
                          "itself")
    lines = text.splitlines()
    return "\n".join([statement_source(lines, n) for n in c.imports] + ["", ""] + [statement_source(lines, n) + "\n\n" for n in
                                                                         c.definitions]).rstrip()


def inline_package_imports(text: str, golden_name: str, src: Path) -> tuple[str, list[str], list[str]]:
    """``text`` (a gym golden module) with each ``from <a module of src/> import ...`` replaced by a copy of what it
    imports (module doc): (new text, lines on what could not be copied, notes on what was)."""
    tree = pyast.parse(text)
    taken = {n for node in tree.body if not isinstance(node, ast.ImportFrom) for n in _bound(node)}
    lines = text.splitlines()
    edits: list[tuple[int, int, str]] = []
    notes: list[str] = []
    refused: list[str] = []
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or (f := package_module(node, src)) is None:
            continue
        assert node.module is not None
        names = [(a.name, a.asname) for a in node.names]
        try:
            if any(n == "*" for n, _ in names):
                raise _NotInlined("`import *`")
            body = _copy(f, [n for n, _ in names], taken)
        except _NotInlined as exc:
            refused.append(f"{golden_name}:{node.lineno}: imports {node.module}, a module of the gym operator's "
                           f"package that golden.py cannot import; not copied: {exc}")
            continue
        alias = "".join(f"\n{a} = {n}" for n, a in names if a and a != n)
        edits.append((node.lineno, node.end_lineno or node.lineno,
                      f"# --- copied by `python -m orchestrator import` from {node.module} ({f.name}): what this golden"
                      f" imports from it and what that uses, unchanged\n{body}{alias}\n# --- end of the copy"))
        notes.append(f"{golden_name}:{node.lineno}: imports {', '.join(n for n, _ in names)} from {node.module}; "
                     f"copied into golden.py (with what they use) - the op dir has no gym package")
    for first, last, repl in reversed(edits):
        lines[first - 1:last] = repl.splitlines()
    return "\n".join(lines) + ("\n" if text.endswith("\n") else ""), refused, notes
