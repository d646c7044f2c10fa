"""A faster ``ast.walk`` for the kernel-body analyses (parsing checks, the trace cache's name reads).

Why: a kernel is parsed and analysed once per process, but for the gym operators - whose tests call each kernel a
few times on millisecond-sized inputs - that one-off work was a quarter of the emulator's time: ``ast.walk``
goes through two generators per node (``iter_child_nodes``/``iter_fields``); this walk is one loop.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

__all__ = ["attr_chain", "nodes", "push_children"]

_AST = ast.AST


def nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` (itself included), each parent before its children - the nodes ``ast.walk``
    yields, in depth-first instead of breadth-first order."""
    out: list[ast.AST] = []
    stack = [tree]
    pop, push, add = stack.pop, stack.append, out.append
    while stack:
        n = pop()
        add(n)
        push_children(n, push)
    return out


def push_children(n: ast.AST, push: Callable[[ast.AST], None]) -> None:
    """``push`` every direct child node of ``n``: the step of a walk that prunes (one that does not enter attribute
    chains, `_trace_cache.body_reads`; one that stops at the first introspection name, `_roll.range_sites`)."""
    for v in n.__dict__.values():
        if type(v) is list:
            for x in v:
                if isinstance(x, _AST):
                    push(x)
        elif isinstance(v, _AST):
            push(v)


def attr_chain(n: ast.Attribute) -> tuple[ast.expr, tuple[str, ...]]:
    """``(root, attrs)`` of an attribute chain: ``(Name(pypto), ("experimental", "f"))`` for ``pypto.experimental.f``;
    the root is the first node that is not an attribute (a name, or any other expression: ``(x + 1).T``)."""
    parts = [n.attr]
    cur = n.value
    while isinstance(cur, ast.Attribute):
        parts.append(cur.attr)
        cur = cur.value
    return cur, tuple(reversed(parts))
