"""The emulator's modules form a layered graph: no import cycle, no function-local sibling imports.

Why: a cycle held together by function-local imports (issue #15 found seven modules in one) makes the
import order matter, hides which module owns what, and breaks as soon as someone moves an import to the
top. The check reads the source with `ast` (no import executed), builds the graph of module-level imports
between the package's own modules, and asserts it is acyclic; imports inside functions or under
`if TYPE_CHECKING:` of a sibling module are flagged, since they are how a cycle hides.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "runtime.emulator"

# Function-local imports of sibling modules that are allowed, as "module -> imported module": none.
ALLOWED_LOCAL: frozenset[str] = frozenset({
    # the torch_npu stand-in's operators import torch at module level; the stand-in itself is imported by every
    # script runner, torch or not, and builds the module (importing them) only when a script imports torch_npu.
    # No cycle: _torch_npu_ops imports nothing of the emulator (test_torch_npu_ops_imports_no_sibling).
    "runtime.emulator._torch_npu -> runtime.emulator._torch_npu_ops",
    # s44: the training-attention / masked-softmax operators, imported with the others for the same reason; they
    # import _torch_npu_ops, _errors and _location, none of which imports the stand-in (no cycle)
    "runtime.emulator._torch_npu -> runtime.emulator._torch_npu_ops_fa",
})


def _modules(package: str, root: Path) -> dict[str, Path]:
    pkg_dir = root.joinpath(*package.split("."))
    return {(package if p.stem == "__init__" else f"{package}.{p.stem}"): p for p in sorted(pkg_dir.glob("*.py"))}


def _targets(node: ast.Import | ast.ImportFrom, here: str, known: set[str], package: str) -> set[str]:
    """Sibling modules of ``package`` that an import statement loads."""
    out: set[str] = set()
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative import: resolve against this module's package
            parts = here.split(".") if here == package else here.split(".")[:-1]
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join(parts + ([base] if base else []))
        names = [base] + [f"{base}.{a.name}" for a in node.names]
    for name in names:
        if name in known and name != here:
            out.add(name)
    return out


def import_graph(package: str, root: Path = ROOT) -> tuple[dict[str, set[str]], list[str]]:
    """(module -> sibling modules imported at module level, ["a -> b (line n)" for non-top-level ones])."""
    mods = _modules(package, root)
    known = set(mods)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    hidden: list[str] = []
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        top = {id(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            targets = _targets(node, mod, known, package)
            # `from runtime.emulator import X` at module level loads the package __init__ first only when
            # X is not a submodule; a submodule import is an edge to the submodule alone
            if isinstance(node, ast.ImportFrom) and targets - {package}:
                targets.discard(package)
            if id(node) in top:
                graph[mod] |= targets
            else:
                hidden += [f"{mod} -> {t} (line {node.lineno})" for t in sorted(targets)]
    return graph, hidden


def test_graph_is_built_from_the_real_sources() -> None:
    graph, _ = import_graph(PACKAGE)
    # guards against a vacuous pass (wrong path, nothing parsed)
    assert len(graph) >= 20
    assert f"{PACKAGE}._symbolic" in graph[f"{PACKAGE}._tensor"]


def test_emulator_has_no_import_cycle() -> None:
    graph, _ = import_graph(PACKAGE)
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle in {PACKAGE}: {' -> '.join(exc.args[1])}")
    assert set(order) == set(graph)


def test_no_function_local_sibling_imports() -> None:
    _, hidden = import_graph(PACKAGE)
    unexpected = [h for h in hidden if h.split(" (line")[0] not in ALLOWED_LOCAL]
    assert not unexpected, "sibling imports inside functions (a hidden cycle):\n" + "\n".join(unexpected)


def test_checker_detects_a_cycle(tmp_path: Path) -> None:
    """The check itself can fail: a two-module cycle and a local import are both reported."""
    pkg = tmp_path / "fakepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from fakepkg import b\n")
    (pkg / "b.py").write_text("import fakepkg.a\n\ndef f():\n    from fakepkg.a import x\n")
    graph, hidden = import_graph("fakepkg", tmp_path)
    with pytest.raises(graphlib.CycleError):
        list(graphlib.TopologicalSorter(graph).static_order())
    assert hidden == ["fakepkg.b -> fakepkg.a (line 4)"]


def test_torch_npu_ops_imports_no_sibling() -> None:
    """The one allowed function-local import stays a leaf: the stand-in's operators import only torch and the
    standard library (a sibling import there could close a cycle the local import hides)."""
    src = (ROOT / "runtime" / "emulator" / "_torch_npu_ops.py").read_text()
    mods = {a.name for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Import) for a in n.names} | {
        n.module or "" for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom)}
    assert not {m for m in mods if m.startswith("runtime") or m == ""}, mods
