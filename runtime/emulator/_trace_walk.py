"""Kernel expressions evaluated by walking their syntax tree, without compiling them.

Why: the trace-time interpreter (`_trace_interp`) evaluated every expression of a kernel with ``eval`` of a code
object compiled from its node - 30-50 us per ``compile`` on this machine, once per expression and process, about
1.6 ms of attn_softmax's first call (its ~45 expressions are each evaluated once or twice: the first iteration
of a rolled loop and its rolled body). Walking the node costs a few microseconds per evaluation, so an
expression's first `WALKS` evaluations walk it and later ones compile it (a loop that unrolls 64 iterations still
runs compiled code).

Same semantics as the compiled expression, and only where they can be the same:

* the node types walked are the plain ones (`walkable`): names, constants, attributes, calls without ``*`` /
  ``**``, lists, tuples, dicts, subscripts and slices, unary/binary operators, comparisons, ``and``/``or``, ``x if c
  else y``. Anything else (comprehensions, lambdas, f-strings, ``:=``, starred items) is compiled, as before;
* each operation is the one the compiled code performs (``operator.add`` is ``BINARY_OP +``, ``getattr`` is
  ``LOAD_ATTR`` ...), in the same order, with the same errors - a name neither in the locals, the globals nor
  their builtins raises ``NameError("name 'x' is not defined")``;
* where an op is traced, its location is what the compiled code's frame says: `_location.user_location` reads
  ``_pto_line`` from the innermost `_walk` frame, set just before the operation to the line CPython 3.11 puts on
  that instruction - an attribute load and a method call at the attribute's end line, anything else at the node's
  first line (`tests/emulator/test_trace_walk.py` checks this against compiled code over every expression of the
  corpora and the gym). Other Python versions put some instructions elsewhere, so there everything is compiled
  (`ENABLED`).
"""

from __future__ import annotations

import ast
import builtins
import operator
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["BIN", "CLASSES", "ENABLED", "MAX_ARGS", "MAX_NODES", "WALKS", "walk", "walkable"]

ENABLED = sys.version_info[:2] == (3, 11) and os.environ.get("PTO_FORGE_WALK") != "0"
"""the instruction locations `_walk` reproduces are CPython 3.11's; ``PTO_FORGE_WALK=0`` compiles every expression"""
WALKS = 2
"""evaluations of one expression by walking before it is compiled (a compile costs about five walks: ~40 us against
~8 us for a typical call here, so two walks - a rolled loop's first iteration and its rolled body - are cheaper, and
an expression evaluated more often is compiled on its third evaluation)"""
_MAX_DEPTH = 40
"""a more deeply nested expression is compiled (each level of the walk is a Python frame)"""
_MAX_ARGS = MAX_ARGS = 24
"""a call with more arguments is compiled: CPython stops treating ``obj.meth(...)`` as a method call (and moves its
location) from 30 stack items on"""

_BIN: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.MatMult: operator.matmul,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert, ast.Not: operator.not_,
}
_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_UNSET = object()


_LEAF = frozenset({ast.Name, ast.Constant})
CLASSES = frozenset({ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.List, ast.Tuple, ast.Dict, ast.Subscript,
                     ast.Slice, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp})
"""the node classes `walkable` takes (a `Call` of at most `_MAX_ARGS` arguments without ``**``, a `Dict` without ``**``,
a `BinOp` of a `_BIN` operator); `_trace_cache._Bound.expr` decides `walkable` with them while it walks an expression"""
MAX_NODES = _MAX_DEPTH + 1
"""an expression of at most this many nodes is nested at most `_MAX_DEPTH` deep"""
BIN = _BIN


