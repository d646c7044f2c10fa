"""Which Python ``range`` loops of a kernel body may be traced once as a device loop (issue #31).

The interpreter unrolls a ``for t in range(n)`` at trace time, as the real parser does: every iteration is traced,
lowered, prepared and executed as its own copy of the body (``attn_softmax``: 16 tiles x 3 passes, ~640 ops for
four calls). When the iterations differ only in the value of ``t``, the same program can be traced *once* with
``t`` as a device loop index: the device runs the same ops on the same data in the same order (the same bits), and
tracing / lowering / preparing cost one copy of the body. A loop independent across iterations then runs batched.

That is only the same program when nothing but ``t`` differs between iterations. This module decides it from the
loop's source, conservatively (a loop it refuses is unrolled as before):

* **No Python state carried from one iteration to the next but tensors**: a name the body reads before assigning
  it (``h = h / h.sum(...)``: the previous iteration's value) must hold an op's output tensor and be assigned on
  every path, never from ``t``; the interpreter hands it from one iteration to the next through a device ``carry``
  (`_k_core.build_carry`: the same array, nothing copied). Every other name the body assigns is assigned before
  it is read. The body has no ``+=`` on a name, no ``del``, no nested ``for`` / function.
* **``t`` is used as an integer only through ``+ - * // %``** (Python's floor semantics on both sides), comparisons
  in an ``if`` test (decided per iteration either way, see `fold`), ``.min() / .max()``, and as an argument of
  ``pypto`` calls: the operations on which a `SymbolicScalar` and a Python int agree. ``t / 2`` (a float for an
  int, a floor division for a symbol), ``~t``, indexing a list with ``t``, ``str(t)`` or calling a Python function
  with it are refused. The same holds for every name computed from ``t``.
* **No Python side effects**: calls go to ``pypto`` (not its loop constructs), tensor methods, or ``min`` / ``max``
  / ``abs`` / ``len`` / ``int`` / ``float`` with arguments not computed from ``t``; helper functions and other
  Python callables are refused (one traced call could not stand for n calls of a function with effects).

What the interpreter checks while tracing the rolled body (`_trace_interp`): the tile options the body leaves are
those it started from (a fixpoint, so every iteration traces the same ops); the trace emits no warning and raises
no error (the unrolled trace is authoritative for both: the kernel is traced again unrolled, see `Unroll`); a
name the body assigned and the loop variable are unbound after the rolled loop, and reading one retraces the
kernel unrolled (after an unrolled loop they hold the last iteration's value).
"""

from __future__ import annotations

import ast
import builtins
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from runtime.emulator._astutil import push_children
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator.device._expr import BIN_FUNCS

__all__ = ["MIN_TRIPS", "Plan", "Unroll", "fold", "plan_of", "range_sites"]

MIN_TRIPS = 3
"""A range of fewer iterations is unrolled: one traced iteration plus a loop of one is no saving."""

_PYPTO_REFUSED = frozenset({"loop", "loop_unroll", "is_loop_begin", "is_loop_end", "cond", "function", "jit"})
"""pypto names whose meaning depends on being called with a device loop index or inside a device loop"""
_PYPTO_SCALAR = frozenset({"ceildiv"})
"""pypto functions that return an integer computed from their arguments (tainted when an argument is)"""
_BUILTINS_OK = frozenset({"min", "max", "abs", "len", "int", "float"})
_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
_CMP_OPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


class Unroll(BaseException):  # noqa: N818 - a control-flow signal, not an error
    """Raised while tracing a rolled loop, or when a name it unbound is read: the kernel is traced again with this
    loop unrolled. A BaseException so that the interpreter's ``except Exception`` (which turns Python errors in a
    kernel expression into located kernel errors) lets it through."""

    def __init__(self, parsed: Any, node: ast.For, why: str) -> None:
        super().__init__(why)
        self.parsed = parsed
        self.node = node
        self.why = why


class _No(Exception):  # noqa: N818
    pass


