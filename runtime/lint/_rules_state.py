"""PF11: a kernel file keeps no state across calls (held-out attack A4).

Why: the verifier calls a wrapper a bounded number of times. A wrapper that counts its calls (a module-level
list it appends to, a ``global`` counter, a function attribute, a mutable default argument, a closure over a
list, a class attribute, an iterator or a random generator created at import) can be right for the first N
calls and wrong after; no finite number of verifier calls can tell it apart from an honest one. A PyPTO wrapper
has no reason to remember anything between calls: it allocates outputs, lays out inputs and calls the JIT
kernel, whose compilation cache is the framework's, not the file's. So the rule is an allow-list, not a search
for counters:

- **module-level (and class-level) bindings** must be *immutable* (numbers, strings, tuples, dtype and pypto
  constants, ``pypto.frontend.dynamic``, frozen dataclass instances whose field defaults are constants - red team
  s22 -, arithmetic on those), *functions* (defs,
  JIT kernels, kernel factories called with immutable arguments, lambdas, classes) or *tables* (a dict, list or
  set literal of those, e.g. ``{torch.float32: k_fp32}``). Anything else (``np.zeros(...)``, ``iter(...)``,
  ``default_rng()``, an instance of a plain class, ``functools.partial(...)``) is refused;
- functions read a **table** only (``T[k]``, ``T.get(k)``, ``k in T``, ``len(T)``, iterating it); any other use
  (passing it on, aliasing it, a method call) could change it;
- no function **writes outside its own locals**: no ``global``/``nonlocal``, no store or ``del`` through a
  subscript or attribute of a name it does not bind (a module name, a closure cell, a function: ``f.n = 1``, a
  class: ``C.hits += 1``) or of a call (``type(self).n = 1``), no mutating method (``append``, ``update``, ...),
  ``next()``, ``out=`` or ``np.copyto`` on such a name; no attribute read on a module-level function (function
  attributes, the JIT object's internals);
- **attributes are set only on a fresh instance**: ``self.<name> = ...`` in the ``__init__``/``__post_init__`` of a
  class of the file, nothing else (``tiles = _Tiles; tiles.seen += 1``, ``cls.calls += 1`` in a classmethod,
  ``info = np.finfo(np.float16); info.machep -= 1`` - numpy caches that object - and ``C.__init__(C)`` keep a
  counter in an object that outlives the call through a name the function binds: red team s20); ``setattr`` and
  ``delattr`` likewise, and ``X.__init__`` only as ``super().__init__``;
- no read of **the toolchain's option state** (``pypto.get_*``: ``get_global_config``, ``get_vec_tile_shapes``,
  ``get_options_tree``, ``get_current_scope``, ``get_last_function`` ...): a wrapper that sets an option and reads
  it back on its next call counts its calls in the framework's own scope (red team s20);
- **one kernel cache** per file, filled by one function: each cache tells its function one bit per key (was it
  stored before), two chained caches count to three (red team s20: wrong from the third call with the same input);
- **default arguments** are immutable or functions;
- no **memoizing decorator** (``functools.cache``/``lru_cache``/``cached_property``: a cache is state, and a
  cached function returning a list is a counter) and no call into **library-global state**: numpy's legacy
  random functions and ``np.set*``/``np.seterr``, ``torch.manual_seed``/``torch.set_*``/``torch.random``.

The rule reads the file only (AST). It is an early, explainable refusal; the verifier's varied call plan is
the second line (docs/verification.md).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum

from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._source import ParsedFile
from runtime.lint._util import at, kernel_pf, spec_attrs

__all__ = ["Kind", "module_bindings"]


class Kind(IntEnum):
    """What a module-level name holds, from the most harmless to the refused (the worst binding wins)."""

    IMPORT = 0
    IMM = 1
    FN = 2
    CLASS = 3
    TABLE = 4
    OTHER = 5


_PURE_BUILTINS = {"int", "float", "str", "bool", "tuple", "frozenset", "len", "min", "max", "abs", "round",
                  "sum", "divmod", "pow", "repr", "ord", "chr", "bytes", "complex", "isinstance", "range", "slice",
                  "sorted", "any", "all", "hex", "oct", "bin", "format"}
_PURE_PREFIX = ("math.", "pypto.", "ml_dtypes.")
_PURE_CALLS = {"numpy.dtype", "numpy.finfo", "numpy.iinfo", "torch.finfo", "torch.iinfo", "typing.TypeVar",
               "typing.NewType", "typing.NamedTuple", "dataclasses.field"}
_NUMPY_SCALARS = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "bool_", "longlong", "intc", "half", "single", "double"}
_READ_METHODS = {"get", "keys", "values", "items", "index", "count", "copy"}
_READ_CALLS = {"len", "sorted", "tuple", "list", "set", "frozenset", "dict", "min", "max", "sum", "any", "all",
               "enumerate", "zip", "iter", "reversed", "isinstance"}
_MUTATORS = {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add",
             "discard", "sort", "reverse", "fill", "put", "itemset", "resize", "setflags", "setfield", "send",
             "rotate", "appendleft", "extendleft", "popleft", "difference_update", "intersection_update",
             "symmetric_difference_update", "partition", "byteswap", "write", "__setitem__", "__delitem__",
             "__iadd__", "__imul__", "copy_", "fill_", "zero_", "add_", "mul_", "sub_", "div_", "index_put_",
             "masked_fill_", "scatter_", "set_", "resize_", "uniform_", "normal_", "random_", "bernoulli_",
             "integers", "random", "standard_normal", "normal", "uniform", "choice", "shuffle", "permutation",
             "manual_seed", "seed", "__next__"}
"""Method names that change their receiver (lists, dicts, sets, deques, arrays, tensors, generators, RNGs)."""
_WRITE_FUNCS = {"numpy.copyto", "numpy.put", "numpy.place", "numpy.putmask", "numpy.fill_diagonal",
                "numpy.put_along_axis", "next"}
_MEMO = {"functools.cache", "functools.lru_cache", "functools.cached_property"}
_MEMO_NAMES = {"cache", "lru_cache", "cached_property"}
"""Matched by the last name too (red team s30c: ``@np.random.bit_generator.re.functools.cache``)."""
_GLOBAL_STATE_PREFIX = ("numpy.random.", "torch.random.", "torch.set_", "torch.manual_seed", "torch.seed",
                        "torch.cuda.", "numpy.seterr", "numpy.set_", "numpy.setbufsize", "torch.use_deterministic")
_GLOBAL_STATE_OK = {"numpy.random.default_rng", "numpy.random.Generator", "numpy.random.PCG64",
                    "numpy.random.RandomState", "numpy.random.MT19937", "numpy.random.Philox", "numpy.random.SFC64"}
"""A generator made inside the call with a literal seed is local to the call (its state dies with it); the seed
is checked by :func:`_rng_checks`."""
_SEEDED_CTORS = _GLOBAL_STATE_OK - {"numpy.random.Generator"}
"""numpy generators: without a literal seed they draw OS entropy (red team s17: ``default_rng().random() >= 0.004``
dropped the tail on 0.4 % of calls)."""
_TORCH_DRAWS = {"torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.normal", "torch.bernoulli",
                "torch.multinomial", "torch.poisson", "torch.rand_like", "torch.randn_like", "torch.randint_like"}
"""torch draws: from torch's process-wide generator unless ``generator=`` names a local one (red team s17: the
position of the global generator counted the calls)."""
_TORCH_RNG_STATE = {"torch.initial_seed", "torch.seed", "torch.get_rng_state", "torch.set_rng_state",
                    "torch.default_generator"}
_TENSOR_DRAWS = {"uniform_", "random_", "normal_", "bernoulli_", "exponential_", "geometric_", "cauchy_",
                 "log_normal_"}
"""Tensor methods that fill from torch's global generator unless given ``generator=`` (even on a fresh tensor)."""


