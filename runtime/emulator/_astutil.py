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
        for v in n.__dict__.values():
            if type(v) is list:
                for x in v:
                    if isinstance(x, _AST):
                        push(x)
            elif isinstance(v, _AST):
                push(v)
    return out


_LEAVES = frozenset({"ctx", "op", "ops"})
"""fields that only ever hold a leaf singleton (``Load``/``Store``/``Del``, an operator, a list of comparison
operators): nothing under them, and no walk that uses `push_children` looks at them"""
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
"""node class -> the fields of its that may hold child nodes (`push_children`)"""


def _child_fields(t: type) -> tuple[str, ...]:
    fields = () if t is ast.Constant else tuple(f for f in getattr(t, "_fields", ()) if f not in _LEAVES)
    _CHILD_FIELDS[t] = fields
    return fields


def push_children(n: ast.AST, push: Callable[[ast.AST], None]) -> None:
    """``push`` every direct child node of ``n`` but the leaf singletons under ``ctx`` / ``op`` / ``ops`` (and the
    value of a ``Constant``): the step of a walk that prunes (one that does not enter attribute chains,
    `_trace_cache.body_reads`; one that stops at the first introspection name, `_roll.range_sites`), none of which
    looks at those leaves.

    Why the class's ``_fields`` (what ``ast.iter_child_nodes`` reads) and not every attribute of the node: a
    parsed node also carries its four location ints, and a third of a body's nodes are those leaves, pushed and
    popped for nothing - the walk over attn_softmax's kernel takes ~0.12 instead of ~0.21 ms warm (session 39),
    and each of a kernel's first-call analyses (`range_sites`, `bound_reads`) walks it once."""
    t = n.__class__
    fields = _CHILD_FIELDS.get(t)
    if fields is None:
        fields = _child_fields(t)
    d = n.__dict__
    for f in fields:
        v = d.get(f)
        if v.__class__ is list:
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
