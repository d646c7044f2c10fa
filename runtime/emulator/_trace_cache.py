"""The trace cache: a kernel called again with the same call signature reuses its lowered program.

Real pypto compiles a ``@pypto.frontend.jit`` kernel once per input signature (``use_cache=True``, its default).
Here tracing + lowering cost about 40 us per traced op, which dominates small kernels, so a `JitFunction` keeps
the programs of its last calls. A cached program is only reused when a new trace could not differ, so results
and messages stay exactly those of re-tracing:

- the key holds every input of a trace: each tensor argument's dtype and shape (and the annotation object),
  every non-tensor argument by value, the jit options, the session options (compat, record, ...) and the
  option scope the kernel starts from (module-level ``pypto.set_*`` calls);
- plus a fingerprint of everything the body can read by name: each name the kernel (and, recursively, every
  ``@pypto.frontend.function`` helper and plain Python function it can call) loads from its globals, closure or
  captured locals, and each attribute chain on a module (``cfg.TILE``, ``pypto.add``). Immutable values count by
  value (floats by their bits), lists/dicts/tuples by their contents, functions/classes/library modules by
  identity; a value whose contents cannot be fingerprinted (an arbitrary object, an array, a user module used
  whole, a function with side effects such as ``print`` or a random generator) makes the call uncacheable: it is
  traced every time, as before;
- a trace that raised, or that changed the fingerprint of its own environment (a body mutating a global
  list), is not stored;
- warnings the trace emitted are kept with the program and emitted again, in order, on a hit (the session's
  de-duplication then behaves exactly as for a re-trace).

Off with ``use_cache=False`` on the decorator (real pypto's switch) or ``PTO_FORGE_TRACE_CACHE=0``.

Verification runs the candidate's kernels in the candidate's process and executes their programs elsewhere;
this cache lives in that untrusted process and gives it nothing it did not already have (it can hand the
executor any program it likes): the device decodes and validates every program it receives, and a value
smuggled into constants from the host changes the key, so the verifier still sees programs that differ
between calls (a stale program could only compute the wrong answer).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import dis
import enum
import os
import re
import struct
import threading
import types
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runtime.emulator import _trace_walk
from runtime.emulator._astutil import attr_chain, push_children
from runtime.emulator._roll import fold
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator.device import _program as prog

__all__ = ["ENV", "Entry", "TraceCache", "Uncacheable", "enabled", "env_fingerprint", "freeze", "register"]

ENV = "PTO_FORGE_TRACE_CACHE"
"""``0`` turns the trace cache off process-wide"""

LIMIT = 32
"""programs kept per kernel (least recently used dropped first)"""

_MAX_NODES = 20_000
"""values visited per fingerprint: a larger environment is not fingerprinted (the call is traced)"""

_LIB_ROOTS = frozenset({"pypto", "runtime", "math", "cmath", "operator", "functools", "itertools", "typing",
                        "enum", "numbers", "numpy", "ml_dtypes", "torch", "builtins", "collections", "dataclasses",
                        "abc", "decimal", "fractions"})
"""modules whose functions and classes count by identity (the emulator itself and libraries that compute)"""

_IMPURE = re.compile(r"rand|seed|normal|uniform|bernoulli|multinomial|poisson|shuffle|^permutation$|^choice$|"
                     r"^empty|time|clock|pid|urandom|environ|^print|^input$|^open$|^exec$|^eval$|^compile$|"
                     r"import|^id$|^hash$|^breakpoint$|^vars$|^globals$|^locals$|attr$", re.I)
"""names of library functions (numpy, torch, math ...) whose result is not a function of their arguments, or that
act on the world; the emulator's own ``pypto`` functions are all pure at trace time"""

_PURE_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "complex", "dict", "divmod",
    "enumerate", "filter", "float", "format", "frozenset", "getattr", "hasattr", "hex", "int", "isinstance",
    "issubclass", "iter", "len", "list", "map", "max", "min", "next", "oct", "ord", "pow", "range", "repr",
    "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "type", "zip", "object", "super",
    "NotImplemented", "Ellipsis", "None", "True", "False", "staticmethod", "classmethod", "property",
})


class Uncacheable(Exception):
    """The call's trace may depend on something the cache cannot fingerprint."""


def enabled() -> bool:
    """False when ``PTO_FORGE_TRACE_CACHE=0``."""
    return os.environ.get(ENV, "1") != "0"


