"""The kernel-body interpreter (the PTO parser's statement subset) and the loop iterables.

Statements are interpreted one by one over a name dict; expressions are evaluated with Python ``eval`` over
the kernel's globals/closure and that dict, as with the real parser (so whether a comprehension sees kernel
locals follows the Python version, as there: not on 3.11, yes from 3.12 on - see `_frontend`). ``for`` over
``pypto.loop`` traces the loop once per control path, restoring the names before each path; ``for`` over
range/list/tuple unrolls at trace time; ``if`` on a SymbolicScalar records a runtime branch.
"""

from __future__ import annotations

import ast
import builtins
import contextvars
import inspect
import logging
import operator
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import pyast
from runtime.emulator import _trace_walk
from runtime.emulator._astutil import attr_chain, nodes
from runtime.emulator._errors import EmulatorError, py_error
from runtime.emulator._executor import ROLLED_PREFIX
from runtime.emulator._ir import LoopNode, Region
from runtime.emulator._roll import MIN_TRIPS, Plan, Unroll, fold, plan_of
from runtime.emulator._source import dedent, quick_block
from runtime.emulator._symbolic import SymbolicScalar, sym_max, sym_min
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import (
    LoopInfo,
    RecordIfBranch,
    Tracer,
    _loop_args,
    loop_unroll_iter,
    new_scope,
    require_tracer,
)

__all__ = ["cond", "loop", "loop_unroll", "trace_rolling"]


log = logging.getLogger(__name__)

_UNSUPPORTED_MSG = "{} is not supported by the PTO parser yet. Please check the documentation for supported " \
                   "Python features."
_RETURN_MSG = "Return statements are not allowed. Use an out parameter and out.move(...) to write results instead."
_RET_ANN_MSG = "Return annotation is not allowed. Use an out parameter and out.move(...) inside the kernel instead."
_SUPPORTED = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.For, ast.If, ast.Delete, ast.Assert,
              ast.Pass, ast.FunctionDef)
_STMT_FIELDS: dict[type, tuple[str, ...]] = {
    ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.FunctionDef: ("body",),
    ast.Assign: (), ast.AugAssign: (), ast.AnnAssign: (), ast.Expr: (), ast.Delete: (), ast.Assert: (), ast.Pass: (),
}
"""supported statement class -> its fields that hold statements (`_Parsed.check_body`): the ASDL grammar's
``stmt*`` fields of each; the others hold expressions and, a ``def``'s ``args``, nodes without statements"""
_PLAIN_STMTS = frozenset({ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Delete, ast.Assert, ast.Pass})
"""supported statements `_check_node` has nothing to say about (it checks raise, return, unsupported statements,
for-else, a nested def's return annotation and an assigned lambda) and that hold no statement: `check_body` passes
over them, and over an assignment of anything but a lambda (session 48)"""
_INTERP: contextvars.ContextVar[_Interp | None] = contextvars.ContextVar("pypto_emulator_interp", default=None)

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.MatMult: operator.matmul,
}
_ORD = ["1st", "2nd", "3rd"]


def _ordinal(i: int) -> str:
    return _ORD[i] if i < 3 else f"{i + 1}th"


class _KeyGrabber:
    def __getitem__(self, key: Any) -> Any:
        return key


_GRAB = _KeyGrabber()


# ---------------------------------------------------------------------------------------------------
# parsing