@dataclass
class Bindings:
    """Module-level names and what they hold; classes whose instances are immutable."""

    kinds: dict[str, Kind] = field(default_factory=dict)
    frozen_classes: set[str] = field(default_factory=set)
    factories: set[str] = field(default_factory=set)
    caches: set[str] = field(default_factory=set)
    """Module tables a function fills with JIT kernels (the kernel cache): read only by ``T[k]``, ``T.get(k)``,
    ``k in T``."""
    cache_writes: set[int] = field(default_factory=set)
    hits: list[Hit] = field(default_factory=list)
    kernel_flow: tuple[set[str], dict[str, set[str]]] | None = None
    """(red team s48) The functions that return a JIT kernel object and, per function, the parameters some call of
    it passes one to (:func:`_kernel_flow`, computed once per file)."""


def _targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return [stmt.target]
    return []


def _names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []


def _is_frozen_class(cls: ast.ClassDef, pf: ParsedFile) -> bool:
    for dec in cls.decorator_list:
        if isinstance(dec, ast.Call) and pf.name(dec.func).split(".")[-1] == "dataclass":
            if any(k.arg == "frozen" and isinstance(k.value, ast.Constant) and k.value.value is True
                   for k in dec.keywords):
                return True
    return any(pf.name(b) in ("typing.NamedTuple", "NamedTuple") for b in cls.bases)


class _Classifier:
    """Classifies expressions against the module's bindings (module level: what a name holds for its lifetime)."""

    def __init__(self, pf: ParsedFile, b: Bindings) -> None:
        self.pf, self.b = pf, b

    def kind(self, node: ast.AST | None, local_imm: frozenset[str] = frozenset()) -> Kind:
        pf, b = self.pf, self.b
        if node is None or isinstance(node, ast.Constant):
            return Kind.IMM
        if isinstance(node, ast.Name):
            if node.id in local_imm:
                return Kind.IMM
            k = b.kinds.get(node.id)
            if k is None:  # a builtin (``float``, ``None``) or an import alias
                return Kind.IMPORT if node.id in pf.aliases else Kind.IMM
            return k
        if isinstance(node, ast.Attribute):
            root = self.kind(_root(node), local_imm) if _root(node) is not None else Kind.OTHER
            if root in (Kind.IMPORT, Kind.IMM, Kind.CLASS):
                return Kind.IMM
            return Kind.OTHER
        if isinstance(node, (ast.Tuple, ast.UnaryOp, ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.JoinedStr,
                             ast.FormattedValue)):
            parts = [c for c in ast.iter_child_nodes(node) if not isinstance(c, (ast.operator, ast.unaryop,
                                                                                ast.boolop, ast.cmpop,
                                                                                ast.expr_context))]
            worst = max((self.kind(c, local_imm) for c in parts), default=Kind.IMM)
            return Kind.IMM if worst <= Kind.CLASS else Kind.OTHER
        if isinstance(node, ast.Subscript):
            inner = max(self.kind(node.value, local_imm), self.kind(node.slice, local_imm))
            return Kind.IMM if inner <= Kind.TABLE else Kind.OTHER
        if isinstance(node, ast.Slice):
            return max((self.kind(c, local_imm) for c in (node.lower, node.upper, node.step)), default=Kind.IMM)
        if isinstance(node, ast.Lambda):
            return Kind.FN
        if isinstance(node, (ast.Dict, ast.List, ast.Set)):
            elts = [*node.keys, *node.values] if isinstance(node, ast.Dict) else list(node.elts)
            worst = max((self.kind(e, local_imm) for e in elts if e is not None), default=Kind.IMM)
            return Kind.TABLE if worst <= Kind.CLASS else Kind.OTHER
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp)):
            bound = set(local_imm)
            for gen in node.generators:
                if self.kind(gen.iter, frozenset(bound)) > Kind.TABLE or gen.ifs and max(
                        self.kind(i, frozenset(bound | set(_names(gen.target)))) for i in gen.ifs) > Kind.CLASS:
                    return Kind.OTHER
                bound |= set(_names(gen.target))
            elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            worst = max(self.kind(e, frozenset(bound)) for e in elts)
            return Kind.TABLE if worst <= Kind.CLASS else Kind.OTHER
        if isinstance(node, ast.Call):
            args = [*node.args, *(k.value for k in node.keywords)]
            worst = max((self.kind(a.value if isinstance(a, ast.Starred) else a, local_imm) for a in args),
                        default=Kind.IMM)
            if worst > Kind.CLASS:
                return Kind.OTHER
            name = pf.name(node.func)
            if isinstance(node.func, ast.Name) and node.func.id in b.factories:
                return Kind.FN  # a JIT kernel made by a factory
            if isinstance(node.func, ast.Name) and node.func.id in b.frozen_classes:
                return Kind.IMM
            if (isinstance(node.func, ast.Name) and node.func.id in _PURE_BUILTINS
                    and node.func.id not in b.kinds and node.func.id not in pf.aliases):
                return Kind.IMM
            if name in _PURE_CALLS or name.startswith(_PURE_PREFIX):
                return Kind.IMM
            if name.startswith(("numpy.", "torch.")) and name.split(".")[-1] in _NUMPY_SCALARS | {"dtype"}:
                return Kind.IMM
            return Kind.OTHER
        return Kind.OTHER


def _root(node: ast.AST) -> ast.AST | None:
    """The innermost value of an attribute/subscript/call chain (``a`` in ``a.b[0].c``, the call in ``f().x``)."""
    cur = node
    while isinstance(cur, (ast.Attribute, ast.Subscript)):
        cur = cur.value
    return cur


