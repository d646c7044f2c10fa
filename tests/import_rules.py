"""The project's import graph, read from the sources with ``ast`` (nothing is imported or executed).

Used by ``tests/test_layering.py`` (the package and layer rules, cycles in every package) and by the
emulator's own import-graph test. A module-level import is an edge; an import inside a function (or under
``if TYPE_CHECKING:``) is a *hidden* edge, listed separately since that is how a cycle hides.
"""

from __future__ import annotations

import ast
import graphlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = ("agents", "orchestrator", "runtime")


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Import name -> source file for every module of the project (mapped package folders included)."""
    out: dict[str, Path] = {}

    def add(folder: Path, prefix: tuple[str, ...]) -> None:
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" in path.parts or not (path.parent / "__init__.py").is_file():
                continue  # a file outside a package is no module of it (golden.py of an example operator)
            parts = prefix + path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path

    for top in TOP:
        if (root / top).is_dir():
            add(root / top, (top,))
    try:
        mapping = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
        package_dir = mapping.get("package-dir", {})
    except (OSError, KeyError):
        package_dir = {}
    for name, folder in package_dir.items():
        if name and (root / folder).is_dir():
            add(root / folder, tuple(name.split(".")))
    return out


@dataclass
class ImportGraph:
    edges: dict[str, set[str]] = field(default_factory=dict)
    """module -> project modules it imports at module level."""
    hidden: list[tuple[str, str, int]] = field(default_factory=list)
    """(module, imported module, line) of imports inside functions or ``if TYPE_CHECKING:``."""
    lines: dict[tuple[str, str], int] = field(default_factory=dict)
    """(module, imported module) -> line of the first import statement."""


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _targets(node: ast.Import | ast.ImportFrom, here: str, is_pkg: bool, known: set[str]) -> set[str]:
    """Project modules an import statement loads (the most specific module it names)."""
    out: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = alias.name
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                out.add(name)
        return out
    base = node.module or ""
    if node.level:
        parts = here.split(".") if is_pkg else here.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([base] if base else []))
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in known:
            out.add(sub)
        else:
            name = base
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                out.add(name)
    return out


def import_graph(root: Path = ROOT, files: dict[str, Path] | None = None) -> ImportGraph:
    files = files if files is not None else module_files(root)
    known = set(files)
    graph = ImportGraph(edges={m: set() for m in files})
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        top: set[int] = set()
        for stmt in tree.body:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                top.add(id(stmt))
            elif isinstance(stmt, ast.Try):  # optional imports at module level (try/except ImportError)
                top |= {id(s) for block in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse)
                        for s in block if isinstance(s, ast.Import | ast.ImportFrom)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            targets = _targets(node, mod, _is_package(path), known) - {mod}
            for t in targets:
                graph.lines.setdefault((mod, t), node.lineno)
            if id(node) in top:
                graph.edges[mod] |= targets
            else:
                graph.hidden += [(mod, t, node.lineno) for t in sorted(targets)]
    return graph


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (each one an import cycle), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:  # Tarjan, iterative over an explicit stack of (node, iterator)
        nonlocal counter
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def is_acyclic(edges: dict[str, set[str]]) -> bool:
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError:
        return False
    return True