_ID_TAG = object()
"""the first item of every `_Id` (no other key part holds it)"""


class _Id(tuple):
    """A key part equal only to the same object (and keeping it alive while the entry exists): the pair (`_ID_TAG`,
    the object's id), which the tuple's own C code hashes and compares - a key holds ~76 of them, and a Python
    ``__hash__`` / ``__eq__`` per part was ~6 bytecodes each time a key was looked up (session 48). Two of them are
    equal exactly when their ids are, and an id is one object's while this holds the object."""

    obj: Any

    def __new__(cls, obj: Any) -> _Id:
        self = super().__new__(cls, (_ID_TAG, id(obj)))
        self.obj = obj
        return self

    def __repr__(self) -> str:
        return f"_Id({type(self.obj).__name__})"


def _root(modname: Any) -> str:
    return modname.split(".", 1)[0] if isinstance(modname, str) else ""


def _is_lib_module(m: types.ModuleType) -> bool:
    return _root(getattr(m, "__name__", None)) in _LIB_ROOTS


# ---- static analysis (what a body can read by name) ------------------------------------------------------

@dataclass(frozen=True)
class Reads:
    """Names a kernel/helper body loads (bare), and attribute chains rooted at a name (``a.b.c``)."""

    bare: tuple[str, ...]
    chains: tuple[tuple[str, ...], ...]
    groups: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = field(init=False, compare=False, repr=False)
    """``chains`` grouped by their root name, in first-seen order (what `_Fp.reads` walks on every call)"""

    def __post_init__(self) -> None:
        by_root: dict[str, list[tuple[str, ...]]] = {}
        for ch in self.chains:
            by_root.setdefault(ch[0], []).append(ch)
        object.__setattr__(self, "groups", tuple((r, tuple(chs)) for r, chs in by_root.items()))


def body_reads(fdef: ast.FunctionDef, params: frozenset[str]) -> Reads:
    """The names of a kernel/helper body that may come from its environment (parameters are always bound in the
    body's namespace, unless the body deletes them).

    Every ``Name`` node counts as a bare read (stores too: the body may read the name before it binds it, and
    the interpreter then finds it in the environment), but the root of an attribute chain ``a.b.c``, which counts
    as the chain. One walk, parents first, that does not descend into a chain (a chain's inner nodes have no
    other children): the three walks over every node it replaces were ~0.3-0.5 ms of a small kernel's first
    call (`tests/emulator/test_trace_cache_reads.py` checks it against them on every corpus kernel)."""
    attribute, name, delete = ast.Attribute, ast.Name, ast.Delete
    bare: set[str] = set()
    chains: set[tuple[str, ...]] = set()
    deleted: set[str] = set()
    stack: list[ast.AST] = list(fdef.body)
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        if isinstance(n, attribute):
            cur, parts = attr_chain(n)
            if isinstance(cur, name):
                chains.add((cur.id, *parts))
            else:
                push(cur)
            continue
        if isinstance(n, name):
            bare.add(n.id)
            continue
        if isinstance(n, delete):
            deleted.update(t.id for t in n.targets if isinstance(t, name))
        push_children(n, push)
    skip = params - deleted
    # decorators / defaults of nested defs are evaluated too: the walk over the body covers them
    return Reads(tuple(sorted(bare - skip)), tuple(sorted(c for c in chains if c[0] not in skip)))


def bound_reads(fdef: ast.FunctionDef, params: frozenset[str], walks: dict[Any, int] | None = None) -> Reads:
    """`body_reads` without the names the body binds itself before it reads them: what a trace can read from the
    environment when no ``@pypto.frontend.function`` helper runs in the body's namespace (the caller switches to
    `body_reads` once one does: a helper shares the namespace and may unbind a name, `JitFunction._program`).

    Why: every name the body binds was fingerprinted too, in case it is read before it is bound (the interpreter
    then finds the environment's value). So a kernel whose loop variable ``i`` is also a module-level variable that
    changes between calls - ``for i in range(5): add(x, out)`` in a script or a notebook, over a kernel with ``for i
    in pypto.loop(...)`` - was traced again on every call. Here a load counts only when the name may be unbound
    there (`_Bound`): the stores, and the loads after a binding on every path, are not environment reads.

    ``walks``: the parsed body's `_trace_interp._Parsed.walks`; each expression this walk meets whole gets its
    `_trace_walk.walkable` answer there (0 or -1) unless it has one, so that the trace does not walk it again for
    that (session 48: ~9 K bytecodes of attn_softmax's first call)."""
    b = _Bound(params, walks)
    b.run(fdef.body)
    return Reads(tuple(sorted(b.bare)), tuple(sorted(b.chains)))