class _Parsed:
    """The parsed source of a kernel/helper function."""

    def __init__(self, func: Callable, kind: str) -> None:
        self.func = func
        self.name = func.__name__
        got = _quick_parse(func)
        try:
            self.file = inspect.getsourcefile(func) or func.__code__.co_filename
            if got is None:
                lines, start = inspect.getsourcelines(func)
        except (OSError, TypeError) as exc:
            raise py_error("RuntimeError", f"cannot read the source of {kind} '{func.__name__}': {exc}") from None
        if got is None:
            # blank lines in front give every node its line in the file (ast.increment_lineno walks the whole tree)
            tree = pyast.parse("\n" * (start - 1) + dedent(lines))
            text = "".join(lines)
        else:
            tree, text = got
        fdefs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        if not fdefs:
            raise py_error("TypeError", f"{kind} decorator can only be used on functions")
        self.fdef: ast.FunctionDef = fdefs[0]  # type: ignore[assignment]
        self.source = text
        """the text parsed (the function's block, its identifiers as in the tree: `_roll.range_sites` counts them)"""
        self.kind = kind
        self.codes: dict[Any, Any] = {}
        self.no_roll: set[ast.For] = set()
        """range loops of this body that are always unrolled (a rolled trace of them was refused, see `_roll`)"""
        self.range_sites: dict[ast.For, str] = {}
        """``for`` statements over ``range(p)`` of a non-tensor parameter read nowhere else (`_roll.range_sites`; set
        by `_frontend` for a jit kernel)"""
        self.simple: dict[ast.expr, tuple[str, tuple[str, ...]] | None] = {}
        """expression node -> its `_name_chain` (evaluated without compiling it)"""
        self.walks: dict[ast.expr, int] = {}
        """expression node -> how many times `_trace_walk` evaluated it, -1 when it cannot (compiled)"""
        self._split_memo: tuple | None = None
        """`split_params`' last answer and what it was computed from"""

    def err(self, kind: str, msg: str, node: ast.AST | None = None) -> EmulatorError:
        return py_error(kind, msg, file=self.file, line=getattr(node, "lineno", self.fdef.lineno))

    def check_body(self) -> None:
        """Reject statements the PTO parser does not support (anywhere in the body)."""
        # one walk per statement, breadth first as ast.walk (the first error found is the same); a node is "in an
        # if" when it lies in the body or else branch of an `if`, at any depth. Every check is about a statement,
        # and no statement lies inside an expression (a lambda or comprehension holds expressions only), so the
        # walk does not enter expressions: the statements it meets, and their order, are those of the full walk
        # (most of a kernel's nodes are expressions: this is ~5x fewer nodes). Of the statements that pass
        # `_check_node`, only ``if``, ``for`` and a nested ``def`` hold statements, all in their ``body`` /
        # ``orelse`` lists (`_STMT_FIELDS`); what else they hold (an ``arguments`` node, its ``arg`` nodes) holds no
        # statement and no check looks at it, so those are not queued - leaving out a subtree without statements
        # keeps every statement's place in the breadth-first order (session 40: the field-by-field scan of every
        # statement, and a generator per list field, were ~40 us of a kernel's first call). A statement class
        # not in `_STMT_FIELDS` that passes the checks is scanned field by field, as before.
        fields_of, if_t, plain, assign_t, lambda_t = _STMT_FIELDS, ast.If, _PLAIN_STMTS, ast.Assign, ast.Lambda
        for stmt in self.fdef.body:
            queue: list[tuple[ast.AST, bool]] = [(stmt, False)]
            i = 0
            while i < len(queue):
                node, in_if = queue[i]
                i += 1
                t = type(node)
                if t in plain or t is assign_t and type(node.value) is not lambda_t:  # type: ignore[attr-defined]
                    continue  # no check is about it, and it holds no statement
                self._check_node(node, in_if)
                fields = fields_of.get(t)
                if fields is None:
                    self._queue_children(node, in_if, queue)
                    continue
                inner = in_if or t is if_t
                for f in fields:
                    for x in getattr(node, f):
                        queue.append((x, inner))

    @staticmethod
    def _queue_children(node: ast.AST, in_if: bool, queue: list[tuple[ast.AST, bool]]) -> None:
        """Queue every child of ``node`` that is not an expression (`check_body`'s walk, for a class it has no
        fields for)."""
        expr = ast.expr
        branches = type(node) is ast.If
        for f in node._fields:
            v = getattr(node, f, None)
            inner = in_if or (branches and f in ("body", "orelse"))
            if type(v) is list:
                queue.extend((x, inner) for x in v if isinstance(x, ast.AST) and not isinstance(x, expr))
            elif isinstance(v, ast.AST) and not isinstance(v, expr):
                queue.append((v, inner))

    def _check_node(self, node: ast.AST, in_if: bool) -> None:
        if isinstance(node, ast.Raise) and in_if:
            return  # the frontend prunes untaken compile-time branches; executing it fails (exec_stmt)
        if isinstance(node, ast.Return):
            raise self.err("ValueError", _RETURN_MSG, node)
        if isinstance(node, ast.stmt) and not isinstance(node, _SUPPORTED):
            raise self.err("ParserError", _UNSUPPORTED_MSG.format(type(node).__name__), node)
        if isinstance(node, ast.For) and node.orelse:
            raise self.err("NotImplementedError", "For-else clauses are not supported. Please remove the "
                           "else branch.", node)
        if isinstance(node, ast.FunctionDef) and node.returns is not None:
            raise self.err("ValueError", "Return annotation is not allowed in nested functions. Use an "
                           "out parameter instead.", node)
        if type(node) is ast.Assign and type(node.value) is ast.Lambda:
            self._check_lambda_calls(node)

    def _check_lambda_calls(self, node: ast.Assign) -> None:
        """``g = lambda t: ...`` and then ``g(x)`` in a kernel body: the PTO parser looks a called local name up as a
        function definition and fails on the assignment (s29 crosscheck, pypto 0.2.0: ``'Assign' object has no
        attribute 'decorator_list'``); a lambda called in place, or handed to ``max(key=...)``, parses. Only a body
        with such an assignment pays for this walk of its expressions."""
        names = {t.id for t in node.targets if type(t) is ast.Name}
        for n in ast.walk(self.fdef):
            if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id in names:
                raise self.err("ParserError", "'Assign' object has no attribute 'decorator_list' (the lambda assigned "
                               f"to '{n.func.id}' at line {node.lineno} is called here: the PTO parser takes a called "
                               "local name for a function definition - write a nested def, or call the lambda in "
                               "place)", n)

    def split_params(self) -> tuple[list[tuple[str, Any]], list[inspect.Parameter]]:
        """(tensor params with annotation objects, non-tensor params) with the signature rules of §1.2.

        Kept while the function's defaults and annotations are the same objects (``inspect.signature`` costs
        ~20-40 us and every kernel call asks): a caller that replaces them gets a fresh answer."""
        f = self.func
        anns = getattr(f, "__annotations__", {})
        memo = self._split_memo
        if memo is not None:
            d, kd, items, got = memo
            if d is f.__defaults__ and kd is f.__kwdefaults__ and len(items) == len(anns) and \
                    all(k in anns and anns[k] is v for k, v in items):
                return list(got[0]), list(got[1])
        tensors, others = self._split_params()
        self._split_memo = (f.__defaults__, f.__kwdefaults__, tuple(anns.items()), (tuple(tensors), tuple(others)))
        return tensors, others

    def _split_params(self) -> tuple[list[tuple[str, Any]], list[inspect.Parameter]]:
        fd = self.fdef
        a = fd.args
        if a.vararg is not None:
            raise self.err("NotImplementedError", "Variable-length arguments (*args) are not supported in kernel "
                           "signatures.", fd)
        if a.kwarg is not None:
            raise self.err("NotImplementedError", "Variable keyword arguments (**kwargs) are not supported in "
                           "kernel signatures.", fd)
        if a.kwonlyargs:
            raise self.err("NotImplementedError", "Keyword-only arguments are not supported in kernel "
                           "signatures.", fd)
        if a.posonlyargs:
            raise self.err("NotImplementedError", "Positional-only arguments are not supported in kernel "
                           "signatures.", fd)
        if fd.returns is not None:
            msg = _RET_ANN_MSG if self.kind == "jit" else \
                "Return annotation is not allowed in nested functions. Use an out parameter instead."
            raise self.err("ValueError", msg, fd)
        sig = inspect.signature(self.func)
        anns = getattr(self.func, "__annotations__", {})
        tensors: list[tuple[str, Any]] = []
        others: list[inspect.Parameter] = []
        for p in sig.parameters.values():
            ann = anns.get(p.name)
            if ann is not None and not isinstance(ann, str) and hasattr(ann, "to_tensor"):
                if others:
                    raise self.err("ValueError", "Non-tensor parameters must come after all tensor parameters. "
                                   f"Found tensor parameter '{p.name}' after non-tensor parameter(s).", fd)
                if p.default is not inspect.Parameter.empty:
                    raise self.err("ValueError", "Default values are only allowed for non-tensor parameters. "
                                   f"Parameter '{p.name}' is a tensor.", fd)
                tensors.append((p.name, ann))
            else:
                others.append(p)
        return tensors, others