def _module_stmts(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, descending into if/for/while/try/with blocks (they run once, at import)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            for name in ("body", "orelse", "finalbody"):
                yield from _module_stmts(getattr(stmt, name, []) or [])
            for h in getattr(stmt, "handlers", []) or []:
                yield from _module_stmts(h.body)


def module_bindings(pf: ParsedFile) -> Bindings:
    """What every module-level name holds (the worst of its bindings), and the hits for refused ones."""
    b = Bindings()
    stmts = list(_module_stmts(pf.tree.body))
    jit_owner = {id(f) for f in pf.jit_fns}
    for stmt in stmts:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            b.kinds[stmt.name] = Kind.FN
            if id(stmt) not in jit_owner and any(pf._within(j, stmt) for j in pf.jit_fns):
                b.factories.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            b.kinds[stmt.name] = Kind.CLASS
            if _is_frozen_class(stmt, pf):
                b.frozen_classes.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                b.kinds[alias.asname or alias.name.split(".")[0]] = Kind.IMPORT
    cls = _Classifier(pf, b)
    _settle(stmts, cls, b)
    classes = {stmt.name: stmt for stmt in stmts if isinstance(stmt, ast.ClassDef)}
    mutable = {name for name in b.frozen_classes if name in classes and _mutable_fields(classes[name], cls)}
    if mutable:  # their instances are not constants: classify what was bound from them again
        b.frozen_classes -= mutable
        _settle(stmts, cls, b)
    _find_caches_and_refusals(pf, stmts, cls, b)
    return b


_IMMUTABLE_FACTORIES = {"tuple", "frozenset", "int", "float", "str", "bool", "bytes", "complex"}


def _mutable_fields(node: ast.ClassDef, cls: _Classifier) -> bool:
    """A frozen dataclass or NamedTuple whose field defaults are not constants: its instances can carry state
    (red team s22: ``seen: list = field(default_factory=list)`` in a frozen dataclass, an instance of it as a
    default argument, and the wrapper appended to ``stats.seen`` - a call counter PF11 took for a constant)."""
    for stmt in node.body:
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if value is None:
            continue
        if isinstance(value, ast.Call) and cls.pf.name(value.func) in ("dataclasses.field", "field"):
            for k in value.keywords:
                if k.arg == "default_factory" and not (isinstance(k.value, ast.Name)
                                                        and k.value.id in _IMMUTABLE_FACTORIES):
                    return True
                if k.arg == "default" and cls.kind(k.value) > Kind.CLASS:
                    return True
        elif cls.kind(value) > Kind.CLASS:
            return True
    return False


def _settle(stmts: list[ast.stmt], cls: _Classifier, b: Bindings) -> None:
    """What each module-level assignment binds, in a few rounds (names defined from names defined later in the
    file settle)."""
    for _ in range(3):
        for stmt in stmts:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and getattr(stmt, "value", None):
                value = stmt.value
                kind = cls.kind(value)
                if isinstance(stmt, ast.AugAssign):
                    kind = max(kind, Kind.IMM)
                for t in _targets(stmt):
                    for n in _names(t):
                        if isinstance(t, (ast.Tuple, ast.List)) and kind == Kind.TABLE:
                            kind = Kind.IMM  # unpacking a literal table binds its elements
                        b.kinds[n] = kind if n not in b.kinds or b.kinds[n] == Kind.OTHER or (
                            b.kinds[n] not in (Kind.FN, Kind.CLASS, Kind.IMPORT)) else max(b.kinds[n], kind)
            elif isinstance(stmt, ast.For):
                kind = Kind.IMM if cls.kind(stmt.iter) <= Kind.TABLE else Kind.OTHER
                for n in _names(stmt.target):
                    b.kinds[n] = kind
            elif isinstance(stmt, (ast.With, ast.Try)):
                for item in getattr(stmt, "items", []):
                    for n in _names(item.optional_vars) if item.optional_vars is not None else []:
                        b.kinds[n] = Kind.OTHER


def _find_caches_and_refusals(pf: ParsedFile, stmts: list[ast.stmt], cls: _Classifier, b: Bindings) -> None:
    jit_names = {f.name for f in pf.jit_fns}
    for node in pf.nodes(ast.Assign):
        t = node.targets[0]
        if (len(node.targets) == 1 and isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                and b.kinds.get(t.value.id) == Kind.TABLE and pf.enclosing_fn.get(node) is not None
                and _is_kernel_value(node.value, pf, b, jit_names)):
            b.caches.add(t.value.id)
            b.cache_writes.add(id(t))
    used_in_functions = {n.id for n in pf.nodes(ast.Name) if isinstance(n.ctx, ast.Load) and (
        pf.enclosing_fn.get(n) is not None or any(isinstance(p, ast.Lambda) for p in _ancestors(n, pf)))}
    for stmt in stmts:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and getattr(stmt, "value", None):
            # an object nothing calls into cannot carry state from one call to the next (a vendor file's
            # `_BUILD_DIR = os.environ.get(...)`); one that a function reads, or that wraps a function or table of
            # this file (`k_wrapper = _make()`, `functools.partial(f, [])`: it may be the entry point), can
            wraps_local = any(isinstance(x, ast.Name) and b.kinds.get(x.id) in (Kind.FN, Kind.CLASS, Kind.TABLE)
                              for x in ast.walk(stmt.value or stmt))
            for t in _targets(stmt):
                for n in _names(t):
                    if b.kinds.get(n) == Kind.OTHER and (n in used_in_functions or wraps_local):
                        b.hits.append(at(stmt, f"module-level `{n}` holds a mutable object "
                                               f"(`{ast.unparse(stmt.value or stmt)[:60]}`) that outlives a call"))
                if isinstance(t, (ast.Attribute, ast.Subscript)):
                    root = _root(t)
                    if isinstance(root, ast.Name) and b.kinds.get(root.id) in (Kind.FN, Kind.CLASS):
                        b.hits.append(at(stmt, f"attribute or item stored on `{root.id}` (function and class "
                                               "attributes are state across calls)"))
        elif isinstance(stmt, ast.ClassDef):
            for inner in stmt.body:
                if isinstance(inner, (ast.Assign, ast.AnnAssign)) and inner.value is not None:
                    if cls.kind(inner.value) > Kind.CLASS:
                        b.hits.append(at(inner, f"class `{stmt.name}` attribute holds a mutable object "
                                                f"(`{ast.unparse(inner.value)[:60]}`) shared by every call"))


def _ancestors(node: ast.AST, pf: ParsedFile) -> Iterator[ast.AST]:
    cur = pf.parents.get(node)
    while cur is not None:
        yield cur
        cur = pf.parents.get(cur)


def _is_kernel_value(value: ast.AST, pf: ParsedFile, b: Bindings, jit_names: set[str]) -> bool:
    """``value`` is a JIT kernel: the name of a ``@jit`` function, a kernel-factory call or ``jit(...)``."""
    if isinstance(value, ast.Name):
        return value.id in jit_names
    if isinstance(value, ast.Call):
        return (isinstance(value.func, ast.Name) and value.func.id in b.factories) or pf.name(
            value.func).split(".")[-1] == "jit"
    return False


def _local_names(fn: ast.AST, pf: ParsedFile) -> set[str]:
    """Names ``fn`` binds itself: parameters, assignment/loop/with/except/walrus/comprehension targets, nested
    defs and imports (what its own scope holds; lambdas count as part of the function they are written in)."""
    names: set[str] = set()
    args_nodes = [fn] + [n for n in pf.fn_nodes.get(fn, []) if isinstance(n, ast.Lambda)
                         and pf.enclosing_fn.get(n) is fn]
    for a_owner in args_nodes:
        a = a_owner.args  # type: ignore[attr-defined]
        names |= {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]}
    for n in pf.fn_nodes.get(fn, []):
        if pf.enclosing_fn.get(n) is not fn:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and pf.enclosing_fn.get(
                    n) is fn:
                names.add(n.name)
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names |= {al.asname or al.name.split(".")[0] for al in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
    return names


def _functions(pf: ParsedFile) -> list[ast.AST]:
    """Every function body: defs (nested and methods included) and module-level lambdas."""
    out: list[ast.AST] = [*pf.nodes(ast.FunctionDef), *pf.nodes(ast.AsyncFunctionDef)]
    out += [lam for lam in pf.nodes(ast.Lambda) if pf.enclosing_fn.get(lam) is None]
    return out


def _body_nodes(fn: ast.AST, pf: ParsedFile) -> list[ast.AST]:
    if isinstance(fn, ast.Lambda):
        return list(ast.walk(fn.body))
    return [n for n in pf.fn_nodes.get(fn, []) if pf.enclosing_fn.get(n) is fn]


_INIT_METHODS = ("__init__", "__post_init__")


def _fresh_self(fn: ast.AST, pf: ParsedFile) -> str | None:
    """The instance parameter of ``fn`` when it is the ``__init__``/``__post_init__`` of a class of the file (the one
    place an attribute may be set: on the instance being made), else None."""
    if not isinstance(fn, ast.FunctionDef) or fn.name not in _INIT_METHODS:
        return None
    if not isinstance(pf.parents.get(fn), ast.ClassDef) or any(
            pf.name(d.func if isinstance(d, ast.Call) else d).split(".")[-1] in ("classmethod", "staticmethod")
            for d in fn.decorator_list):
        return None
    params = [*fn.args.posonlyargs, *fn.args.args]
    return params[0].arg if params else None


def _attribute_writes(fn: ast.AST, pf: ParsedFile, label: str) -> Iterator[Hit]:
    """Attributes set anywhere but on the instance an ``__init__`` makes (see the module docstring; red team s20:
    a class attribute, a classmethod's ``cls``, numpy's cached ``np.finfo`` object, each reached through a name the
    function binds, counted the calls)."""
    own = _fresh_self(fn, pf)
    for n in _body_nodes(fn, pf):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
            if not (isinstance(n.value, ast.Name) and n.value.id == own):
                yield at(n, f"`{label}` sets attribute `{ast.unparse(n)[:60]}`: an object reached from a call can "
                            "outlive it (a class, numpy's cached objects) - set attributes only as `self.<name> = "
                            "...` in `__init__`")
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr"):
            target = n.args[0] if n.args else None
            if not (isinstance(target, ast.Name) and target.id == own):
                yield at(n, f"`{label}` calls `{n.func.id}(...)`: set attributes only as `self.<name> = ...` in "
                            "`__init__` (other objects can outlive the call)")
        elif isinstance(n, ast.Attribute) and n.attr in _INIT_METHODS and not (
                isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name) and n.value.func.id == "super"):
            yield at(n, f"`{label}` reaches `{ast.unparse(n)[:60]}`: an `__init__` called on an existing object (a "
                        "class) sets state that outlives the call; only `super().__init__(...)` is allowed")