@dataclass(frozen=True, slots=True)
class Plan:
    """A range loop that may be rolled: its loop variable, the names its body assigns, and the outer names whose
    values must be checked at each call: ``(name, what)``, what = "pypto" (a pypto module), "tensor", "callee" (either:
    ``pypto.add(...)`` and ``x.sum(...)`` look alike) or "builtin" (the builtin of that name)."""

    var: str
    assigned: frozenset[str]
    outer: tuple[tuple[str, str], ...]
    carried: frozenset[str] = frozenset()
    """names read before the body assigns them: tensors carried from one iteration to the next"""

    def callees_ok(self, lookup: Callable[[str], Any], is_tensor: Callable[[Any], bool]) -> bool:
        """The outer names the body calls through are what the plan assumed (a pypto module, a tensor, a builtin)."""
        for name, want in self.outer:
            v = lookup(name)
            if want == "builtin":
                ok = v is getattr(builtins, name, None)
            else:
                ok = want != "pypto" and is_tensor(v) or want != "tensor" and _is_pypto(v)
            if not ok:
                return False
        return True


def _is_pypto(v: Any) -> bool:
    """``v`` is the pypto module or one of its submodules (the emulator's, once installed)."""
    return isinstance(v, types.ModuleType) and v.__name__.split(".")[0] == "pypto"


def plan_of(node: ast.For, cache: dict[Any, Any]) -> Plan | None:
    """The static part of the decision for one ``for`` statement (kept in the parsed kernel's ``cache``)."""
    key = ("roll", node)
    if key in cache:
        return cache[key]
    try:
        plan: Plan | None = _Analysis(node).plan()
    except _No:
        plan = None
    cache[key] = plan
    return plan