_UNSEEN: Any = object()


def _name_chain(node: ast.expr) -> tuple[str, tuple[str, ...]] | None:
    """``("pypto", ("DT_FP32",))`` for ``pypto.DT_FP32``, ``("x", ())`` for ``x``; None for any other expression.

    Why: a fifth to a third of the expressions a gym kernel evaluates are such (``pypto.set_vec_tile_shapes``,
    ``dq_acc``, ``pypto.DT_BF16``), and compiling one cost ~25-75 us on a kernel's first call (flash_attention_score_grad
    compiles 128). `_Interp.eval` looks the name up in the locals, then the globals - the order of the compiled
    expression's ``LOAD_NAME`` - and takes the attributes with ``getattr`` as ``LOAD_ATTR`` does; a name in
    neither (a builtin, or an unbound name and its ``NameError``) goes through the compiled expression."""
    if type(node) is ast.Attribute:
        node, attrs = attr_chain(node)
        return (node.id, attrs) if type(node) is ast.Name else None
    return (node.id, ()) if type(node) is ast.Name else None


def _quick_tree(func: Callable) -> ast.Module | None:
    """The parsed source of ``func`` from `_source.quick_block` when it parses to exactly that one function (the
    tree ``inspect.getsourcelines`` would give), else None (the caller then asks inspect)."""
    got = _quick_parse(func)
    return None if got is None else got[0]