def _option_reads(pf: ParsedFile) -> Iterator[Hit]:
    """``pypto.get_*`` anywhere in the file: the toolchain's option scope outlives a call, so reading it back is a
    counter (red team s20: ``get_global_config``/``set_global_config``, ``get_options_tree`` after
    ``set_semantic_label``). Kernels set options; none needs to read them."""
    if "pypto" not in pf.source:
        return
    from runtime.lint._rules_security import _api_roots

    roots = _api_roots(pf)
    for node in pf.nodes(ast.Attribute):
        full = pf.name(node) or ""
        if node.attr.startswith("get_") and full.split(".")[0] in roots:
            yield at(node, f"`{full}` reads the toolchain's option state, which outlives a call (a wrapper that sets "
                           "an option and reads it back counts its calls): set options, never read them")


def _one_cache(pf: ParsedFile, b: Bindings) -> Iterator[Hit]:
    """At most one kernel cache per file, filled by one function (see the module docstring)."""
    fillers: dict[str, set[int]] = {}
    first: dict[str, ast.AST] = {}
    for node in pf.nodes(ast.Subscript):
        if id(node) in b.cache_writes and isinstance(node.value, ast.Name):
            fn = pf.enclosing_fn.get(node)
            fillers.setdefault(node.value.id, set()).add(id(fn))
            first.setdefault(node.value.id, node)
    for name in sorted(fillers, key=lambda k: first[k].lineno)[1:]:  # type: ignore[attr-defined]
        yield at(first[name], f"a second kernel cache `{name}`: a file keeps at most one (each tells its function "
                              "whether a key was stored before; two chained caches count calls)")
    for name, fns in fillers.items():
        if len(fns) > 1:
            yield at(first[name], f"the kernel cache `{name}` is filled by {len(fns)} functions: fill it in one "
                                  "(each filler's keys tell it what the others stored)")


_ALIAS_CALLS = frozenset({"next", "iter", "getattr", "max", "min", "vars", "reversed", "get", "setdefault", "pop",
                          "attrgetter", "itemgetter", "reduce", "cast"})
"""Calls whose result may be (or hold) one of their arguments: a local bound to one is as old as that argument."""


def _held_names(fn: ast.AST, pf: ParsedFile, local: set[str]) -> tuple[set[str], set[str]]:
    """(locals of ``fn`` that may hold an object which outlives the call, the modules ``fn`` imports itself).

    Why: a write through a local was taken as a write into the call's own objects, so ``seen = functools.__all__;
    seen.append(0)``, ``def w(x, _seen=np.typecodes)`` and ``import functools`` inside the function kept a counter in
    a library's module-level list (red team s25). A local is *held* when it is an import of the function, a
    parameter whose default is not a constant, or bound (assignment, walrus, ``for``, ``with``, comprehension) from
    an expression that reaches a name the function does not bind, or a held one, other than through a call's
    fresh result - calls that hand an argument back (``next(iter([...]))``, ``getattr``, ``d.get``) included."""
    imports: set[str] = set()
    held: set[str] = set()
    own = [n for n in pf.fn_nodes.get(fn, []) if pf.enclosing_fn.get(n) is fn]
    for n in own:
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            imports |= {al.asname or al.name.split(".")[0] for al in n.names}
    held |= imports
    a = fn.args  # type: ignore[attr-defined]
    pos = [*a.posonlyargs, *a.args]
    pairs = list(zip(pos[len(pos) - len(a.defaults):], a.defaults)) + \
        [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    held |= {p.arg for p, d in pairs if not isinstance(d, ast.Constant)}

    def reaches(e: ast.AST | None, elements: bool = False) -> bool:
        if e is None:
            return False
        if isinstance(e, ast.Name):
            return e.id not in local or e.id in held
        if isinstance(e, (ast.Attribute, ast.Subscript)):
            return reaches(_root(e))
        if isinstance(e, ast.Call):
            name = pf.name(e.func) or (e.func.attr if isinstance(e.func, ast.Attribute) else "")
            if name.split(".")[-1] in _ALIAS_CALLS:
                return any(reaches(x, True) for x in [*e.args, *(k.value for k in e.keywords)]) or \
                    (isinstance(e.func, ast.Attribute) and reaches(e.func.value))
            return elements and any(reaches(x, True) for x in e.args)  # `for t in enumerate(T)`
        if isinstance(e, (ast.IfExp, ast.BoolOp, ast.NamedExpr, ast.Starred)):
            return any(reaches(c, elements) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr))
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            return elements and any(reaches(c, True) for c in e.elts)
        if isinstance(e, ast.Dict):
            return elements and any(reaches(c, True) for c in e.values if c is not None)
        return False

    def targets(t: ast.AST) -> set[str]:
        return {x.id for x in ast.walk(t) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}

    for _ in range(4):
        before = len(held)
        for n in own:
            if isinstance(n, ast.Assign) and n.value is not None:
                unpack = any(isinstance(t, (ast.Tuple, ast.List)) for t in n.targets)
                if reaches(n.value, unpack):
                    for t in n.targets:
                        held |= targets(t)
            elif isinstance(n, (ast.AnnAssign, ast.NamedExpr)) and n.value is not None and reaches(n.value):
                held |= targets(n.target)
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)) and reaches(n.iter, True):
                held |= targets(n.target)
            elif isinstance(n, (ast.With, ast.AsyncWith)):
                for item in n.items:
                    if item.optional_vars is not None and reaches(item.context_expr):
                        held |= targets(item.optional_vars)
        if len(held) == before:
            break
    return held, imports


def _fn_checks(fn: ast.AST, pf: ParsedFile, b: Bindings) -> Iterator[Hit]:
    local = _local_names(fn, pf) if not isinstance(fn, ast.Lambda) else {
        p.arg for p in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    label = getattr(fn, "name", "<lambda>")
    held, imports = _held_names(fn, pf, local) if not isinstance(fn, ast.Lambda) else (set(), set())
    if not isinstance(fn, ast.Lambda):
        yield from _attribute_writes(fn, pf, label)
        yield from _jit_object_attributes(fn, pf, b, label)

    def free_root(node: ast.AST) -> str | None:
        """The name at the root of a chain when the function does not bind it, or binds it to something that
        outlives the call (`_held_names`); ``"<call>"`` for a call root."""
        root = _root(node)
        while isinstance(root, ast.NamedExpr):  # `(seen := np.typecodes).update(...)`: the value's root
            root = _root(root.value)
        if isinstance(root, ast.Call):
            return "<call>"
        if isinstance(root, ast.Name) and (root.id not in local or root.id in held):
            return root.id
        return None

    for n in _body_nodes(fn, pf):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            kw = "global" if isinstance(n, ast.Global) else "nonlocal"
            yield at(n, f"`{kw} {', '.join(n.names)}` in `{label}`: a function that rebinds an outer name keeps "
                        "state across calls")
        elif (isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del))
              and id(n) not in b.cache_writes):
            root = free_root(n)
            if root is not None:
                yield at(n, f"`{label}` writes into `{ast.unparse(n)[:60]}`, which outlives the call "
                            f"(`{root}` is not a local of `{label}`)")
        elif isinstance(n, ast.Call):
            name = pf.name(n.func)
            if isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS:
                root = free_root(n.func.value)
                # `pypto.add(...)`: an API call; not `np.typecodes.update(...)`, a module's object (red team s25)
                direct_api = (b.kinds.get(root or "") == Kind.IMPORT or root in imports) and \
                    isinstance(n.func.value, ast.Name)
                if root not in (None, "<call>") and not direct_api:  # a call's fresh result may be changed
                    yield at(n, f"`{label}` calls `{ast.unparse(n.func)[:60]}(...)`, which changes `{root}` "
                                "(it outlives the call)")
            if name in _WRITE_FUNCS and n.args:
                root = free_root(n.args[0])
                if root is not None:
                    yield at(n, f"`{label}` calls `{name}` on `{ast.unparse(n.args[0])[:40]}`, which outlives "
                                "the call")
            for kw in n.keywords:
                if kw.arg == "out" and free_root(kw.value) is not None:
                    yield at(n, f"`{label}` writes `out=` into `{ast.unparse(kw.value)[:40]}`, which outlives "
                                "the call")
            if (name.startswith(_GLOBAL_STATE_PREFIX) and name not in _GLOBAL_STATE_OK
                    and not any(isinstance(c, ast.Call) for c in ast.walk(n.func))):  # not a method of a fresh value
                yield at(n, f"`{name}(...)` in `{label}` uses library-global state (it outlives the call)")
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local:
            kind = b.kinds.get(n.id)
            parent = pf.parents.get(n) if not isinstance(fn, ast.Lambda) else _lambda_parent(fn, n)
            if kind == Kind.TABLE and id(parent) in b.cache_writes:
                pass
            elif kind == Kind.TABLE and n.id in b.caches and not _cache_use(n, parent):
                yield at(n, f"`{label}` uses the kernel cache `{n.id}` other than by `T[k]`, `T.get(k)` or `k in T` "
                            "(its size or contents would tell which calls came before)")
            elif kind == Kind.TABLE and not _read_only_use(n, parent, pf, fn):
                yield at(n, f"`{label}` uses the module-level table `{n.id}` other than by reading it "
                            "(`T[k]`, `T.get(k)`, `k in T`, `len(T)`, `for v in T`): it could change it")
            elif kind == Kind.OTHER:
                yield at(n, f"`{label}` uses module-level `{n.id}`, a mutable object that outlives the call")
            elif (kind == Kind.FN and isinstance(parent, ast.Attribute) and parent.value is n
                  and n.id not in b.factories):
                yield at(n, f"`{label}` reads attribute `{n.id}.{parent.attr}` of a function (function attributes "
                            "and the JIT object's internals are state)")