class _Analysis:
    def __init__(self, node: ast.For) -> None:
        if not isinstance(node.target, ast.Name) or node.orelse:
            raise _No
        self.var = node.target.id
        self.body = node.body
        self.assigned: set[str] = set()
        for s in node.body:
            self._collect(s)
        if self.var in self.assigned:
            raise _No
        self.outer: dict[str, str] = {}
        self.carried: set[str] = set()
        self.hot: set[str] = set()
        """names some statement assigns a value computed from the loop variable"""
        self.stored: set[str] = set()
        """names stored into (``x[...] = v``)"""

    def plan(self) -> Plan:
        defined, _ = self._block(self.body, set(), {self.var})
        c = self.carried
        if c and (not c <= defined or c & self.hot or c & self.stored):
            raise _No  # a carried name left unassigned on some path, holding an integer, or stored into
        return Plan(self.var, frozenset(self.assigned), tuple(sorted(self.outer.items())), frozenset(c))

    # what the body assigns -------------------------------------------------------------------------
    def _collect(self, s: ast.stmt) -> None:
        t = type(s)
        if t is ast.Assign:
            for tgt in s.targets:  # type: ignore[attr-defined]
                self._targets(tgt)
        elif t is ast.If:
            for x in s.body + s.orelse:  # type: ignore[attr-defined]
                self._collect(x)
        elif t not in (ast.Expr, ast.Pass):
            raise _No  # +=, del, assert, nested for / def, annotated assignment: unrolled

    def _targets(self, tgt: ast.expr, top: bool = True) -> None:
        if isinstance(tgt, ast.Name):
            self.assigned.add(tgt.id)
        elif isinstance(tgt, ast.Tuple | ast.List):
            for e in tgt.elts:
                self._targets(e, False)
        elif top and isinstance(tgt, ast.Subscript) and isinstance(tgt.value, ast.Name):
            pass  # a store into a tensor (`acc[:] = ...`): device state, the same in both forms
        else:
            raise _No  # attributes, starred, a store inside an unpacking

    # statements in order, with the names defined so far and the names computed from the loop variable ---
    def _block(self, stmts: list[ast.stmt], defined: set[str], tainted: set[str]) -> tuple[set[str], set[str]]:
        for s in stmts:
            defined, tainted = self._stmt(s, defined, tainted)
        return defined, tainted

    def _stmt(self, s: ast.stmt, defined: set[str], tainted: set[str]) -> tuple[set[str], set[str]]:
        if isinstance(s, ast.Assign):
            hot = self._expr(s.value, defined, tainted)
            defined, tainted = set(defined), set(tainted)
            for tgt in s.targets:
                if isinstance(tgt, ast.Subscript):
                    if hot:
                        raise _No  # a tensor store of a value computed from t: not a tensor
                    self._read(tgt.value, defined, tainted)  # type: ignore[arg-type]
                    self.stored.add(tgt.value.id)  # type: ignore[attr-defined]
                    if tgt.value.id not in self.assigned:  # type: ignore[attr-defined]
                        self._need(tgt.value.id, "tensor")  # type: ignore[attr-defined]
                    if self._expr(tgt.slice, defined, tainted):
                        raise _No
                    continue
                # a plain name (nearly every target): itself, without `ast.walk`'s generators (60 of them on
                # attn_softmax's first call); a tuple or list: every name in it, in `ast.walk`'s order
                for n in ((tgt,) if type(tgt) is ast.Name else ast.walk(tgt)):
                    if isinstance(n, ast.Name):
                        defined.add(n.id)
                        (tainted.add if hot else tainted.discard)(n.id)
                        if hot:
                            self.hot.add(n.id)
            return defined, tainted
        if isinstance(s, ast.Expr):
            if not isinstance(s.value, ast.Call):
                raise _No
            self._expr(s.value, defined, tainted)
            return defined, tainted
        if isinstance(s, ast.If):
            self._expr(s.test, defined, tainted, test=True)
            d1, t1 = self._block(s.body, set(defined), set(tainted))
            d2, t2 = self._block(s.orelse, set(defined), set(tainted))
            return d1 & d2, t1 | t2
        if isinstance(s, ast.Pass):
            return defined, tainted
        raise _No

    def _read(self, n: ast.Name, defined: set[str], tainted: set[str]) -> bool:
        if n.id in self.assigned and n.id not in defined:
            self.carried.add(n.id)  # read before this iteration assigned it: the previous iteration's value
        return n.id == self.var or n.id in tainted

    def _expr(self, e: ast.expr, defined: set[str], tainted: set[str], *, test: bool = False) -> bool:
        """Whether ``e`` is computed from the loop variable; raises `_No` on a use the two forms disagree on."""
        t = type(e)
        if t is ast.Name:
            return self._read(e, defined, tainted)  # type: ignore[arg-type]
        if t is ast.Constant:
            return False
        if t is ast.BinOp:
            hot = self._expr(e.left, defined, tainted) | self._expr(e.right, defined, tainted)  # type: ignore
            if hot and not isinstance(e.op, _INT_OPS):  # type: ignore[attr-defined]
                raise _No
            return hot
        if t is ast.UnaryOp:
            hot = self._expr(e.operand, defined, tainted)  # type: ignore[attr-defined]
            if hot and not isinstance(e.op, ast.USub | ast.UAdd):  # type: ignore[attr-defined]
                raise _No
            return hot
        if t is ast.Compare:
            parts = [e.left, *e.comparators]  # type: ignore[attr-defined]
            hot = any([self._expr(x, defined, tainted) for x in parts])
            if hot and (not test or len(e.ops) != 1 or not isinstance(e.ops[0], _CMP_OPS)):  # type: ignore
                raise _No
            return hot
        if t is ast.Call:
            return self._call(e, defined, tainted)  # type: ignore[arg-type]
        if t is ast.Attribute:
            if self._expr(e.value, defined, tainted):  # type: ignore[attr-defined]
                raise _No
            return False
        if t is ast.Subscript:
            if self._expr(e.value, defined, tainted) or self._expr(e.slice, defined, tainted):  # type: ignore
                raise _No
            return False
        if t in (ast.List, ast.Tuple):
            return any([self._expr(x, defined, tainted) for x in e.elts])  # type: ignore[attr-defined]
        if t is ast.Slice:
            return any([self._expr(x, defined, tainted) for x in (e.lower, e.upper, e.step)  # type: ignore
                        if x is not None])
        if t is ast.Dict:
            parts = [x for x in e.keys if x is not None] + list(e.values)  # type: ignore[attr-defined]
            if any([self._expr(x, defined, tainted) for x in parts]):
                raise _No
            return False
        raise _No  # bool ops, conditional expressions, f-strings, comprehensions, lambdas, starred, ...

    def _call(self, e: ast.Call, defined: set[str], tainted: set[str]) -> bool:
        hot_args = False
        for a in e.args:
            if isinstance(a, ast.Starred):
                raise _No
            hot_args |= self._expr(a, defined, tainted)
        for k in e.keywords:
            if k.arg is None:
                raise _No
            hot_args |= self._expr(k.value, defined, tainted)
        f = e.func
        if isinstance(f, ast.Name):
            if f.id in self.assigned or f.id == self.var or f.id not in _BUILTINS_OK or hot_args:
                raise _No  # a helper or Python callable: effects and int/symbol behaviour unknown
            self._need(f.id, "builtin")
            return False
        if not isinstance(f, ast.Attribute) or f.attr in _PYPTO_REFUSED:
            raise _No
        recv = f.value
        if self._expr(recv, defined, tainted):
            if f.attr not in ("min", "max") or hot_args:
                raise _No
            return True  # `(n - t * 16).min(16)`: min/max of integers, the same for a symbol
        if isinstance(recv, ast.Name) and recv.id not in self.assigned:
            self._need(recv.id, "callee")  # `pypto.add(...)`, or `x.sum(...)` on a tensor bound before the loop
            return hot_args and f.attr in _PYPTO_SCALAR
        if isinstance(recv, ast.Attribute):
            root: ast.expr = recv
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id not in self.assigned:
                self._need(root.id, "pypto")  # `pypto.experimental.f(...)`
                return hot_args and f.attr in _PYPTO_SCALAR
            raise _No
        if hot_args:
            raise _No  # a method of a value the body computed, given a value computed from t
        return False  # a method of a tensor the body computed (`r.sum(...)`)

    def _need(self, name: str, what: str) -> None:
        if self.outer.get(name, what) != what:
            what = "pypto"  # called both as a module and as a tensor: only a module can be both
        self.outer[name] = what