def _quick_parse(func: Callable) -> tuple[ast.Module, str] | None:
    """`_quick_tree`, and the block's text."""
    got = quick_block(func)
    if got is None:
        return None
    lines, start = got
    try:
        tree = pyast.parse("\n" * (start - 1) + dedent(lines))
    except (SyntaxError, ValueError):
        return None
    body = tree.body
    if len(body) != 1 or not isinstance(body[0], ast.FunctionDef | ast.AsyncFunctionDef) \
            or body[0].name != func.__name__:
        return None
    return tree, "".join(lines)


def _names_of(func: Callable, captured: dict[str, Any]) -> dict[str, Any]:
    g = dict(func.__globals__)
    g.update(captured)
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__, strict=False):
            try:
                g[name] = cell.cell_contents
            except ValueError:
                pass
    return g


# ---------------------------------------------------------------------------------------------------
# statement interpreter


class _Interp:
    """Executes a kernel/helper body at trace time over a name dict ``ns``."""

    def __init__(self, tracer: Tracer, parsed: _Parsed, globals_: dict[str, Any]) -> None:
        self.tr = tracer
        self.p = parsed
        self.g = globals_
        self.g["__pto_key__"] = _GRAB
        if tracer.options.compat == "head":
            self.g["min"] = _head_min
            self.g["max"] = _head_max
        self.line = parsed.fdef.lineno
        self.loop_outer: list[dict[str, Any]] = []
        self.rolling: list[tuple[Any, range, str | None]] = []
        """the rolled range loops being traced: (LoopInfo, the iterations it runs, its `_range_site`)"""
        self.rolled_out: dict[str, ast.For] = {}
        """names a rolled range loop left unbound (its body's names and its variable) -> that loop"""

    # evaluation -------------------------------------------------------------------------------------
    def _code(self, node: ast.expr) -> Any:
        c = self.p.codes.get(node)
        if c is None:
            expr = ast.Expression(node)
            try:  # parsed nodes carry their locations: fixing them walked every expression once more
                c = pyast.compile_tree(expr, self.p.file, "eval")
            except (TypeError, ValueError):  # a synthetic node without a location
                ast.fix_missing_locations(expr)
                c = pyast.compile_tree(expr, self.p.file, "eval")
            self.p.codes[node] = c
        return c

    def eval(self, node: ast.expr, ns: dict[str, Any]) -> Any:
        try:
            simple = self.p.simple.get(node, _UNSEEN)
            if simple is _UNSEEN:
                simple = self.p.simple[node] = _name_chain(node)
            if simple is not None:  # a name or attributes of a name, looked up as the compiled expression would
                v = ns.get(simple[0], _UNSEEN)
                if v is _UNSEEN:
                    v = self.g.get(simple[0], _UNSEEN)
                if v is not _UNSEEN:  # else a builtin or no such name: the compiled expression says which
                    for attr in simple[1]:
                        v = getattr(v, attr)
                    return v
            if _trace_walk.ENABLED and node not in self.p.codes:
                # its first evaluations walk the tree (a compile costs ~5 walks), later ones run compiled code
                walks = self.p.walks
                n = walks.get(node)
                if n is None:
                    n = walks[node] = 0 if _trace_walk.walkable(node) else -1
                if 0 <= n < _trace_walk.WALKS:
                    walks[node] = n + 1
                    return _trace_walk.walk(node, self.g, ns, self.p.file)
            return eval(self._code(node), self.g, ns)  # noqa: S307 - the kernel body is the input
        except EmulatorError as e:
            raise e.locate(self.p.file, getattr(node, "lineno", self.line))  # noqa: B904 - same error, located
        except Exception as e:  # any Python error inside an expression, with the expression span
            if type(e) is NameError and e.name in self.rolled_out:
                raise Unroll(self.p, self.rolled_out[e.name], f"`{e.name}` is read after the loop") from None
            raise py_error(type(e).__name__, str(e), file=self.p.file,
                           line=getattr(node, "lineno", self.line)) from e

    def _key(self, sub: ast.Subscript, ns: dict[str, Any]) -> Any:
        # One synthetic node per source subscript, kept in the cache: a fresh node per call would be compiled
        # again every time (the cache holds nodes, not ids, so a freed node's reused id can no longer run
        # another subscript's code: `mx[:]` once ran as `scores[r:r + 1, ...]`, depending on the allocator).
        node = self.p.codes.get(("key", sub))
        if node is None:
            node = ast.Subscript(value=ast.Name(id="__pto_key__", ctx=ast.Load()), slice=sub.slice, ctx=ast.Load())
            ast.copy_location(node, sub)
            self.p.codes[("key", sub)] = node
        return self.eval(node, ns)

    def err(self, kind: str, msg: str, node: ast.AST) -> EmulatorError:
        return py_error(kind, msg, file=self.p.file, line=getattr(node, "lineno", self.line))

    # statements -------------------------------------------------------------------------------------
    def exec_block(self, stmts: list[ast.stmt], ns: dict[str, Any]) -> None:
        self.ns = ns
        token = _INTERP.set(self)
        try:
            for s in stmts:
                self.exec_stmt(s, ns)
        finally:
            _INTERP.reset(token)

    def exec_stmt(self, s: ast.stmt, ns: dict[str, Any]) -> None:
        self.line = s.lineno
        t = type(s)
        if t is ast.Expr:
            if self.loop_outer and isinstance(s.value, ast.Call):
                self._side_effect_check(s.value, ns)
            self.eval(s.value, ns)
        elif t is ast.Assign:
            v = self.eval(s.value, ns)
            if self.loop_outer:
                self._stale_check(s.targets, s.value, ns)
            for tgt in s.targets:
                self.assign(tgt, v, ns)
        elif t is ast.AugAssign:
            if self.loop_outer:
                self._stale_check([s.target], None, ns)
                if isinstance(s.target, ast.Name) and isinstance(ns.get(s.target.id), int | float | list):
                    self.tr.warn("EMU_SIDE_EFFECT", f"Python value `{s.target.id}` is mutated inside pypto.loop: "
                                 "this runs once per traced control path, not once per iteration")
            self.aug_assign(s, ns)
        elif t is ast.AnnAssign:
            if s.value is not None:
                self.assign(s.target, self.eval(s.value, ns), ns)
        elif t is ast.For:
            self.exec_for(s, ns)
        elif t is ast.If:
            self.exec_if(s, ns)
        elif t is ast.Pass:
            pass
        elif t is ast.Delete:
            for tgt in s.targets:
                if not isinstance(tgt, ast.Name):
                    raise self.err("TypeError", f"Delete target must be a name, but got {type(tgt).__name__}.", s)
                ns.pop(tgt.id, None)
        elif t is ast.Assert:
            ok = self.eval(s.test, ns)
            try:
                passed = bool(ok)
            except Exception as e:
                raise self.err(type(e).__name__, str(e), s) from e
            if not passed:
                msg = self.eval(s.msg, ns) if s.msg is not None else ""
                raise self.err("AssertionError", str(msg), s)
        elif t is ast.FunctionDef:
            mod = ast.Module(body=[s], type_ignores=[])
            exec(pyast.compile_tree(mod, self.p.file, "exec"), self.g, ns)  # noqa: S102 - nested helper definition
        else:
            raise self.err("ParserError", _UNSUPPORTED_MSG.format(t.__name__), s)

    def _side_effect_check(self, call: ast.Call, ns: dict[str, Any]) -> None:
        try:
            fn = self.eval(call.func, ns)
        except EmulatorError:
            return
        if isinstance(fn, types.BuiltinFunctionType | types.BuiltinMethodType | types.MethodWrapperType):
            self.tr.warn("EMU_SIDE_EFFECT", f"Python side effect `{ast.unparse(call)}` inside pypto.loop runs once "
                         "per traced control path at trace time, not once per iteration")

    def _stale_check(self, targets: list[ast.expr], value: ast.expr | None, ns: dict[str, Any]) -> None:
        """Warn on `x = f(x)` inside pypto.loop for a tensor bound before the loop (not loop-carried)."""
        outer = self.loop_outer[-1]
        read = None
        for tgt in targets:
            if not isinstance(tgt, ast.Name) or tgt.id not in outer:
                continue
            if value is not None:
                # the names the value reads: walked only when a target re-binds a pre-loop tensor (most
                # assignments in a loop bind new names: the walk of every value was ~0.2 ms of a first call)
                if read is None:
                    read = self.p.codes.get(("names", value))
                    if read is None:
                        read = self.p.codes[("names", value)] = {n.id for n in nodes(value)
                                                                 if isinstance(n, ast.Name)}
                if tgt.id not in read:
                    continue
            if ns.get(tgt.id) is outer[tgt.id]:
                self.tr.warn("EMU_STALE_REBIND", f"`{tgt.id} = f({tgt.id})` inside pypto.loop re-binds a tensor "
                             "defined before the loop: the re-binding is NOT loop-carried (every iteration reads "
                             f"the pre-loop value; after the loop `{tgt.id}` holds the last iteration only). "
                             f"Use `{tgt.id}[:] = ...` / assemble on a tensor for loop-carried state")

    def assign(self, tgt: ast.expr, v: Any, ns: dict[str, Any]) -> None:
        if isinstance(tgt, ast.Name):
            if isinstance(v, Tensor) and (v.kind == "op" or v.kind == "local" and not v.name):
                v.name = tgt.id
            ns[tgt.id] = v
        elif isinstance(tgt, ast.Tuple | ast.List):
            try:
                vals = list(v)
            except Exception as e:
                raise self.err("TypeError", f"cannot unpack {type(v).__name__}: {e}", tgt) from e
            if len(vals) != len(tgt.elts):
                raise self.err("ValueError", f"Cannot unpack {len(vals)} values into {len(tgt.elts)} targets.", tgt)
            for t, x in zip(tgt.elts, vals, strict=True):
                self.assign(t, x, ns)
        elif isinstance(tgt, ast.Subscript):
            obj = self.eval(tgt.value, ns)
            key = self._key(tgt, ns)
            try:
                obj[key] = v
            except EmulatorError as e:
                raise e.locate(self.p.file, tgt.lineno)  # noqa: B904 - same error, located
            except Exception as e:
                raise self.err(type(e).__name__, str(e), tgt) from e
        else:
            raise self.err("TypeError", "Assignment target must be a name, tuple, or subscript, but got "
                           f"{type(tgt).__name__}.", tgt)

    def aug_assign(self, s: ast.AugAssign, ns: dict[str, Any]) -> None:
        fn = _BINOPS[type(s.op)]
        rhs = self.eval(s.value, ns)
        tgt = s.target
        try:
            if isinstance(tgt, ast.Name):
                if tgt.id not in ns and tgt.id not in self.g:
                    if tgt.id in self.rolled_out:
                        raise Unroll(self.p, self.rolled_out[tgt.id], f"`{tgt.id}` is read after the loop")
                    raise self.err("NameError", f"name '{tgt.id}' is not defined", s)
                cur = ns[tgt.id] if tgt.id in ns else self.g[tgt.id]
                ns[tgt.id] = fn(cur, rhs)
            elif isinstance(tgt, ast.Subscript):
                obj = self.eval(tgt.value, ns)
                key = self._key(tgt, ns)
                obj[key] = fn(obj[key], rhs)
            else:
                raise self.err("TypeError", "Assignment target must be a name, tuple, or subscript, but got "
                               f"{type(tgt).__name__}.", s)
        except EmulatorError as e:
            raise e.locate(self.p.file, s.lineno)  # noqa: B904 - same error, located
        except Exception as e:
            raise self.err(type(e).__name__, str(e), s) from e

    def exec_for(self, s: ast.For, ns: dict[str, Any]) -> None:
        it = self.eval(s.iter, ns)
        if isinstance(it, _Loop | _LoopUnroll):
            snapshot = dict(ns)
            self.loop_outer.append({k: v for k, v in ns.items() if isinstance(v, Tensor)})
            try:
                self._run_traced_loop(s, it, ns, snapshot)
            finally:
                self.loop_outer.pop()
            return
        self._run_unrolled(s, it, ns)

    def _run_traced_loop(self, s: ast.For, it: Any, ns: dict[str, Any], snapshot: dict[str, Any]) -> None:
        """Trace a pypto.loop body once per control path, restoring the names before each path."""
        first = True
        gen = iter(it)
        while True:
            try:
                v = next(gen)
            except StopIteration:
                break
            except EmulatorError as e:
                raise e.locate(self.p.file, s.lineno)  # noqa: B904 - same error, located
            if not first:
                ns.clear()
                ns.update(snapshot)
            first = False
            try:
                self.assign(s.target, v, ns)
                self.exec_block(s.body, ns)
            except BaseException:
                gen.close()
                raise

    def _run_unrolled(self, s: ast.For, it: Any, ns: dict[str, Any]) -> None:
        if isinstance(it, list | tuple):
            if not it:
                raise self.err("ValueError", "Empty list/tuple cannot be used as loop iterator.", s)
            seq = it
        elif isinstance(it, range):
            seq = it
        elif hasattr(it, "__iter__") and not isinstance(it, Tensor | str | dict):
            seq = it
        else:
            raise self.err("TypeError", "Loop iterator must be range  Iterator, or list/tuple, but got "
                           f"{type(it).__name__}.", s)
        site = self._range_site(s, seq)
        if type(seq) is range and (plan := self._roll_plan(s, seq, ns, site)) is not None:
            self._run_rolled(s, seq, ns, plan, site)
            return
        if site is not None:
            self.tr.range_fixed = True
        for v in seq:
            self.assign(s.target, v, ns)
            self.exec_block(s.body, ns)

    # range loops traced once (`_roll`) ----------------------------------------------------------------
    def _range_site(self, s: ast.For, seq: Any) -> str | None:
        """The parameter ``p`` when this loop is a `_roll.range_sites` loop over ``range(p)`` and the trace may be
        derived for other values of ``p`` (`Tracer.range_values`), else None."""
        if not self.p.range_sites:
            return None
        p = self.p.range_sites.get(s)
        if p is None:
            return None
        n = self.tr.range_values.get(p)
        if n is None:
            return None
        if type(seq) is not range or seq != range(n):  # `range` is not the builtin here
            self.tr.range_fixed = True
            return None
        return p

    def _roll_plan(self, s: ast.For, r: range, ns: dict[str, Any], site: str | None = None) -> Plan | None:
        """How to trace this range loop once (`_roll.Plan`), or None: it is unrolled. A `_range_site` loop may roll
        from one iteration on (`Tracer.range_small`: its program then serves every trip count)."""
        o = self.tr.options
        least = 1 if site is not None and self.tr.range_small else MIN_TRIPS
        if len(r) < least or r.step < 0 or o.record or not o.roll or o.out_of_bounds != "raise" or \
                s in self.p.no_roll:
            return None
        plan = plan_of(s, self.p.codes)
        if plan is None:
            return None
        g = self.g
        missing = object()

        def lookup(name: str) -> Any:
            v = ns.get(name, missing)
            if v is missing:
                v = g.get(name, missing)
            if v is missing:
                v = getattr(builtins, name, None)
            return v

        return plan if plan.callees_ok(lookup, lambda v: isinstance(v, Tensor)) else None

    def _run_rolled(self, s: ast.For, r: range, ns: dict[str, Any], plan: Plan, site: str | None = None) -> None:
        """Trace the first iteration as unrolled, then the others once, as a device loop over `r[1:]`.

        The first iteration leaves the tile options the later ones start from; the rolled body must leave them as
        it found them (else iteration 2 would trace different ops), must not warn or fail (the unrolled trace says
        what the kernel's diagnostics are) - otherwise `Unroll` makes the kernel be traced again with this loop
        unrolled. A carried name (`_roll.Plan.carried`) reads a stand-in tensor that a `carry` op fills with the
        value the first iteration left, and each rolled iteration's value at its end; after the loop the name
        holds the stand-in (the last iteration's value). The other names the body assigned are unbound after it."""
        tr = self.tr
        self.assign(s.target, r[0], ns)
        self.exec_block(s.body, ns)
        entry = new_scope(tr.scopes[-1])
        carried = {name: self._carry_in(s, name, ns.get(name)) for name in sorted(plan.carried)}
        info = LoopInfo(f"{ROLLED_PREFIX}{plan.var}>", plan.var)
        node = LoopNode(start=r.start + r.step, stop=r.stop, step=r.step, loop=info, name=info.name,
                        file=self.p.file, line=s.lineno, site=site)
        tr.items.append(node)
        region = Region()
        ns.update(carried)
        snapshot = dict(ns)
        # the iterations an `if` is folded over (`_roll.fold`): a site loop of fewer trips than MIN_TRIPS is folded
        # over the first MIN_TRIPS - 1 rolled ones (it runs at most those; other trip counts are checked again
        # when a program is derived, `_trace_cache.retrip`)
        rolled = r[1:] if site is None or len(r) >= MIN_TRIPS else range(r.start + r.step, MIN_TRIPS, r.step)
        self.rolling.append((info, rolled, site))
        with tr.session.capture_warnings() as warned:
            try:
                for _ctx in tr.trace_paths(region, scope=True):
                    ns.clear()
                    ns.update(snapshot)
                    ns[plan.var] = info.index
                    self.exec_block(s.body, ns)
                    if tr.scopes[-1] != entry:
                        raise Unroll(self.p, s, "the body changes the tile options")
                    for name, c in carried.items():
                        self._carry_out(s, name, ns.get(name), c)
            except EmulatorError as e:
                raise Unroll(self.p, s, f"the rolled body raised {e.code}") from None
            finally:
                self.rolling.pop()
        if warned:
            raise Unroll(self.p, s, f"the rolled body warned {warned[0][0]}")
        node.body = region
        ns.clear()
        ns.update(snapshot)
        for name in (*plan.assigned, plan.var):
            if name not in carried:
                ns.pop(name, None)
                # and hidden from this trace's copy of the globals: a read after the loop must fail (and unroll it),
                # not find a module-level variable of the same name (Python would give the last iteration's value)
                self.g.pop(name, None)
                self.rolled_out[name] = s

    def _carry_in(self, s: ast.For, name: str, v: Any) -> Tensor:
        """The stand-in a rolled loop's iterations read ``name`` from, filled with ``v`` (the first iteration's
        value): a tensor like ``v`` under a new storage key. Only an op's output is carried (a kernel argument or
        local tensor under a name would change what counts as a read of an argument, and what a write hits)."""
        if not isinstance(v, Tensor) or v.kind != "op" or v.key < 0:
            raise Unroll(self.p, s, f"the carried `{name}` is not an op's output")
        tr = self.tr
        c = Tensor.__new__(Tensor)
        for slot in Tensor.__slots__:
            if slot != "__weakref__" and hasattr(v, slot):
                setattr(c, slot, getattr(v, slot))
        tr.stamp(c, "op", "carry")
        c._consumed = False
        c._written = True  # its storage changes between iterations: a view of it copies (`_ops_core.input_mutable`)
        self._emit_carry(v, c)
        return c

    def _carry_out(self, s: ast.For, name: str, v: Any, c: Tensor) -> None:
        """At the end of a rolled iteration: ``name``'s value goes into the stand-in for the next one, if it is a
        tensor of the stand-in's shape, dtype and valid shape (else the iterations would not trace alike)."""
        if not isinstance(v, Tensor) or v.kind != "op" or v.dtype != c.dtype or repr(v.shape) != repr(c.shape) or \
                repr(v.valid_shape) != repr(c.valid_shape):
            raise Unroll(self.p, s, f"`{name}` changes its tensor type between iterations")
        if v is not c:
            self._emit_carry(v, c)

    def _emit_carry(self, src: Tensor, dst: Tensor) -> None:
        """``dst`` holds ``src``'s value from here on (`device/_k_core.build_carry`)."""
        self.tr.emit("carry", "carry", {"src": src.key, "dst": dst.key}, None, kind="move", ins=(src.key,),
                     writes=(dst.key,))

    def exec_if(self, s: ast.If, ns: dict[str, Any]) -> None:
        test = self.eval(s.test, ns)
        if isinstance(test, bool | np.bool_):
            taken = bool(test)
        elif isinstance(test, SymbolicScalar):
            if test.is_concrete():
                taken = bool(test.concrete())
            else:
                folded = None
                if self.rolling:
                    info, rolled, site = self.rolling[-1]
                    folded = fold(test, info, rolled)
                    if folded is not None and site is not None:
                        self.tr.range_folds.append((test, info, site, folded))
                taken = self.tr.decide(test) if folded is None else folded
        else:
            raise self.err("TypeError", "Test condition must be a symbolic scalar or boolean, but got "
                           f"{type(test).__name__}.", s)
        self.exec_block(s.body if taken else s.orelse, ns)


