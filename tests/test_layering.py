"""The dependency rules, read from the sources with ``ast`` (tests/import_rules.py builds the graph).

Packages: runtime imports neither agents nor orchestrator; agents does not import orchestrator.
Inside the orchestrator (docs/architecture.md has the picture): the leaves ``errors`` and ``gates`` import
nothing of it; ``store`` imports only the leaves; ``core`` imports the leaves and ``store`` (never ``ui``,
``cli``, ``adapters`` or the facade) and has no function-local imports of orchestrator modules; ``ui``
adds ``core``; the facade (``api``, ``agent_factory``, ``studio``) and ``adapters`` never import ``ui`` or
``cli``. ``orchestrator.readonly`` (what the read-only commands and screens read without loading the pipeline:
the run's copies, LangGraph only as their fallback) imports only the leaves, ``store`` and ``core``, so ``ui``, the
facade and ``cli`` may all use it (s46: ``show --gate`` and ``report`` read it from ``ui``). And no import cycle anywhere in the project, counting function-local imports (that is how a cycle
hides).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from import_rules import ImportGraph, cycles, import_graph

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {"runtime": {"agents", "orchestrator"}, "agents": {"orchestrator"}}

LEAVES = ("orchestrator.errors", "orchestrator.gates", "orchestrator.command")
LAYERS = ("store", "core", "ui", "cli", "adapters")
ALLOWED: dict[str, set[str]] = {
    "leaf": {"leaf"},
    "store": {"leaf", "store"},
    "core": {"leaf", "store", "core"},
    "readonly": {"leaf", "store", "core"},
    "ui": {"leaf", "store", "core", "readonly", "ui"},
    "facade": {"leaf", "store", "core", "readonly", "adapters", "facade"},
    "adapters": {"leaf", "store", "core", "readonly", "adapters", "facade"},
    "cli": {"leaf", "store", "core", "readonly", "ui", "adapters", "facade", "cli"},
}


def layer(module: str) -> str | None:
    """The orchestrator layer of a module (None outside the orchestrator)."""
    parts = module.split(".")
    if parts[0] != "orchestrator":
        return None
    if module in LEAVES:
        return "leaf"
    if module == "orchestrator.readonly":
        return "readonly"
    if module == "orchestrator.__main__":  # ``python -m orchestrator`` is the CLI's entry point
        return "cli"
    if len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    return "facade"


def layer_violations(graph: ImportGraph) -> list[str]:
    """Every import (module-level or not) that breaks the layer rule, plus function-local imports in core."""
    out = []
    imports = [(m, t, graph.lines[(m, t)]) for m, ts in graph.edges.items() for t in ts] + graph.hidden
    for mod, target, line in sorted(set(imports)):
        src, dst = layer(mod), layer(target)
        if src is None or dst is None:
            continue
        if dst not in ALLOWED[src]:
            out.append(f"{mod} (line {line}) imports {target}: {src} may not import {dst}")
    for mod, target, line in graph.hidden:
        if layer(mod) == "core" and layer(target) is not None:
            out.append(f"{mod} (line {line}) imports {target} inside a function: core imports at module level")
    return out


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return import_graph(ROOT)


def test_graph_is_built_from_the_real_sources(graph: ImportGraph) -> None:
    assert len(graph.edges) > 200  # guards against a vacuous pass (wrong path, nothing parsed)
    assert "orchestrator.core.graph" in graph.edges["orchestrator.core.driver"]
    assert "agents.prompts" in graph.edges  # a package mapped from the top-level prompts/ folder
    assert {layer(m) for m in graph.edges} >= {"leaf", "store", "core", "ui", "cli", "adapters", "facade", None}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_upward_imports(graph: ImportGraph, package: str) -> None:
    imports = [(m, t) for m, ts in graph.edges.items() for t in ts] + [(m, t) for m, t, _ in graph.hidden]
    offenders = sorted({f"{m} imports {t}" for m, t in imports
                        if m.split(".")[0] == package and t.split(".")[0] in FORBIDDEN[package]})
    assert not offenders, "upward imports:\n" + "\n".join(offenders)


def test_orchestrator_layers(graph: ImportGraph) -> None:
    bad = layer_violations(graph)
    assert not bad, "layer rule broken:\n" + "\n".join(bad)


def test_no_import_cycle_in_any_package(graph: ImportGraph) -> None:
    edges = {m: set(ts) for m, ts in graph.edges.items()}
    for mod, target, _ in graph.hidden:
        edges[mod].add(target)
    found = cycles(edges)
    assert not found, "import cycles (function-local imports included):\n" + "\n".join(" <-> ".join(c) for c in found)


def _tree(tmp_path: Path, files: dict[str, str]) -> ImportGraph:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return import_graph(tmp_path)


def test_the_rule_fails_when_core_imports_ui(tmp_path: Path) -> None:
    """The check is not vacuous: a core node importing a view (at module level or lazily) is reported."""
    base = {"orchestrator/__init__.py": "", "orchestrator/core/__init__.py": "", "orchestrator/ui/__init__.py": "",
            "orchestrator/store/__init__.py": "", "orchestrator/ui/views.py": "X = 1\n",
            "orchestrator/store/paths.py": "import orchestrator.core.graph\n",
            "orchestrator/core/graph.py": "from orchestrator.ui.views import X\n",
            "orchestrator/core/driver.py": "def f():\n    from orchestrator.core import graph\n"}
    bad = layer_violations(_tree(tmp_path, base))
    assert "orchestrator.core.graph (line 1) imports orchestrator.ui.views: core may not import ui" in bad
    assert "orchestrator.store.paths (line 1) imports orchestrator.core.graph: store may not import core" in bad
    assert any("orchestrator.core.driver (line 2) imports orchestrator.core.graph inside a function" in b for b in bad)


def test_a_cycle_through_a_lazy_import_is_found(tmp_path: Path) -> None:
    g = _tree(tmp_path, {"runtime/__init__.py": "", "runtime/a.py": "from runtime.b import y\nx = 1\n",
                         "runtime/b.py": "y = 2\ndef f():\n    from runtime.a import x\n"})
    edges = {m: set(ts) for m, ts in g.edges.items()}
    assert cycles(edges) == []  # module level alone: no cycle
    for mod, target, _ in g.hidden:
        edges[mod].add(target)
    assert cycles(edges) == [["runtime.a", "runtime.b"]]