def fold(test: Any, loop: Any, values: range) -> bool | None:
    """The branch an ``if`` on ``test`` takes in every iteration of a rolled loop, when it is the same for all of
    ``values`` (the rolled iterations) and ``test`` reads no other symbol; else None (a runtime branch).

    attn_softmax's ``if t == 0: acc[:] = x else: acc[:] = max(acc, x)``: the first iteration is traced unrolled,
    so in the rolled ones ``t == 0`` is always false - the rolled body is one path, which each unrolled iteration
    also took, instead of two paths and a guard per iteration."""
    if values:
        got = _fold_closed(test, loop, values)
        if got is not _OPEN:
            return got
    try:
        first = None
        for v in values:
            taken = bool(_value_at(test, loop, v))
            if first is None:
                first = taken
            elif taken != first:
                return None  # decided per iteration: a runtime branch
    except _No:
        return None
    except (ArithmeticError, ValueError, TypeError):
        return None  # e.g. a division by zero in some iteration: the device reports it
    return first


_OPEN: Any = object()
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
"""``c OP i`` is ``i FLIP[OP] c``"""


def _int_of(x: Any) -> Any:
    """``x``'s value when `_value_at` takes it as the same int in every iteration, else None."""
    if type(x) is SymbolicScalar:
        v = x._value
        return v if type(v) is int else None
    return int(x) if type(x) is int or type(x) is bool else None