def trace_rolling(session: Any, trace_once: Callable[[], Any]) -> Any:
    """``trace_once()``, traced again each time a rolled range loop is refused (`_roll.Unroll`), with that loop
    unrolled from then on; the session's warnings are put back as they were before each attempt."""
    while True:
        try:
            with session.warnings_rewound_on(Unroll):
                return trace_once()
        except Unroll as u:
            log.debug("range loop at %s:%s is unrolled: %s", u.parsed.file, u.node.lineno, u.why)
            u.parsed.no_roll.add(u.node)


def _head_min(*args: Any, **kw: Any) -> Any:
    if len(args) == 2 and not kw:
        return sym_min(*args)
    return min(*args, **kw)


def _head_max(*args: Any, **kw: Any) -> Any:
    if len(args) == 2 and not kw:
        return sym_max(*args)
    return max(*args, **kw)


# ---------------------------------------------------------------------------------------------------
# loops as iterables (the interpreter restores names per path; native code just iterates)


class _Loop:
    def __init__(self, args: tuple, kw: dict[str, Any]) -> None:
        self.tr = require_tracer("loop")
        unknown = set(kw) - {"name", "idx_name", "unroll_list", "submit_before_loop", "parallel"}
        if unknown:
            raise self.tr.pyerror("TypeError", f"loop() got unexpected keyword argument(s) {sorted(unknown)}",
                                  op="loop")
        self.args = _loop_args(args, self.tr)
        self.kw = kw

    def __iter__(self):
        s, e, st = self.args
        return self.tr.loop_iter(s, e, st, self.kw.get("name"), self.kw.get("idx_name"),
                                 unroll_list=self.kw.get("unroll_list"))


class _LoopUnroll:
    def __init__(self, args: tuple, kw: dict[str, Any]) -> None:
        self.tr = require_tracer("loop_unroll")
        self.args = args
        self.kw = kw

    def __iter__(self):
        return loop_unroll_iter(self.tr, self.args, self.kw.get("name"), self.kw.get("idx_name"),
                                self.kw.get("unroll_list"))


def loop(*args: Any, **kw: Any) -> _Loop:
    """``pypto.loop(stop)`` / ``(start, stop[, step])``: a traced device loop yielding a SymbolicScalar index."""
    return _Loop(args, kw)


def loop_unroll(*args: Any, **kw: Any) -> _LoopUnroll:
    """``pypto.loop_unroll(..., unroll_list=[...])``: yields ``(idx, factor)`` with the 0.2.0 algorithm."""
    return _LoopUnroll(args, kw)


def cond(scalar: Any, file: Any = None, lineno: Any = None) -> RecordIfBranch:
    """Explicit runtime branch for natively executed code: ``if pypto.cond(expr):``."""
    if (file is None) != (lineno is None):
        raise py_error("ValueError", "file and lineno must be provided together or omitted")
    return RecordIfBranch(scalar)