def walkable(node: ast.expr) -> bool:
    """Whether every node of ``node`` is one `_walk` evaluates as the compiled expression would (and it is not nested
    so deep that walking it would need more Python frames than the compiled code needs).

    Why two walks: `_exact` tracks each node's depth (a tuple per node); an expression of at most ``_MAX_DEPTH + 1``
    nodes cannot be nested deeper than ``_MAX_DEPTH``, so this walk counts nodes instead and hands a larger one to
    `_exact` (session 48: ~310 bytecodes an expression of attn_softmax's first call, half of them the depths). The
    other rules are the same, in any order (the answer is whether all nodes pass): a ``*x`` is a `Starred` node,
    refused wherever it is."""
    stack: list[Any] = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    leaf, call_t, attr_t, list_t, tuple_t = _LEAF, ast.Call, ast.Attribute, ast.List, ast.Tuple
    left = MAX_NODES  # nodes this walk may still meet before only `_exact` can say
    while stack:
        n = pop()
        left -= 1
        if left < 0:
            return _exact(node)
        t = n.__class__
        if t in leaf:
            continue
        if t is call_t:
            args, kws = n.args, n.keywords
            if len(args) + len(kws) > _MAX_ARGS:
                return False
            push(n.func)
            extend(args)
            for k in kws:
                if k.arg is None:
                    return False
                push(k.value)
        elif t is attr_t:
            push(n.value)
        elif t is list_t or t is tuple_t:
            extend(n.elts)
        elif t is ast.BinOp:
            if type(n.op) not in _BIN:
                return False
            push(n.left)
            push(n.right)
        elif t is ast.Subscript:
            push(n.value)
            push(n.slice)
        elif t is ast.Slice:
            for x in (n.lower, n.upper, n.step):
                if x is not None:
                    push(x)
        elif t is ast.UnaryOp:
            push(n.operand)
        elif t is ast.Compare:
            push(n.left)
            extend(n.comparators)
        elif t is ast.BoolOp:
            extend(n.values)
        elif t is ast.IfExp:
            push(n.test)
            push(n.body)
            push(n.orelse)
        elif t is ast.Dict:
            if None in n.keys:
                return False
            extend(n.keys)
            extend(n.values)
        else:
            return False
    return True