def _fold_closed(test: Any, loop: Any, values: range) -> Any:
    """`fold` of ``i OP c`` (or ``c OP i``) - the loop's index against an int, ``OP`` a comparison - over a non-empty
    ``values``, from the range's ends and membership; `_OPEN` for any other test (`fold` evaluates it per iteration).

    Why: a program derived for another trip count re-decides each folded ``if`` over all its rolled iterations
    (`_trace_cache.retrip`); attn_softmax's ``t == 0`` in a 16-tile call was 15 evaluations of the expression, ~1.5 K
    bytecodes, twice. Each answer is what evaluating ``bool(BIN_FUNCS[OP](i, c))`` at every value gives."""
    if type(test) is not SymbolicScalar or test._value is not None or test._kind != "bin":
        return _OPEN
    op = str(test._op)
    if op not in _FLIP:
        return _OPEN
    a, b = test._a, test._b
    if type(a) is SymbolicScalar and a._value is None and a._kind == "idx" and a._loop is loop:
        c = _int_of(b)
    elif type(b) is SymbolicScalar and b._value is None and b._kind == "idx" and b._loop is loop:
        c, op = _int_of(a), _FLIP[op]
    else:
        return _OPEN
    if c is None:
        return _OPEN
    lo, hi = (values[0], values[-1]) if values.step > 0 else (values[-1], values[0])
    if op == "==" or op == "!=":
        if c not in values:
            return op == "!="
        return (op == "==") if len(values) == 1 else None
    if op == "<":
        return True if hi < c else False if lo >= c else None
    if op == "<=":
        return True if hi <= c else False if lo > c else None
    if op == ">":
        return True if lo > c else False if hi <= c else None
    return True if lo >= c else False if hi < c else None  # >=


_INTROSPECTION = frozenset({"locals", "vars", "globals", "eval", "exec", "compile", "__import__", "getattr", "dir",
                            "_getframe", "currentframe", "f_locals", "f_back", "stack", "getouterframes"})
"""names (or attributes) through which Python code reads a variable without naming it"""


def range_sites(fdef: ast.FunctionDef, params: list[str], cache: dict[Any, Any],
                source: str | None = None) -> dict[ast.For, str]:
    """The ``for`` statements of a kernel whose iterator is ``range(p)`` for a non-tensor parameter ``p`` that the
    body reads nowhere else, by statement -> ``p``.

    Why: attn_softmax's wrapper passes its tile count ``n_s_tiles`` as an int, and its four gym calls (1, 2, 8 and 16
    tiles) were four traces of one kernel. When ``p`` is read only as the bound of range loops that roll (`plan_of`),
    a trace for one value of ``p`` differs from the trace for another only in the trip count of those device loops,
    so `_frontend` derives the program of another value from it (`_trace_cache.retrip`) instead of tracing again.
    Conservative: a parameter that is assigned, deleted, declared ``global`` / ``nonlocal``, read in any other
    position (an expression, a comprehension's ``range(p)``, a helper's argument, ``range(p, ...)``, a loop that
    cannot roll), or a body that could read it without naming it (``locals()``, ``eval``, frame introspection)
    gives no site. ``cache``: the parsed kernel's (`plan_of`); ``source``: the text ``fdef`` was parsed from, when
    known (`_by_text` may then answer without the walk)."""
    wanted = set(params)
    if not wanted:
        return {}
    if source is not None:
        got = _by_text(fdef, wanted, cache, source)
        if got is not None:
            return got
    fors: dict[ast.For, str] = {}
    ok: set[int] = set()
    reads: list[ast.Name] = []
    stack: list[ast.AST] = list(fdef.body)  # one walk (as `_trace_cache.body_reads`): a kernel's first call pays it
    pop, push = stack.pop, stack.append
    # node classes compared by identity: a parsed tree holds the `ast` classes themselves, never subclasses (five
    # isinstance calls per node were a fifth of this walk)
    name_t, attr_t, for_t, arg_t, glob_t, nonl_t = ast.Name, ast.Attribute, ast.For, ast.arg, ast.Global, ast.Nonlocal
    while stack:
        n: Any = pop()  # narrowed by class identity below (mypy does not follow `t is name_t`)
        t = n.__class__
        if t is name_t:
            if n.id in wanted:
                reads.append(n)
            elif n.id in _INTROSPECTION:
                return {}
            continue
        if t is attr_t:
            if n.attr in _INTROSPECTION:
                return {}
        elif t is for_t:
            it = n.iter
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and \
                    len(it.args) == 1 and not it.keywords and isinstance(a := it.args[0], ast.Name) and a.id in wanted:
                fors[n] = a.id
                ok.add(id(a))
        elif t is arg_t:
            wanted.discard(n.arg)  # a nested function's or lambda's parameter of that name
        elif t is glob_t or t is nonl_t:
            wanted.difference_update(n.names)
        push_children(n, push)
    if not fors:
        return {}
    for r in reads:
        if id(r) not in ok:
            wanted.discard(r.id)  # read (or written) anywhere else
    for f, p in fors.items():
        if p in wanted and plan_of(f, cache) is None:
            wanted.discard(p)  # a loop over range(p) that does not roll: its trace depends on p
    return {f: p for f, p in fors.items() if p in wanted}