def _kernel_expr(e: ast.AST | None, names: set[str], makers: set[str], caches: set[str]) -> bool:
    """``e`` evaluates to a JIT kernel object: one of ``names``, a kernel cache's value (``T[k]``, ``T.get(k)``), a
    maker's result (``_kernel_for(dt)``), or either side of a conditional / the value of a walrus holding one."""
    if isinstance(e, ast.Name):
        return e.id in names
    if isinstance(e, ast.Subscript):
        return isinstance(e.value, ast.Name) and e.value.id in caches
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
        return e.func.id in makers
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "get":
        return isinstance(e.func.value, ast.Name) and e.func.value.id in caches
    if isinstance(e, ast.IfExp):
        return _kernel_expr(e.body, names, makers, caches) or _kernel_expr(e.orelse, names, makers, caches)
    return isinstance(e, ast.NamedExpr) and _kernel_expr(e.value, names, makers, caches)


def _kernel_flow(pf: ParsedFile, b: Bindings) -> tuple[set[str], dict[str, set[str]]]:
    """``(makers, params)``: the module-level functions that return a JIT kernel object (a ``@pypto.frontend.jit``
    function they define, a kernel cache's value, another maker's result or a local bound to one of those - not a
    wrapper that defines a kernel, calls it and returns its outputs), and per module-level function the parameters
    some call of it in the file passes a kernel object to (``_note(kernel)``). Once per file (lint's walks stay
    linear)."""
    if b.kernel_flow is not None:
        return b.kernel_flow
    fns = {f.name: f for f in pf.tree.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
    makers: set[str] = set()
    params: dict[str, set[str]] = {}
    local: dict[str, set[str]] = {name: {j.name for j in pf.jit_fns if j is not f and pf._within(j, f)}
                                  for name, f in fns.items()}
    nodes = {name: list(ast.walk(f)) for name, f in fns.items()}

    for _ in range(6):
        before = (len(makers), sum(len(v) for v in local.values()))
        for name in fns:
            inner = local[name]
            for n in nodes[name]:
                if isinstance(n, ast.Assign) and _kernel_expr(n.value, inner, makers, b.caches):
                    inner |= {t.id for t in n.targets if isinstance(t, ast.Name)}
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in fns:
                    callee = fns[n.func.id].args
                    positional = [*callee.posonlyargs, *callee.args]
                    for a, arg in zip(n.args, positional, strict=False):
                        if _kernel_expr(a, inner, makers, b.caches):
                            local[n.func.id].add(arg.arg)
                            params.setdefault(n.func.id, set()).add(arg.arg)
                    for kw in n.keywords:
                        if kw.arg is not None and _kernel_expr(kw.value, inner, makers, b.caches):
                            local[n.func.id].add(kw.arg)
                            params.setdefault(n.func.id, set()).add(kw.arg)
            if any(isinstance(r, ast.Return) and _kernel_expr(r.value, inner, makers, b.caches) for r in nodes[name]):
                makers.add(name)
        if (len(makers), sum(len(v) for v in local.values())) == before:
            break
    b.kernel_flow = (makers, params)
    return b.kernel_flow


def _jit_object_attributes(fn: ast.AST, pf: ParsedFile, b: Bindings, label: str) -> Iterator[Hit]:
    """Any attribute of a JIT kernel object reached other than through a module-level name: a factory's result
    (``_kernel_for(dt).options``), a kernel cache's value (``_KERNELS[k].options``, ``.get(k)``), a local bound to
    one of those, or a ``@pypto.frontend.jit`` function defined in this function. The kernel object is kept (in the
    cache) across calls, and its attributes are the caller's to change: red team s48 kept a list of the calls served
    in a cached kernel's public ``options`` dict and took a wrong path from the 1001st call of a dtype - verification
    calls a dtype about a hundred times. A kernel object is called, never looked into (the module-level name rule
    above already says so for a kernel defined at module level)."""
    jit_here = {f.name for f in pf.jit_fns if f is not fn and pf._within(f, fn)}
    makers, params = _kernel_flow(pf, b)
    jit_here |= params.get(getattr(fn, "name", ""), set())

    body = list(_body_nodes(fn, pf))
    kernels = set(jit_here)  # grows by the locals bound to a kernel
    for _ in range(4):  # aliases of aliases
        before = len(kernels)
        for n in body:
            if isinstance(n, ast.Assign | ast.AnnAssign | ast.NamedExpr) and n.value is not None \
                    and _kernel_expr(n.value, kernels, makers, b.caches):
                for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                    names = t.elts if isinstance(t, ast.Tuple | ast.List) else [t]  # not `T[k] = ...`'s T
                    kernels |= {x.id for x in names if isinstance(x, ast.Name)}
        if len(kernels) == before:
            break
    for n in body:
        if isinstance(n, ast.Attribute) and _kernel_expr(n.value, kernels, makers, b.caches):
            yield at(n, f"`{label}` reads attribute `{ast.unparse(n)[:60]}` of a JIT kernel object (a kernel kept "
                        "in a cache or made by a factory outlives the call; its attributes are state): call it only")


def _lambda_parent(lam: ast.Lambda, node: ast.AST) -> ast.AST | None:
    for p in ast.walk(lam):
        for c in ast.iter_child_nodes(p):
            if c is node:
                return p
    return None


def _cache_use(n: ast.Name, parent: ast.AST | None) -> bool:
    if isinstance(parent, ast.Subscript) and parent.value is n and isinstance(parent.ctx, ast.Load):
        return True
    if isinstance(parent, ast.Attribute) and parent.value is n and parent.attr == "get":
        return True
    return isinstance(parent, ast.Compare) and any(c is n for c in parent.comparators) and all(
        isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops)


_API_ROOTS = ("pypto.", "numpy.", "torch.", "math.")


def _read_only_use(n: ast.Name, parent: ast.AST | None, pf: ParsedFile, fn: ast.AST) -> bool:
    if isinstance(parent, ast.Subscript) and parent.value is n and isinstance(parent.ctx, ast.Load):
        return True
    if isinstance(parent, ast.Attribute) and parent.value is n and parent.attr in _READ_METHODS:
        return True
    if isinstance(parent, ast.Compare) and any(c is n for c in parent.comparators) and all(
            isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
        return True
    if (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in _READ_CALLS
            and any(a is n for a in parent.args)):
        return True
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is n:
        return True
    call = pf.parents.get(parent) if isinstance(parent, ast.keyword) else parent
    if isinstance(call, ast.Call) and call.func is not n:  # an argument of a PyPTO/numpy/torch API call
        name = pf.name(call.func)
        kw = parent.arg if isinstance(parent, ast.keyword) else None
        return (name.startswith(_API_ROOTS) and name not in _WRITE_FUNCS and kw != "out"
                and not name.startswith(_GLOBAL_STATE_PREFIX))
    return False


def _literal_seed(node: ast.AST | None, pf: ParsedFile) -> bool:
    """An int literal, a list/tuple of them, or a module-level name bound to one (``SEED = 0``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_literal_seed(e, pf) for e in node.elts)
    if isinstance(node, ast.Name):
        bound = [st.value for st in pf.tree.body if isinstance(st, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == node.id for t in st.targets)]
        return len(bound) == 1 and isinstance(bound[0], ast.Constant) and _literal_seed(bound[0], pf)
    return False


def _seed_arg(call: ast.Call) -> ast.AST | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg in ("seed", "x")), None)


def _rng_checks(pf: ParsedFile) -> Iterator[Hit]:
    """Randomness that differs between calls or hosts: a generator without a literal seed (OS entropy), a draw
    from numpy's or torch's process-wide generator, reading or resetting their state. Anywhere in the file but an
    ``if __name__ == "__main__":`` block - JIT bodies included (they run on the host when traced)."""
    msg = ("a kernel computes the same way on every call and host: make a local generator with a literal seed "
           "(`np.random.default_rng(0)`, `torch.Generator().manual_seed(0)` passed as `generator=`)")
    for call in pf.nodes(ast.Call):
        name = pf.name(call.func)
        f = call.func
        if pf.in_main_block(call):
            continue
        if name in _SEEDED_CTORS:
            if not _literal_seed(_seed_arg(call), pf):
                yield at(call, f"`{name}(...)` without a literal seed draws OS entropy; {msg}")
        elif name == "numpy.random.Generator":
            if not call.args:
                yield at(call, f"`{name}()` needs a seeded bit generator; {msg}")
        elif name in _TORCH_DRAWS:
            if not any(k.arg == "generator" for k in call.keywords):
                yield at(call, f"`{name}(...)` draws from torch's process-wide generator (it moves on every call); "
                         f"{msg}")
        elif name in _TORCH_RNG_STATE or name.startswith("torch.random."):
            yield at(call, f"`{name}(...)` reads or resets torch's process-wide generator; {msg}")
        elif isinstance(f, ast.Attribute) and f.attr in _TENSOR_DRAWS:
            if not any(k.arg == "generator" for k in call.keywords):
                yield at(call, f"`.{f.attr}(...)` fills from torch's process-wide generator; {msg}")
        elif isinstance(f, ast.Attribute) and f.attr == "manual_seed" and name != "torch.manual_seed":
            if not _literal_seed(_seed_arg(call), pf):
                yield at(call, f"`.manual_seed(...)` without a literal seed; {msg}")
        elif isinstance(f, ast.Attribute) and f.attr == "seed" and not call.args and not call.keywords:
            yield at(call, f"`.seed()` reseeds from OS entropy; {msg}")
    for node in pf.nodes(ast.Attribute):
        if pf.name(node) in ("torch.default_generator", "torch.initial_seed") and not isinstance(
                pf.parents.get(node), ast.Call):
            yield at(node, f"`{pf.name(node)}` is torch's process-wide generator; {msg}")


_HOOK = re.compile(r"(^|_)hooks?($|_)")


def _hooks(pf: ParsedFile) -> Iterator[Hit]:
    """Hooks (``t.register_hook``, ``m.register_forward_hook``, ``torch.nn.modules.module.register_module_*_hook``,
    ``handle.remove``): a hook runs later, outside the call, and its handle's ``id`` comes from a counter of
    torch's that moves on every registration (red team s30: ``probe.register_hook(print).id < 40`` counted the
    wrapper's calls and dropped the tail from the 41st)."""
    for node in pf.nodes(ast.Attribute):
        if _HOOK.search(node.attr):
            yield at(node, f"`.{node.attr}` registers or reads a hook: it runs outside the call, and its handle counts "
                           "registrations process-wide (state across calls); a kernel file computes in the call")


_EMPTY = frozenset({"empty", "empty_like", "empty_strided", "new_empty"})
_READS = frozenset({"item", "tolist", "numpy", "any", "all"})


def _uninitialised_reads(pf: ParsedFile) -> Iterator[Hit]:
    """An ``empty`` buffer read before anything wrote it: its bytes are the freed memory of an earlier call (red team
    s30e: ``scratch = torch.empty(8192)`` held the previous call's chunk; a marker and a count written back into it
    dropped the tail from about the 40th call). A buffer is written by a store into it, a method that fills it, or a
    call it is passed to (the JIT kernel); an element read, ``.item()``/``.tolist()`` or a comparison before that is
    refused. ``y = torch.empty_like(x); kernel(x, y); return y[:, :n]`` reads after the write."""
    for fn in [*pf.nodes(ast.FunctionDef), *pf.nodes(ast.AsyncFunctionDef)]:
        body = _body_nodes(fn, pf)
        names = {n.targets[0].id: n.lineno for n in body if isinstance(n, ast.Assign) and len(n.targets) == 1
                 and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Call)
                 and pf.name(n.value.func).rsplit(".", 1)[-1] in _EMPTY}
        if not names:
            continue
        first_write: dict[str, int] = {}
        reads: list[tuple[str, ast.AST]] = []
        for n in body:
            if not (isinstance(n, ast.Name) and n.id in names and getattr(n, "lineno", 0) > names[n.id]):
                continue
            parent = pf.parents.get(n)
            line = n.lineno
            if isinstance(parent, ast.Subscript) and parent.value is n:
                if isinstance(parent.ctx, ast.Store):
                    first_write[n.id] = min(first_write.get(n.id, line), line)
                elif not isinstance(parent.slice, ast.Slice) or isinstance(pf.parents.get(parent), (
                        ast.Compare, ast.BinOp, ast.Attribute)):
                    reads.append((n.id, parent))
            elif isinstance(parent, ast.Attribute) and parent.value is n:
                if parent.attr in _READS:
                    reads.append((n.id, parent))
                else:
                    first_write[n.id] = min(first_write.get(n.id, line), line)  # `.fill_(0)`, `.copy_(x)` ...
            elif isinstance(parent, ast.Compare):
                reads.append((n.id, parent))
            elif isinstance(parent, (ast.Call, ast.keyword, ast.Starred, ast.Tuple, ast.List)):
                first_write[n.id] = min(first_write.get(n.id, line), line)  # handed to the kernel or a filler
        for name, node in reads:
            if getattr(node, "lineno", 0) < first_write.get(name, 1 << 30):
                yield at(node, f"`{ast.unparse(node)[:40]}` reads the `empty` buffer `{name}` before anything wrote "
                               "it: its bytes are an earlier call's freed memory (state across calls); allocate with "
                               "zeros, or read it after the kernel wrote it")
                break


@check("PF11")
def pf11_no_state_across_calls(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    b = module_bindings(pf)
    yield from b.hits
    yield from _rng_checks(pf)
    yield from _option_reads(pf)
    yield from _one_cache(pf, b)
    yield from _hooks(pf)
    yield from _uninitialised_reads(pf)
    cls = _Classifier(pf, b)
    # every lambda's defaults too: one in a def's default (``def w(x, _log=lambda seen=[]: seen)``) is made once,
    # with the def, and its list outlives every call (red team s22b)
    inner = [lam for lam in pf.nodes(ast.Lambda) if pf.enclosing_fn.get(lam) is not None]
    for fn in [*_functions(pf), *inner]:
        args = fn.args  # type: ignore[attr-defined]
        for d in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            if cls.kind(d) > Kind.CLASS:
                yield at(d, f"default argument `{ast.unparse(d)[:40]}` of `{getattr(fn, 'name', '<lambda>')}` is "
                            "a mutable object shared by every call")
    for fn in _functions(pf):
        for dec in getattr(fn, "decorator_list", []):
            target = dec.func if isinstance(dec, ast.Call) else dec
            if pf.name(target) in _MEMO or pf.name(target).rsplit(".", 1)[-1] in _MEMO_NAMES:
                yield at(dec, f"`@{pf.name(target)}` on `{fn.name}` keeps a cache across calls "  # type: ignore[attr-defined]
                              "(the JIT kernel caches its own compilation)")
        yield from _fn_checks(fn, pf, b)
        yield from _cache_probes(fn, pf, b, frozenset(spec_attrs(ctx)))


_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.comprehension, ast.ListComp, ast.SetComp, ast.DictComp,
          ast.GeneratorExp, ast.Lambda)


def _probe_key(n: ast.Name, parent: ast.AST | None, pf: ParsedFile) -> ast.AST | None:
    """The key a kernel-cache use looks up (``T[k]``, ``T.get(k)``, ``k in T``), or None when it has none."""
    if isinstance(parent, ast.Subscript):
        return parent.slice
    if isinstance(parent, ast.Attribute):
        call = pf.parents.get(parent)
        return call.args[0] if isinstance(call, ast.Call) and call.func is parent and call.args else None
    if isinstance(parent, ast.Compare) and len(parent.ops) == 1:
        return parent.left
    return None


def _in_loop(n: ast.AST, fn: ast.AST, pf: ParsedFile) -> bool:
    for x in _ancestors(n, pf):
        if x is fn:
            return False
        if isinstance(x, _LOOPS):
            return True
    return False


_KEY_READS = frozenset({"shape", "dtype", "ndim", "size", "itemsize"})
_KEY_CALLS = frozenset({"len", "int", "float", "bool"})


def _fn_params(fn: ast.AST) -> list[str]:
    a = fn.args  # type: ignore[attr-defined]
    return [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]]