def _exact(node: ast.expr) -> bool:
    """`walkable`, each node's depth checked against `_MAX_DEPTH`."""
    stack: list[tuple[Any, int]] = [(node, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        n, depth = pop()
        if depth > _MAX_DEPTH:
            return False
        t = type(n)
        if t is ast.Name or t is ast.Constant:
            continue
        kids: list[Any]
        if t is ast.Attribute:
            kids = [n.value]
        elif t is ast.Call:
            if len(n.args) + len(n.keywords) > _MAX_ARGS:
                return False
            kids = [n.func]
            for a in n.args:  # loops, not `any(<genexpr>)`: two generators per call node on a first call
                if type(a) is ast.Starred:
                    return False
                kids.append(a)
            for k in n.keywords:
                if k.arg is None:
                    return False
                kids.append(k.value)
        elif t is ast.List or t is ast.Tuple:
            if any(type(e) is ast.Starred for e in n.elts):
                return False
            kids = n.elts
        elif t is ast.Dict:
            if any(k is None for k in n.keys):
                return False
            kids = [*n.keys, *n.values]
        elif t is ast.Subscript:
            kids = [n.value, n.slice]
        elif t is ast.Slice:
            kids = [x for x in (n.lower, n.upper, n.step) if x is not None]
        elif t is ast.BinOp:
            if type(n.op) not in _BIN:
                return False
            kids = [n.left, n.right]
        elif t is ast.UnaryOp:
            kids = [n.operand]
        elif t is ast.Compare:
            kids = [n.left, *n.comparators]
        elif t is ast.BoolOp:
            kids = n.values
        elif t is ast.IfExp:
            kids = [n.test, n.body, n.orelse]
        else:
            return False
        depth += 1
        for k in kids:
            push((k, depth))
    return True


def walk(node: ast.expr, g: dict[str, Any], ns: dict[str, Any], file: str) -> Any:
    """The value of ``node`` (a `walkable` one) with locals ``ns`` and globals ``g`` - ``eval`` of its form compiled
    with file name ``file``, without compiling it."""
    b = g.get("__builtins__", builtins)
    return _walk(node, g, ns, b if type(b) is dict else b.__dict__, file)


def _outer(name: str, g: dict[str, Any], bi: dict[str, Any]) -> Any:
    """A name not in the locals: the globals', else the builtins' (``LOAD_NAME``)."""
    v = g.get(name, _UNSET)
    if v is _UNSET:
        v = bi.get(name, _UNSET)
        if v is _UNSET:
            raise NameError(f"name '{name}' is not defined", name=name)
    return v


_CONST, _NAME, _ATTR, _CALL = ast.Constant, ast.Name, ast.Attribute, ast.Call


def _value(a: Any, g: dict[str, Any], ns: dict[str, Any], bi: dict[str, Any], file: str) -> Any:
    """The value of ``a``: a name or a constant here (no operation, so no location to keep), anything else walked.
    The one place a name is looked up (``LOAD_NAME``: the locals, then `_outer`)."""
    t = type(a)
    if t is _NAME:
        v = ns.get(a.id, _UNSET)
        return _outer(a.id, g, bi) if v is _UNSET else v
    if t is _CONST:
        return a.value
    return _walk(a, g, ns, bi, file)


def _items(nodes: list[Any], g: dict[str, Any], ns: dict[str, Any], bi: dict[str, Any], file: str) -> list[Any]:
    """The values of ``nodes`` in order (most call arguments are names and constants: `_value` takes them without a
    walk)."""
    out = []
    for a in nodes:
        out.append(_value(a, g, ns, bi, file))
    return out


def _walk(n: Any, g: dict[str, Any], ns: dict[str, Any], bi: dict[str, Any],  # noqa: C901, PLR0911, PLR0912
          file: str) -> Any:
    # `_location.user_location` reads ``_pto_line`` (the line of the operation this frame is running, set just
    # before it) and ``file`` from this frame
    _pto_line = None
    t = type(n)
    if t is _CALL:
        f = n.func
        tf = type(f)
        if tf is _ATTR:  # a method call: looked up and called at the attribute's end line
            obj = _value(f.value, g, ns, bi, file)
            _pto_line = f.end_lineno
            fn = getattr(obj, f.attr)
            _pto_line = None
        else:
            fn = _value(f, g, ns, bi, file)
        args = _items(n.args, g, ns, bi, file) if n.args else ()
        if n.keywords:
            kw = {}
            for k in n.keywords:  # loops, not comprehensions: those would make this frame's arguments cells
                kw[k.arg] = _walk(k.value, g, ns, bi, file)
            _pto_line = f.end_lineno if tf is _ATTR else n.lineno
            return fn(*args, **kw)
        _pto_line = f.end_lineno if tf is _ATTR else n.lineno
        return fn(*args)
    if t is _NAME or t is _CONST:  # an expression that is one name (a builtin, or unbound: `_Interp.eval`)
        return _value(n, g, ns, bi, file)
    if t is _ATTR:
        obj = _walk(n.value, g, ns, bi, file)
        _pto_line = n.end_lineno
        return getattr(obj, n.attr)
    if t is ast.List:
        return _items(n.elts, g, ns, bi, file)
    if t is ast.Tuple:
        return tuple(_items(n.elts, g, ns, bi, file))
    if t is ast.BinOp:
        a = _walk(n.left, g, ns, bi, file)
        c = _walk(n.right, g, ns, bi, file)
        _pto_line = n.lineno
        return _BIN[type(n.op)](a, c)
    if t is ast.Subscript:
        obj = _walk(n.value, g, ns, bi, file)
        key = _walk(n.slice, g, ns, bi, file)
        _pto_line = n.lineno
        return obj[key]
    if t is ast.Slice:
        return slice(None if n.lower is None else _walk(n.lower, g, ns, bi, file),
                     None if n.upper is None else _walk(n.upper, g, ns, bi, file),
                     None if n.step is None else _walk(n.step, g, ns, bi, file))
    if t is ast.UnaryOp:
        a = _walk(n.operand, g, ns, bi, file)
        _pto_line = n.lineno
        return _UNARY[type(n.op)](a)
    if t is ast.Compare:
        a = _walk(n.left, g, ns, bi, file)
        last = len(n.ops) - 1
        for i, (op, right) in enumerate(zip(n.ops, n.comparators, strict=True)):
            c = _walk(right, g, ns, bi, file)
            _pto_line = n.lineno
            r = _CMP[type(op)](a, c)
            if i == last:
                return r
            if not r:  # a chain stops at the first false link and is that value
                return r
            _pto_line = None
            a = c
    if t is ast.BoolOp:
        is_and = type(n.op) is ast.And
        last = len(n.values) - 1
        for i, e in enumerate(n.values):
            v = _walk(e, g, ns, bi, file)
            if i == last:
                return v
            _pto_line = n.lineno
            if bool(v) is not is_and:  # `and` stops at the first false value, `or` at the first true one
                return v
            _pto_line = None
    if t is ast.IfExp:
        c = _walk(n.test, g, ns, bi, file)
        _pto_line = n.lineno
        taken = bool(c)
        _pto_line = None
        return _walk(n.body if taken else n.orelse, g, ns, bi, file)
    if t is ast.Dict:
        pairs = []
        for k, v in zip(n.keys, n.values, strict=True):
            pairs.append((_walk(k, g, ns, bi, file), _walk(v, g, ns, bi, file)))
        _pto_line = n.lineno  # the keys are hashed once every item is evaluated (``BUILD_MAP``)
        out = {}
        for k, v in pairs:
            out[k] = v
        return out
    raise TypeError(f"not a walkable expression: {type(n).__name__}")  # `walkable` said no: never reached
