"""`runtime/emulator/_astutil.nodes`: the nodes ``ast.walk`` yields, each parent before its children (the trace
cache's name analysis relies on seeing an attribute chain's outermost node first)."""

import ast
from collections import Counter
from pathlib import Path

import pytest

from runtime.emulator._astutil import nodes

SOURCES = sorted((Path(__file__).parent / "corpus").glob("*.py")) + [Path(ast.__file__)]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_same_nodes_as_ast_walk_parents_first(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    got = nodes(tree)
    # the same nodes as often (ast.Load() and friends are shared by many parents)
    seen = Counter(map(id, got))
    assert seen == Counter(map(id, ast.walk(tree)))
    pos = {id(n): i for i, n in enumerate(got) if seen[id(n)] == 1}
    for parent in got:
        for child in ast.iter_child_nodes(parent):
            if id(child) in pos:
                assert pos[id(parent)] < pos[id(child)]


def test_a_leaf() -> None:
    leaf = ast.Name(id="x", ctx=ast.Load())
    assert nodes(leaf)[0] is leaf
