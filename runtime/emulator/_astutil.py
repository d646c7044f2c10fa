"""A faster ``ast.walk`` for the kernel-body analyses (parsing checks, the trace cache's name reads).

Why: a kernel is parsed and analysed once per process, but for the gym operators - whose tests call each kernel a
few times on millisecond-sized inputs - that one-off work was a quarter of the emulator's time: ``ast.walk``
goes through two generators per node (``iter_child_nodes``/``iter_fields``); this walk is one loop.
"""

from __future__ import annotations

import ast

__all__ = ["nodes"]

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
        for f in n._fields:
            v = getattr(n, f, None)
            if type(v) is list:
                for x in v:
                    if isinstance(x, _AST):
                        push(x)
            elif isinstance(v, _AST):
                push(v)
    return out