class _Bound:
    """One ordered pass over a body, as the trace-time interpreter (`_trace_interp._Interp`) runs it, collecting the
    loads that may find their name unbound in the body's namespace (then the interpreter reads the environment).

    Bound: the parameters at the start; an assignment's names after its value; not after ``del``; after an ``if``,
    what both branches bind; after a ``for`` loop, only what was bound before it and nothing it binds or unbinds (a
    rolled range loop unbinds what its body assigns, `_run_rolled`; a zero-trip loop binds nothing); its body starts
    from what was bound before but what the body deletes or a nested loop assigns (an unrolled loop runs the body
    again in the namespace the last iteration left), plus the loop target. Every load counts inside lambdas,
    comprehensions and nested functions (their own scopes read the environment, not the namespace) and in statements
    the interpreter does not run (``global`` among them: a body that declares one is not traced at all).

    One walk: a loop body is walked assuming it unbinds nothing bound before it, while what it deletes and what its
    nested loops assign is noted (`_Frame`); only when that meets a name bound before the loop is the body walked
    again without those names (the reads of the first walk are a subset of the second's)."""

    def __init__(self, params: frozenset[str], walks: dict[Any, int] | None = None) -> None:
        self.params = params
        self.walks = walks
        self.bare: set[str] = set()
        self.chains: set[tuple[str, ...]] = set()
        self.frames: list[_Frame] = []

    def run(self, body: list[ast.stmt]) -> None:
        self.block(body, set(self.params))

    def _note(self, stored: Any = (), deleted: Any = (), in_loops: Any = ()) -> None:
        """Record names the running statement may bind / unbind in every enclosing loop's frame."""
        for f in self.frames:
            f.stored.update(stored)
            f.deleted.update(deleted)
            f.in_loops.update(in_loops)

    def block(self, stmts: list[ast.stmt], bound: set[str]) -> None:
        """Run ``stmts`` over ``bound`` (changed in place to what is bound after them)."""
        for st in stmts:
            self.stmt(st, bound)

    def stmt(self, s: ast.stmt, bound: set[str]) -> None:
        if isinstance(s, ast.Expr):
            self.expr(s.value, bound)
        elif isinstance(s, ast.Assign):
            self.expr(s.value, bound)
            for tgt in s.targets:
                self.target(tgt, bound)
        elif isinstance(s, ast.AugAssign):
            self.expr(s.value, bound)
            if isinstance(s.target, ast.Name) and s.target.id not in bound:
                self.bare.add(s.target.id)  # `x += 1` reads x
            self.target(s.target, bound)
        elif isinstance(s, ast.AnnAssign):
            self.every(s.annotation)  # never evaluated by the interpreter; counted, as before
            if s.value is not None:
                self.expr(s.value, bound)
                self.target(s.target, bound)
        elif isinstance(s, ast.If):
            self.expr(s.test, bound)
            other = set(bound)
            self.block(s.body, bound)
            self.block(s.orelse, other)
            bound &= other
        elif isinstance(s, ast.For):
            self.loop(s, bound)
        elif isinstance(s, ast.Delete):
            for tg in s.targets:
                if isinstance(tg, ast.Name):
                    bound.discard(tg.id)
                    self._note(stored=(tg.id,), deleted=(tg.id,))
                else:
                    self.every(tg)
        elif isinstance(s, ast.Assert):
            self.expr(s.test, bound)
            if s.msg is not None:
                self.expr(s.msg, bound)
        elif not isinstance(s, ast.Pass):
            # a nested def (its body reads the environment), or a statement the interpreter refuses: every load
            # inside counts, and nothing it may bind or unbind stays bound
            self.every(s)
            stored = _stored(s)
            bound -= stored
            self._note(stored=stored, deleted=stored, in_loops=stored)

    def loop(self, s: ast.For, bound: set[str]) -> None:
        self.expr(s.iter, bound)
        drop: set[str] = set()
        while True:
            frame = _Frame()
            self.frames.append(frame)
            try:
                inner = bound - drop
                self.target(s.target, inner)
                self.block(s.body, inner)
                for o in s.orelse:
                    self.every(o)  # not run by the interpreter; counted, as before
            finally:
                self.frames.pop()
            again = (frame.deleted | frame.in_loops) & (bound - drop)
            if not again:
                break
            drop |= again  # the body may unbind them before a later iteration reads them: walk it again without
        stored = frame.stored
        for o in s.orelse:
            stored |= _stored(o)
        bound -= stored
        self._note(stored=stored, deleted=frame.deleted, in_loops=stored)

    def target(self, tgt: ast.expr, bound: set[str]) -> None:
        """An assignment target, bound in order (`_Interp.assign`): names bind, subscripts read their value and key."""
        if isinstance(tgt, ast.Name):
            bound.add(tgt.id)
            for f in self.frames:  # `_note(stored=(tgt.id,))`, without its two empty updates per frame
                f.stored.add(tgt.id)
        elif isinstance(tgt, ast.Tuple | ast.List):
            for e in tgt.elts:
                self.target(e, bound)
        elif isinstance(tgt, ast.Subscript):
            self.expr(tgt.value, bound)
            self.expr(tgt.slice, bound)
        else:  # starred / attribute targets: refused by the interpreter
            self.every(tgt)
            names = {n.id for n in ast.walk(tgt) if isinstance(n, ast.Name)}
            bound -= names
            self._note(stored=names, deleted=names)

    def expr(self, e: ast.AST, bound: set[str] | frozenset[str], scoped: bool = True) -> None:
        """The loads of ``e``: a name (or the root of an attribute chain) not in ``bound`` is read from the
        environment; own scopes count every load (`every`: ``scoped`` off)."""
        stack = [e]
        pop, push, extend = stack.pop, stack.append, stack.extend
        bare, chains = self.bare, self.chains
        # node classes compared by identity (a parsed tree holds the `ast` classes themselves, never subclasses):
        # the isinstance calls were a third of this walk
        attr_t, name_t, load_t, scopes = ast.Attribute, ast.Name, ast.Load, _SCOPE_TYPES if scoped else ()
        call_t, const_t, list_t, tuple_t = ast.Call, ast.Constant, ast.List, ast.Tuple
        # `_trace_walk.walkable` of ``e``, decided on the way (every node it visits is visited here): ``ok`` while
        # each node met is one it takes, ``seen`` nodes so far (at most `MAX_NODES`: not nested too deep)
        ok, seen = True, 0
        while stack:
            n: Any = pop()  # narrowed by class identity below
            seen += 1
            t = n.__class__
            if t is name_t:  # the commonest class first
                if n.ctx.__class__ is load_t and n.id not in bound:
                    bare.add(n.id)
                continue
            if t is attr_t:
                cur, parts = attr_chain(n)
                if cur.__class__ is name_t:
                    seen += len(parts)  # the chain's other attributes, and its root
                    if cur.id not in bound:
                        chains.add((cur.id, *parts))
                else:
                    seen += len(parts) - 1
                    push(cur)
                continue
            # the commonest classes' children pushed here - what `push_children` pushes for them (a keyword's only
            # child is its value); its call per node was ~40% of this walk (session 48)
            if t is call_t:
                args, kws = n.args, n.keywords
                if len(args) + len(kws) > _trace_walk.MAX_ARGS:
                    ok = False
                push(n.func)
                extend(args)
                for k in kws:
                    if k.arg is None:
                        ok = False
                    push(k.value)
                continue
            if t is const_t:
                continue
            if t is list_t or t is tuple_t:
                extend(n.elts)
                continue
            if t in scopes:
                ok = False
                self.every(n)
                continue
            if ok and (t not in _trace_walk.CLASSES or t is ast.Dict and None in n.keys or
                       t is ast.BinOp and n.op.__class__ not in _trace_walk.BIN):
                ok = False
            push_children(n, push)
        walks = self.walks
        if walks is not None and scoped and (not ok or seen <= _trace_walk.MAX_NODES) and e not in walks:
            walks[e] = 0 if ok else -1

    def every(self, node: ast.AST) -> None:
        """Every load under ``node`` counts (as `body_reads` counts it, stores aside)."""
        self.expr(node, frozenset(), scoped=False)