_FLAT_STMTS = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Pass, ast.Delete, ast.Assert})
"""statements that hold no statement (and none of them is a ``for``, ``global`` or ``nonlocal``)"""


def _by_text(fdef: ast.FunctionDef, wanted: set[str], cache: dict[Any, Any], source: str) -> dict[ast.For, str] | None:
    """`range_sites`' answer found from the statements and the source text, or None: only the walk can tell.

    Why: the walk visits every node of the body (~22 K of attn_softmax's ~262 K bytecodes in its first call, session
    48), to prove that each ``p`` is read nowhere but in its ``range(p)`` loops. The text proves it at C speed: every
    ``Name`` / ``arg`` / ``global`` of ``p`` in the tree is the characters of ``p`` in ``source`` (an ASCII source: no
    NFKC normalisation of identifiers), and ``str.count`` finds each of those (tokens do not overlap), so when ``p``
    occurs in the text only as often as it has ``range(p)`` loops, plus once for the parameter in the signature, the
    loops' bounds are its only reads in the body. Likewise a source without any `_INTROSPECTION` name as a substring
    has none in the tree. Whenever a ``p`` with a loop occurs more often (a comment or a longer name is enough), an
    introspection name appears anywhere, the source is not ASCII, or a statement other than the plain ones, ``if``
    and ``for`` is met (a nested ``def``, ``global``): None, and the walk decides - so an answer here is the walk's."""
    if not source.isascii():
        return None
    for name in _INTROSPECTION:
        if name in source:
            return None
    fors: dict[ast.For, str] = {}
    stack: list[Any] = list(fdef.body)
    pop, extend, flat, for_t, if_t = stack.pop, stack.extend, _FLAT_STMTS, ast.For, ast.If
    while stack:
        n = pop()
        t = n.__class__
        if t in flat:
            continue
        if t is for_t:
            it = n.iter
            if it.__class__ is ast.Call and it.func.__class__ is ast.Name and it.func.id == "range" and \
                    len(it.args) == 1 and not it.keywords and (a := it.args[0]).__class__ is ast.Name and a.id in wanted:
                fors[n] = a.id
        elif t is not if_t:
            return None
        extend(n.body)
        extend(n.orelse)
    if not fors:
        return {}
    sig = fdef.args
    declared = {x.arg for x in (*sig.posonlyargs, *sig.args, *sig.kwonlyargs)}
    loops: dict[str, int] = {}
    for p in fors.values():
        loops[p] = loops.get(p, 0) + 1
    for p, n in loops.items():
        if source.count(p) != n + (p in declared):
            return None  # read elsewhere, or merely mentioned: the walk says which
    for f, p in fors.items():
        if p in wanted and plan_of(f, cache) is None:
            wanted.discard(p)  # a loop over range(p) that does not roll: its trace depends on p
    return {f: p for f, p in fors.items() if p in wanted}


def _value_at(x: Any, loop: Any, v: int) -> int:
    if not isinstance(x, SymbolicScalar):
        if isinstance(x, bool | int):
            return int(x)
        raise _No
    if x._value is not None:
        return x._value
    if x._kind == "idx" and x._loop is loop:
        return v
    if x._kind == "bin":
        return BIN_FUNCS[str(x._op)](_value_at(x._a, loop, v), _value_at(x._b, loop, v))
    raise _No  # a dynamic dim, another loop's index, a tensor read