def _argument_in_key(key: ast.AST, fn: ast.AST, pf: ParsedFile, depth: int = 0,
                     attrs: frozenset[str] = frozenset()) -> str | None:
    """An argument of the call used whole in a cache key rather than through its shape, dtype, rank or a number
    made of it: a parameter of ``fn`` (directly or through a name bound to it) that no caller in the file fills
    with such a value (a function nobody in the file calls is an entry: its arguments are the caller's objects).
    None when the key is built from shapes, dtypes and constants only, or from an entry's SPEC attribute (``attrs``:
    a number the caller passes, as `float(cap)` is; red team s37: ``_KERNELS[(x.dtype, cap)]`` was refused)."""
    if depth > 4 or isinstance(fn, ast.Lambda):
        return None
    params = _fn_params(fn)
    body = _body_nodes(fn, pf)
    values = _stored_values(body)
    seen: set[str] = set()
    itself: set[int] = set()
    """the parameter read in its own rebinding (``x = x.contiguous()``): the argument, not the local"""
    todo = [key]
    while todo:
        for n in ast.walk(todo.pop()):
            if not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)) or (n.id in seen and id(n) not in itself):
                continue
            parent = pf.parents.get(n)
            if isinstance(parent, ast.Attribute) and parent.attr in _KEY_READS or isinstance(parent, ast.Call) and \
                    n is not parent.func and isinstance(parent.func, ast.Name) and parent.func.id in _KEY_CALLS:
                continue
            gp = pf.parents.get(parent) if isinstance(parent, ast.Subscript) and parent.value is n else None
            if isinstance(gp, ast.Call) and parent in gp.args and isinstance(gp.func, ast.Name) and \
                    gp.func.id in _KEY_CALLS:
                continue  # `float(betas[0])`: a number made of the argument (red team s36b: an honest cache was refused)
            seen.add(n.id)
            if n.id in values and id(n) not in itself:
                for v in values[n.id]:
                    itself.update(id(m) for m in ast.walk(v) if isinstance(m, ast.Name) and m.id == n.id)
                    todo.append(v)
            elif n.id in params:
                found = _caller_argument(fn, params.index(n.id), n.id, pf, depth, attrs if n.id not in values
                                         else frozenset())
                if found is not None:
                    return found
    return None