def _stored(node: ast.AST) -> set[str]:
    """Every name ``node`` (with all it nests) may bind or unbind: its stores and deletes of names."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and type(n.ctx) is not ast.Load}


class _Frame:
    """What a loop body being walked may bind (``stored``), delete, and bind in loops nested in it (`_Bound.loop`)."""

    __slots__ = ("deleted", "in_loops", "stored")

    def __init__(self) -> None:
        self.stored: set[str] = set()
        self.deleted: set[str] = set()
        self.in_loops: set[str] = set()


_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.FunctionDef,
           ast.AsyncFunctionDef, ast.ClassDef)
_SCOPE_TYPES = frozenset(_SCOPES)
"""`_SCOPES` for a lookup by the node's class (`_Bound.expr`)"""


_CODE_GLOBALS: dict[types.CodeType, tuple[str, ...]] = {}

_NAME_OPS = frozenset(dis.opmap[n] for n in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"))
_LOAD_GLOBAL = dis.opmap["LOAD_GLOBAL"]
_EXTENDED_ARG = dis.EXTENDED_ARG


def _code_globals(code: types.CodeType) -> tuple[str, ...]:
    """Global names a plain function's code (and its nested code) loads.

    Read straight from the bytecode (two bytes per unit: opcode, argument; ``EXTENDED_ARG`` prefixes the high
    bytes; since 3.11 ``LOAD_GLOBAL``'s argument is its ``co_names`` index shifted left by one): the same names as
    ``dis.get_instructions`` (a test compares them), which cost ~0.1-0.5 ms per function - a first call of a kernel
    that calls helper functions fingerprints each of them."""
    got = _CODE_GLOBALS.get(code)
    if got is None:
        names: set[str] = set()
        stack = [code]
        while stack:
            c = stack.pop()
            raw, co_names, ext = c.co_code, c.co_names, 0
            for i in range(0, len(raw), 2):
                op = raw[i]
                if op == _EXTENDED_ARG:
                    ext = (ext | raw[i + 1]) << 8
                    continue
                if op in _NAME_OPS:
                    arg = ext | raw[i + 1]
                    names.add(co_names[arg >> 1 if op == _LOAD_GLOBAL else arg])
                ext = 0
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        got = _CODE_GLOBALS[code] = tuple(sorted(names))
    return got


# ---- fingerprints -------------------------------------------------------------------------------------------

_MISSING = ("missing",)
_MISSING_FP = _Id(_MISSING)
"""the fingerprint of a name bound nowhere (equal only to itself: no value fingerprints to it)"""


_ID_MEMO: dict[int, tuple[Any, _Id]] = {}
"""id -> (object, its fingerprint) for the values fingerprinted by identity alone (library modules, functions and
classes, builtins, ufuncs, enum members, kernels): a kernel's key reads the same few dozen of them (``pypto.add``
...) on every call, and the type dispatch + impurity regex cost ~3 us each (a third of a key). The entry holds
the object, so its id cannot be reused while the entry exists."""

_ID_MEMO_LIMIT = 4096


def _remember(v: Any) -> _Id:
    """``_Id(v)``, remembered for `_Fp.value` (a fingerprint by identity is the same every time it is asked)."""
    if len(_ID_MEMO) >= _ID_MEMO_LIMIT:
        _ID_MEMO.clear()
    fp = _ID_MEMO[id(v)] = (v, _Id(v))
    return fp[1]


class _Fp:
    """One fingerprint computation (a visit budget and the functions being visited, for recursion)."""

    def __init__(self, helper_reads: Any) -> None:
        self.budget = _MAX_NODES
        self.visiting: set[int] = set()
        self.helper_reads = helper_reads
        """callable(FunctionMarker) -> (Reads, env dict) of a ``@pypto.frontend.function`` helper"""

    def value(self, v: Any) -> Any:  # noqa: C901, PLR0911, PLR0912 - one dispatch on the value's type
        self.budget -= 1
        if self.budget < 0:
            raise Uncacheable("environment too large to fingerprint")
        t = type(v)
        if v is None or t is bool or t is int or t is str or t is bytes:
            return (t, v)
        # the memo, then the containers, before the rarer scalars: a key's values are mostly library functions
        # (the memo's) and the option dicts, and a container's plain items are taken here without a call each
        # (session 48: `value` was ~50 bytecodes a value, 69 values a key; the fingerprints are the same)
        hit = _ID_MEMO.get(id(v))
        if hit is not None and hit[0] is v:
            return hit[1]
        if t is types.FunctionType:  # a function is none of the kinds tested before it below
            return self.function(v)
        if t is dict:
            items: list[Any] = []
            add = items.append
            for k, x in v.items():
                tx = type(x)
                if type(k) is str and (x is None or tx is bool or tx is int or tx is str):
                    self.budget -= 2
                    if self.budget < 0:
                        raise Uncacheable("environment too large to fingerprint")
                    add(((str, k), (tx, x)))
                else:
                    add((self.value(k), self.value(x)))
            return (t, tuple(items))
        if t is tuple or t is list:
            return (t, tuple([self.value(x) for x in v]))
        if t is float:
            return (t, struct.pack("<d", v))
        if t is complex:
            return (t, struct.pack("<dd", v.real, v.imag))
        if v is Ellipsis or v is NotImplemented:
            return _Id(v)
        if t is set or t is frozenset:
            return (t, frozenset(self.value(x) for x in v))
        if isinstance(v, np.generic):
            return (t, v.tobytes())
        if isinstance(v, tuple) and hasattr(t, "_fields"):  # a namedtuple
            return (self.cls(t), tuple(self.value(x) for x in v))
        if isinstance(v, enum.Enum):
            return _remember(v)
        if isinstance(v, types.ModuleType):
            if _is_lib_module(v):
                return _remember(v)
            raise Uncacheable(f"module {getattr(v, '__name__', '?')} used as a value")
        kind = _KINDS.get(t)
        if kind == "helper":
            return self.marker(v)
        if kind == "kernel":
            return _remember(v)
        if t is SymbolicScalar:
            if v._kind in ("imm", "sym"):
                return (t, v._kind, v._name, v._value)
            raise Uncacheable("a traced symbolic expression in the environment")
        if isinstance(v, types.FunctionType):
            return self.function(v)
        if isinstance(v, types.BuiltinFunctionType | types.BuiltinMethodType):
            owner = getattr(v, "__self__", None)
            if owner is builtins or getattr(v, "__module__", None) == "builtins":
                if v.__name__ in _PURE_BUILTINS:
                    return _remember(v)
                raise Uncacheable(f"builtin {v.__name__}")
            mod = getattr(v, "__module__", None) or (owner.__name__ if isinstance(owner, types.ModuleType) else None)
            if (owner is None or isinstance(owner, types.ModuleType)) and _root(mod) in _LIB_ROOTS \
                    and not _IMPURE.search(v.__name__):
                return _remember(v)
            raise Uncacheable(f"builtin {v.__name__}")
        if isinstance(v, np.ufunc):
            return _remember(v)
        if isinstance(v, type):
            return self.cls(v)
        if isinstance(v, np.dtype):
            return (np.dtype, v.str, v.name)
        if _user_class(t) and hasattr(v, "__dict__") and not hasattr(t, "__slots__"):
            return (self.cls(t), self.value(vars(v)))  # a config object: its attributes by value
        raise Uncacheable(f"a {t.__name__} in the environment")

    def cls(self, c: type) -> Any:
        """A class: library classes and enums by identity, a user class by identity and its attributes."""
        if _root(c.__module__) in _LIB_ROOTS or issubclass(c, enum.Enum) or issubclass(c, tuple) and \
                hasattr(c, "_fields"):
            return _remember(c)
        if not _user_class(c):
            raise Uncacheable(f"class {c.__name__}")
        if id(c) in self.visiting:
            return _Id(c)
        self.visiting.add(id(c))
        try:
            parts: list[Any] = [_Id(c)]
            for k, a in vars(c).items():
                if k.startswith("__") and k.endswith("__"):
                    continue
                if isinstance(a, staticmethod | classmethod):
                    a = a.__func__
                if isinstance(a, property):
                    parts.append((k, self.value(a.fget), self.value(a.fset)))
                else:
                    parts.append((k, self.value(a)))
            return tuple(parts)
        finally:
            self.visiting.discard(id(c))

    def function(self, f: types.FunctionType) -> Any:
        if _root(getattr(f, "__module__", None)) in _LIB_ROOTS:
            if _IMPURE.search(f.__name__):
                raise Uncacheable(f"function {f.__name__}")
            return _remember(f)
        if id(f) in self.visiting:
            return _Id(f)
        self.visiting.add(id(f))
        try:
            g = f.__globals__
            parts: list[Any] = [_Id(f), _Id(f.__code__), self.value(f.__defaults__), self.value(f.__kwdefaults__)]
            for cell in f.__closure__ or ():
                try:
                    parts.append(self.value(cell.cell_contents))
                except ValueError:
                    parts.append(_MISSING)
            for name in _code_globals(f.__code__):
                v = _lookup(g, name)
                parts.append(_MISSING_FP if v is _MISSING else self.value(v))
            return tuple(parts)
        finally:
            self.visiting.discard(id(f))

    def marker(self, m: Any) -> Any:
        if id(m) in self.visiting:
            return _Id(m)
        self.visiting.add(id(m))
        try:
            reads, env = self.helper_reads(m)
            return (_Id(m), self.reads(reads, env))
        finally:
            self.visiting.discard(id(m))

    def reads(self, reads: Reads, env: dict[str, Any]) -> tuple:
        out: list[Any] = []
        for name in reads.bare:
            v = _lookup(env, name)
            # most bare reads are the body's own locals, found nowhere: one constant, no dispatch
            out.append(_MISSING_FP if v is _MISSING else self.value(v))
        for root, chains in reads.groups:
            v = _lookup(env, root)
            if not isinstance(v, types.ModuleType):
                if root not in reads.bare:
                    out.append(self.value(v))
                continue
            for ch in chains:
                cur: Any = v
                depth = 1
                while isinstance(cur, types.ModuleType) and depth < len(ch):
                    cur = getattr(cur, ch[depth], _MISSING)
                    depth += 1
                out.append((depth, _MISSING if cur is _MISSING else self.value(cur)))
        return tuple(out)


_KINDS: dict[type, str] = {}
"""the frontend's types: ``"helper"`` (``@pypto.frontend.function``, fingerprinted by what its body reads) and
``"kernel"`` (a jit kernel: by identity); registered by `_frontend` (this module does not import it)"""


def register(cls: type, kind: str) -> None:
    _KINDS[cls] = kind


def _user_class(c: type) -> bool:
    """A class defined in Python outside the libraries, whose bases (but ``object``) are too: its instances
    are plain attribute holders (a dataclass, a config object, a namedtuple)."""
    if type(c) is not type:
        return False
    for b in c.__mro__:
        if b is object or b is tuple and hasattr(c, "_fields"):
            continue
        if _root(b.__module__) in _LIB_ROOTS or b.__module__ == "builtins" or "__dict__" not in vars(b):
            return False
    return True


def _lookup(env: dict[str, Any], name: str) -> Any:
    if name in env:
        return env[name]
    b = env.get("__builtins__", builtins)
    if isinstance(b, types.ModuleType):
        b = b.__dict__
    return b.get(name, _MISSING) if isinstance(b, dict) else _MISSING


def env_fingerprint(reads: Reads, env: dict[str, Any], helper_reads: Any) -> tuple:
    """The fingerprint of what a body reads from ``env`` (raises `Uncacheable`)."""
    return _Fp(helper_reads).reads(reads, env)


def freeze(v: Any) -> Any:
    """A hashable, exact image of a plain value (options, arguments); raises `Uncacheable`."""
    return _Fp(lambda m: (Reads((), ()), {})).value(v)


# ---- the cache ----------------------------------------------------------------------------------------------

class Entry:
    """What a trace produced: the program, the warnings it emitted, its kernel_args record.

    The program is handed to the kernel executor on every hit: executors must not modify a program (the
    in-process one and the sandbox's do not); `JitFunction.program` always traces afresh for callers that do.

    Why an entry holds so little (issue #31, session 7): everything a kernel call leaves alive is scanned by the
    cyclic collector's young collections when the call ends (the collector is paused during the call,
    `_gcpause`), and again when they are promoted. A miss used to keep the traced graph and the prepared form
    (a closure and several cells per op): ~11k objects for ``attn_softmax``'s 16-tile call, ~0.5 ms per young
    collection and ~4 ms per middle one. The graph is not needed to run the program again, and most call
    signatures are never seen twice (``attn_softmax``'s four calls have four), so the prepared form is made
    and kept on the first hit only.
    """

    __slots__ = ("program", "warnings", "arg_names", "prepared", "hit", "range", "base", "stops")

    def __init__(self, program: Any, warnings: tuple[tuple[Any, ...], ...],
                 arg_names: tuple[tuple[str, str], ...]) -> None:
        self.program = program
        self.warnings = warnings
        """``(code, message, file, line, op)`` per `Session.warn` call of the trace, in order"""
        self.arg_names = arg_names
        """(name, dtype name) per tensor parameter, for ``Session.kernel_args``"""
        self.prepared: Any = None
        """the in-process executor's executable form of the program, made on the first hit"""
        self.hit = False
        """the cache has handed this program out again (then its prepared form is kept)"""
        self.range: RangeTemplate | None = None
        """how to derive this program for other values of its ``range(p)`` parameters (`retrip`), or None"""
        self.base: Entry | None = None
        """a derived program's template entry: the program runs on the template's prepared form with ``stops``"""
        self.stops: dict[int, int] | None = None


class RangeTemplate:
    """A trace whose ``range(p)`` parameters (`_roll.range_sites`) only set the trip counts of rolled loops: the
    values it was traced for, the loops each sets (lid -> parameter) and the ``if`` branches decided at trace time
    inside those loops ((test, loop, parameter, branch), `_roll.fold`)."""

    __slots__ = ("values", "sites", "folds")

    def __init__(self, values: dict[str, int], sites: dict[int, str], folds: list[tuple[Any, Any, str, bool]]) -> None:
        self.values = values
        self.sites = sites
        self.folds = folds


RETRIP_MAX = 1 << 16
"""a derived trip count above this is traced instead (re-deciding the folded branches costs a Python step per trip)"""


def retrip(entry: Entry, values: dict[str, int]) -> Entry | None:
    """The entry of ``entry``'s kernel traced for other ``values`` of its ``range(p)`` parameters, derived from it:
    the same program with those loops' trip counts changed, when every ``if`` the trace decided inside them takes
    the same branch in every iteration of the new counts; else None (trace).

    Why it is the program a trace would give (`_roll.range_sites`): ``p`` is read nowhere but as the bound of
    those loops, each rolls (the first iteration traced as unrolled, the others as a device loop from 1 to ``p``),
    and the rolled body is traced with a symbolic index - the ops, their order and the first iteration do not depend
    on ``p``; only the folded ``if`` tests do, and they are decided again here over the new iterations."""
    t = entry.range
    if t is None or set(values) != set(t.values):
        return None
    if any(n > RETRIP_MAX for n in values.values()):
        return None
    for test, loop, param, taken in t.folds:
        rolled = range(1, values[param])
        if len(rolled) and fold(test, loop, rolled) is not taken:
            return None
    stops = {lid: values[param] for lid, param in t.sites.items()}
    e = Entry(_with_stops(entry.program, stops), entry.warnings, entry.arg_names)
    e.base, e.stops = entry, stops
    return e


def _with_stops(program: Any, stops: dict[int, int]) -> Any:
    """``program`` with the stop of loop ``lid`` set to ``stops[lid]`` (regions, paths and loops copied; ops shared:
    executors do not modify programs)."""
    def region(r: Any) -> Any:
        paths = []
        for p in r.paths:
            items = []
            for it in p.items:
                if type(it) is prog.Loop:
                    it = prog.Loop(lid=it.lid, name=it.name, start=it.start, stop=stops.get(it.lid, it.stop),
                                   step=it.step, body=region(it.body), file=it.file, line=it.line)
                items.append(it)
            paths.append(prog.Path(decisions=p.decisions, items=items))
        return prog.Region(paths=paths)

    return dataclasses.replace(program, body=region(program.body))


class TraceCache:
    """The programs of one kernel's last calls, by call key (least recently used dropped first)."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._entries: OrderedDict[Any, Entry] = OrderedDict()
        self._lock = threading.Lock()  # a kernel may be called from several threads
        self.hits = 0
        self.misses = 0

    def get(self, key: Any, *, count: bool = True) -> Entry | None:
        """The entry under ``key`` (``count=False``: a `RangeTemplate` lookup after a miss, not a hit or a miss)."""
        with self._lock:
            e = self._entries.get(key)
            if e is None:
                self.misses += count
                return None
            self._entries.move_to_end(key)
            self.hits += count
            return e

    def put(self, key: Any, entry: Entry) -> None:
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