def _stored_values(body: list[ast.AST]) -> dict[str, list[ast.AST]]:
    """Every expression a name of a function body is bound from, in any form: ``a = e``, ``a, b = e1, e2`` (each its
    own; ``a, b = f()``: both from the call), ``a: T = e``, ``a += e``, ``(a := e)``, ``for a in e``, ``with e as a``.
    Red team s37b: ``cap, c = x, float(cap)`` hid the input tensor in a kernel cache's key - only single-name
    assignments were followed."""
    out: dict[str, list[ast.AST]] = {}

    def bind(target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, ast.Name):
            out.setdefault(target.id, []).append(value)
        elif isinstance(target, ast.Starred):
            bind(target.value, value)
        elif isinstance(target, ast.Tuple | ast.List):
            split = isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts) and not any(
                isinstance(e, ast.Starred) for e in [*target.elts, *value.elts])
            for k, t in enumerate(target.elts):
                bind(t, value.elts[k] if split else value)  # type: ignore[attr-defined]

    for n in body:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                bind(t, n.value)
        elif isinstance(n, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and n.value is not None:
            bind(n.target, n.value)
        elif isinstance(n, ast.For | ast.AsyncFor | ast.comprehension):
            bind(n.target, n.iter)
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            bind(n.optional_vars, n.context_expr)
    return out


def _caller_argument(fn: ast.AST, index: int, name: str, pf: ParsedFile, depth: int,
                     attrs: frozenset[str] = frozenset()) -> str | None:
    """``_argument_in_key`` of what the file's callers of ``fn`` pass as its parameter ``name`` (position
    ``index``); ``name`` itself when nothing in the file calls ``fn``."""
    fname = getattr(fn, "name", None)
    calls = [c for c in pf.nodes(ast.Call) if isinstance(c.func, ast.Name) and c.func.id == fname]
    if not calls:
        return None if name in attrs else name
    for c in calls:
        arg = next((k.value for k in c.keywords if k.arg == name), None)
        if arg is None and index < len(c.args) and not any(isinstance(x, ast.Starred) for x in c.args[:index + 1]):
            arg = c.args[index]
        caller = pf.enclosing_fn.get(c)
        if arg is None or caller is None:
            continue  # a default, or a module-level call (constants)
        found = _argument_in_key(arg, caller, pf, depth + 1, attrs)
        if found is not None:
            return found
    return None


def _is_cache_lookup(node: ast.AST | None, b: Bindings) -> bool:
    """``T[k]`` or ``T.get(k, ...)`` of a kernel cache ``T``: what a memoizing function returns on a hit."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Name) and node.value.id in b.caches
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name) and node.func.value.id in b.caches)


def _after(stmt: ast.AST, fn: ast.AST, pf: ParsedFile) -> Iterator[ast.AST]:
    """Every node of ``fn`` (not of its nested functions) that can run after the simple statement ``stmt``: the
    statements after it in its block, then after each block around it (an ``if``'s other branch is not after it)."""
    node = stmt
    while node is not fn and node is not None:
        parent = pf.parents.get(node)
        if parent is None:
            return
        for field_name in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(parent, field_name, None)
            if isinstance(block, list) and any(x is node for x in block):
                for later in block[[id(x) for x in block].index(id(node)) + 1:]:
                    yield from _walk_own(later)
                    if isinstance(later, (ast.Return, ast.Raise)):
                        return  # the block ends the function here: what follows the blocks around it is not after
        node = parent


def _walk_own(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` that does not enter nested functions, lambdas or classes (their code runs elsewhere)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if n is not node and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(n))


def _cache_returns_what_it_stores(fn: ast.AST, pf: ParsedFile, b: Bindings, body: list[ast.AST],
                                  label: str) -> Iterator[Hit]:
    """A kernel cache is memoization only if the function that fills it uses what it stores. Red team s39
    (``fixture_s39/sc_cache_stores_spec_cap``): on a miss the factory built the kernel for the caller's ``cap`` and
    returned it, and stored under the key a kernel built with the SPEC's cap - the first call of a (shape, cap) was
    right and every later one wrong; verification calls a shape with another attribute value once (a random repeat
    aside), so it passed. After a store ``T[key] = k`` (not in a loop), ``k`` is not bound again, and the function
    returns or calls no other kernel than ``k`` or the cache's entry."""
    if isinstance(fn, ast.Lambda):
        return
    jit_names = {f.name for f in pf.jit_fns}
    kernels = set(jit_names)  # names that hold a kernel in this function: @jit defs, factory results
    for n in body:
        if isinstance(n, ast.Assign) and _is_kernel_value(n.value, pf, b, jit_names):
            kernels |= {t.id for t in n.targets if isinstance(t, ast.Name)}

    def other_kernel(node: ast.AST | None, name: str | None) -> bool:
        if node is None or _is_cache_lookup(node, b):
            return False
        if isinstance(node, ast.Name):
            return node.id != name and node.id in kernels
        return _is_kernel_value(node, pf, b, jit_names)

    for store in (n for n in body if isinstance(n, ast.Assign) and len(n.targets) == 1
                  and id(n.targets[0]) in b.cache_writes):
        name = store.value.id if isinstance(store.value, ast.Name) else None
        if _in_loop(store, fn, pf):
            yield at(store, f"`{label}` stores in its kernel cache inside a loop: the kernel it uses may not be the "
                            "one it stores")
            continue
        for n in _after(store, fn, pf):
            if name is not None and (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) or (
                    isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name)):
                yield at(n, f"`{label}` binds `{name}` again after storing it in its kernel cache: the kernel it "
                            "uses may not be the one it stores")
            elif isinstance(n, ast.Return) and other_kernel(n.value, name) or (
                    isinstance(n, ast.Call) and other_kernel(n.func, name)):
                what = ast.unparse(n.value if isinstance(n, ast.Return) else n.func)[:40]  # type: ignore[arg-type]
                yield at(n, f"`{label}` {'returns' if isinstance(n, ast.Return) else 'calls'} `{what}` after "
                            f"storing `{ast.unparse(store.value)[:40]}` in its kernel cache: use the kernel it "
                            "stores (or the cache's entry) - a cache that hands out other than it stores is right "
                            "on a key's first call only")


def _key_misses_a_parameter(fn: ast.AST, pf: ParsedFile, b: Bindings, body: list[ast.AST],
                             label: str) -> Iterator[Hit]:
    """A kernel factory that stores its kernel under a key that leaves out one of its own parameters the kernel is
    built from hands a later call with another value the first call's kernel (s38 accident2: ``_kernel_for(
    dtype_name, rows)`` cached under ``dtype_name`` - the one-row decode kernel, made first, served every batch after
    it; verification's first call was a full batch, so it passed). Every parameter the function reads outside the
    cache's own lookups must reach the key, directly or through the names the key is built from."""
    if isinstance(fn, ast.Lambda):
        return
    params = set(_fn_params(fn))
    values = _stored_values(body)
    keys = [n for n in body if isinstance(n, ast.Subscript) and id(n) in b.cache_writes]
    if not keys or not params:
        return
    lookups: set[int] = set()
    for n in body:
        if isinstance(n, ast.Name) and n.id in b.caches:
            key = _probe_key(n, pf.parents.get(n), pf)
            if key is not None:
                lookups.update(id(m) for m in ast.walk(key))
    for w in keys:
        covered: set[str] = set()
        seen: set[str] = set()
        todo: list[ast.AST] = [w.slice]
        while todo:
            for m in ast.walk(todo.pop()):
                if isinstance(m, ast.Name) and m.id not in seen:
                    seen.add(m.id)
                    if m.id in params:
                        covered.add(m.id)
                    todo.extend(values.get(m.id, []))
        read = {m.id for m in pf.fn_nodes.get(fn, []) if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Load)
                and m.id in params and id(m) not in lookups and pf.parents.get(m) is not w}
        for name in sorted(read - covered):
            yield at(w, f"`{label}` stores its kernel in `{ast.unparse(w.value)}` under "
                        f"`{ast.unparse(w.slice)}`, which leaves out its parameter `{name}`: a later call with "
                        f"another `{name}` gets the kernel the first call built; key the cache by every "
                        "parameter the kernel is built from")


def _cache_probes(fn: ast.AST, pf: ParsedFile, b: Bindings, attrs: frozenset[str] = frozenset()) -> Iterator[Hit]:
    """A kernel cache is memoization: the function that fills it looks up the one key it stores under, once per
    call. Any other lookup - another key (``(dt, r) in T`` for r in a range counts the shapes seen), a lookup in a
    loop, a key whose names are rebound in between, a lookup from a function that does not fill the cache - reads
    which calls came before (attack c17 of session 16: the tail dropped once 12 row counts were seen)."""
    if isinstance(fn, ast.Lambda) or not b.caches:
        return
    label = getattr(fn, "name", "<lambda>")
    body = _body_nodes(fn, pf)
    writes: dict[str, set[str]] = {}
    for n in body:
        if isinstance(n, ast.Subscript) and id(n) in b.cache_writes and isinstance(n.value, ast.Name):
            writes.setdefault(n.value.id, set()).add(ast.dump(n.slice))
    binds: dict[str, int] = {}
    for p in _fn_params(fn):
        binds[p] = binds.get(p, 0) + 1
    for n in body:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            binds[n.id] = binds.get(n.id, 0) + 1
    local = set(binds)
    for n in body:
        if isinstance(n, ast.Subscript) and id(n) in b.cache_writes:
            whole = _argument_in_key(n.slice, fn, pf, attrs=attrs)
            if whole is not None:
                yield at(n, f"`{label}` keys the kernel cache `{ast.unparse(n.value)}` with the argument `{whole}` "
                            "itself: an object's identity or values tell a repeated call from a new one (red team "
                            "s30: a cache keyed on the input tensor never hit in verification and changed the result "
                            "from a caller's second call); key it by shapes, dtypes and constants")
    yield from _key_misses_a_parameter(fn, pf, b, body, label)
    yield from _cache_returns_what_it_stores(fn, pf, b, body, label)
    for n in body:
        if not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in b.caches
                and n.id not in local):
            continue
        parent = pf.parents.get(n)
        if isinstance(parent, ast.Subscript) and id(parent) in b.cache_writes:
            continue
        key = _probe_key(n, parent, pf)
        if key is None:
            continue  # a use other than a lookup: `_fn_checks` words it
        text = ast.unparse(key)[:40]
        stored = writes.get(n.id)
        if not stored:
            yield at(n, f"`{label}` looks up the kernel cache `{n.id}` but does not fill it: look a kernel up only "
                        "in the function that stores it (its lookups tell which calls came before)")
        elif ast.dump(key) not in stored:
            yield at(n, f"`{label}` looks up `{text}` in the kernel cache `{n.id}`, not the key it stores under: "
                        "other keys' presence tells which calls came before")
        elif _in_loop(n, fn, pf):
            yield at(n, f"`{label}` looks up the kernel cache `{n.id}` inside a loop: once per call, with the key "
                        "it stores under")
        else:
            again = sorted({x.id for x in ast.walk(key) if isinstance(x, ast.Name) and binds.get(x.id, 0) > 1})
            if again:
                yield at(n, f"`{label}` looks up the kernel cache `{n.id}` with `{text}`, whose "
                            f"`{', '.join(again)}` the function binds more than once: the key must be one value "
                            "per call")

