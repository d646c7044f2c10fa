"""Which int attributes a kernel must honour: what ``golden()`` does with each one (unseen drawing version 14).

Why: verification varied float attributes only (version 10); an int stayed at the SPEC's value, so a kernel right
only there passed every verification (red team s38, ``tests/redteam/test_round26_s38.py``: AdamW's bias correction
with the power forgotten at ``step: 1``, a sliding window built in as the SPEC's 8, a Sinkhorn one round short at
``iters: 20``). A blanket rule would refuse honest kernels: an int may name an axis, a tile size, a layout or a flag,
and a kernel written for the SPEC's axis is right. So the role of each int is read from golden.py's syntax tree
(static, nothing runs): an int golden uses as a **count** (``range(n)``), an **exponent** (``b ** step``,
``pow``), a **bound** compared with positions (``j > i - window``, ``tril(x, diagonal=w)``) or a **scale** (an
operand of ``+ - * /`` with a tensor or a float) varies; an int that ever reaches an axis (``dim=``, ``axis=``, a
reduction's positional dim), an index or slice, a shape (``reshape``, ``view``, ``arange``, ``zeros``, ``topk``'s k),
a dtype, a truth test (``if flag:``), an equality test (``mode == 2``, ``x.shape[1] != n``) or a call the analysis does
not know stays - and so does every int whose use is not recognised: a false refusal of an honest kernel is worse
than a miss here. The SPEC can say otherwise (``vary_ints`` / ``fixed_ints``, docs/opdir.md).

The analysis follows the int through aliases (``n = int(iters)``, ``w = window - 1``), through values computed
from it (``bc = 1 - beta ** step``: checked for the same vetoes, a derived value returned is not), and into helper
functions of golden.py it is passed to (``mhc_sinkhorn_golden(x, eps, num_iters)``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

__all__ = ["INT_KINDS", "RESHAPES", "IntRole", "int_attribute_roles", "string_attribute_values"]

INT_KINDS = ("count", "exponent", "bound", "scale")
"""The roles that make an int vary, in the order one is picked when golden uses an int in several (a count first:
its values are the cheap ones, :func:`runtime.opdir._unseen.int_values`)."""

_BUILTIN_CONVERT = frozenset({"int", "float", "round", "abs", "min", "max"})
"""Builtins the int passes through unchanged in role (``int(window)``, ``max(n - 1, 0)``); as ``np.max`` or
``torch.round`` they are other functions (a reduction with an axis, decimals)."""
_DTYPE_CONVERT = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "double",
                            "single", "half", "bfloat16", "longlong", "intc", "int_", "float_"})
"""Scalar conversions of numpy / torch (``np.float32(step)``), and every function of ``math``."""
_POW = frozenset({"pow", "power", "float_power"})
_TRI = frozenset({"tril", "triu"})
"""Their diagonal (``k`` / ``diagonal`` / the second positional) is a bound on positions."""
_SHAPE_CTORS = frozenset({"zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "identity",
                          "tri", "rand", "randn", "randint", "indices", "tril_indices", "triu_indices", "Tensor"})
"""Every argument is a shape (or a size)."""
_VALUE = frozenset({
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "square", "reciprocal", "negative",
    "sin", "cos", "tan", "tanh", "sinh", "cosh", "arctan", "atan", "sigmoid", "erf", "relu", "silu", "gelu",
    "softplus", "sign", "absolute", "fabs", "maximum", "minimum", "fmax", "fmin", "where", "multiply", "divide",
    "true_divide", "add", "subtract", "mul", "div", "sub", "matmul", "dot", "mm", "bmm", "outer", "einsum", "rint",
    "nan_to_num", "full_like", "asarray", "array", "as_tensor", "tensor", "from_numpy", "copy", "clone", "detach",
    "contiguous", "numpy", "item", "isfinite", "isnan", "logical_and", "logical_or", "logical_not", "masked_fill",
    "exp_", "mul_", "div_", "add_", "sub_", "ascontiguousarray", "linear", "hypot", "atan2", "arctan2"})
"""Elementwise or linear-algebra functions: a tainted argument is data (an operand), never an axis - as long as it is
not a keyword that is one (:data:`_AXIS_KW`)."""
_AXIS_KW = frozenset({"dim", "axis", "axes", "dims", "dim0", "dim1", "start_dim", "end_dim", "dtype", "shape",
                      "size", "sizes", "k", "num_classes", "offset", "shifts", "repeats", "chunks", "diagonal",
                      "sections", "indices_or_sections", "split_size_or_sections", "kernel_size", "stride",
                      "padding", "dilation", "groups", "out", "keepdim", "keepdims", "index", "indices"})
_DATA_KW = frozenset({"input", "a", "x", "other", "self", "tensor", "x1", "x2", "y", "fill_value", "value",
                      "condition", "alpha"})
_MAX_DEPTH = 4
"""Helper functions of golden.py followed this deep."""
RESHAPES = frozenset({"reshape", "view"})
"""(unseen drawing version 19) Calls whose shape arguments an int may reach and still vary (``IntRole.reshape_only``):
``x.reshape(b, num_groups, d // num_groups)``. ``view`` counts only with two arguments or more (``x.view(torch.int8)``
is a dtype)."""
EXPANDS = frozenset({"expand", "broadcast_to"})
"""(unseen drawing version 20) Calls whose size arguments an int may reach and still vary like a reshape's
(``IntRole.shape_only``): ``m.unsqueeze(-1).expand(n, num_expert_group, e // num_expert_group)`` - llada2_gate_select's
group mask, a group mean broadcast back over its group. With several arguments, or the ``size`` / ``shape`` one."""


@dataclass
class IntRole:
    """What golden() does with one int attribute: the kinds of use found and the reasons it must stay."""

    kinds: set[str] = field(default_factory=set)
    stays: list[str] = field(default_factory=list)
    reshapes: list[str] = field(default_factory=list)
    """The reasons of ``stays`` that are shape arguments of a reshape (:data:`RESHAPES`)."""
    expands: list[str] = field(default_factory=list)
    """(version 20) The reasons of ``stays`` that are size arguments of an expand (:data:`EXPANDS`)."""

    @property
    def kind(self) -> str | None:
        """The role the values are drawn for; None when the int stays (a veto, or no recognised use)."""
        if self.stays:
            return None
        return next((k for k in INT_KINDS if k in self.kinds), None)

    @property
    def reshape_only(self) -> bool:
        """(version 19) Every reason it stays is a shape argument of a reshape: ``num_groups`` of a GroupNorm. Such an
        int runs at other values golden() accepts with outputs of the SPEC's shapes (red team round 31,
        ``gn_groups_fixed``: a kernel built for the SPEC's 8 groups passed every seed)."""
        return bool(self.stays) and all(s in self.reshapes for s in self.stays)

    @property
    def shape_only(self) -> bool:
        """(version 20) Every reason it stays is a shape argument of a reshape or a size argument of an expand
        (:data:`EXPANDS`): llada2_gate_select's ``num_expert_group``, which sizes both the view into groups and the
        group mask expanded back over them. Such an int is a shape int as :attr:`reshape_only`'s is."""
        return bool(self.stays) and all(s in self.reshapes or s in self.expands for s in self.stays)

    def merge(self, other: IntRole) -> None:
        self.kinds |= other.kinds
        self.stays += [s for s in other.stays if s not in self.stays]
        self.reshapes += [s for s in other.reshapes if s not in self.reshapes]
        self.expands += [s for s in other.expands if s not in self.expands]


def _last(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _imported(tree: ast.Module) -> set[str]:
    """Names golden.py binds by an import anywhere (``np``, ``torch``, ``F``, ``math``, a from-imported function)."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import | ast.ImportFrom):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return out


def _constant(node: ast.expr) -> bool:
    """A literal number (signed, in a conversion): a validation against it (``step < 1``) is no use of the value."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    if isinstance(node, ast.Call) and _last(node.func) in _BUILTIN_CONVERT | _DTYPE_CONVERT and len(node.args) == 1 \
            and not node.keywords:
        return _constant(node.args[0])
    return False


class _Analysis:
    """One pass over a function for a set of tainted names (the int and its aliases), collecting the role."""

    def __init__(self, tree: ast.Module, depth: int = 0, seen: set[tuple[str, str, bool]] | None = None) -> None:
        self.tree = tree
        self.helpers = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.modules = _imported(tree)
        self.converts = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and _last(n.value) in _DTYPE_CONVERT
                         for t in n.targets if isinstance(t, ast.Name)}
        """Local names of a scalar conversion (``f = np.float32``)."""
        self.depth = depth
        self.seen = seen if seen is not None else set()

    def function(self, fdef: ast.FunctionDef, name: str, derived: bool = False) -> IntRole:
        """The role of parameter ``name`` of ``fdef`` (``derived``: a value computed from the int, not the int)."""
        role = IntRole()
        key = (fdef.name, name, derived)
        if key in self.seen:
            return role
        self.seen.add(key)
        parent = {child: node for node in ast.walk(fdef) for child in ast.iter_child_nodes(node)}
        alias, values = ({name}, set()) if not derived else (set(), {name})
        done: set[tuple[str, bool]] = set()
        while True:
            todo = [(n, False) for n in alias] + [(n, True) for n in values]
            todo = [t for t in todo if t not in done]
            if not todo:
                return role
            for n, is_value in todo:
                done.add((n, is_value))
                for node in ast.walk(fdef):
                    if isinstance(node, ast.Name) and node.id == n and isinstance(node.ctx, ast.Load):
                        self._occurrence(node, is_value, parent, role, alias, values)

    def _occurrence(self, node: ast.expr, is_value: bool, parent: dict[ast.AST, ast.AST], role: IntRole,
                    alias: set[str], values: set[str]) -> None:
        """Walk up from one use of a tainted name to what consumes it."""
        cur: ast.AST = node
        mixed = is_value  # the expression is no longer the int itself (an operand with a tensor, a derived value)
        arith = False
        keyword: str | None = None
        while True:
            p = parent.get(cur)
            if p is None:
                return
            if isinstance(p, ast.keyword):
                keyword, cur = p.arg, p
                continue
            if isinstance(p, ast.BinOp):
                if isinstance(p.op, ast.Pow) and cur is p.right:
                    role.kinds.add("exponent")
                    return
                other = p.right if cur is p.left else p.left
                if not _constant(other) and not self._mentions(other, alias | values):
                    mixed = True
                    arith = arith or isinstance(p.op, ast.Add | ast.Sub | ast.Mult | ast.Div)
                cur = p
                continue
            if isinstance(p, ast.UnaryOp):
                if isinstance(p.op, ast.Not):
                    return self._stay(role, "a truth test (a flag)")
                cur = p
                continue
            if isinstance(p, ast.BoolOp):
                return self._stay(role, "a truth test (a flag)")
            if isinstance(p, ast.IfExp | ast.If | ast.While | ast.Assert):
                if cur is p.test:
                    return self._stay(role, "a truth test (a flag)")
                cur = p
                continue
            if isinstance(p, ast.Compare):
                return self._compare(p, cur, role, alias | values, mixed)
            if isinstance(p, ast.Slice):
                return self._stay(role, "an index or a slice")
            if isinstance(p, ast.Subscript):
                if cur is p.slice:
                    return self._stay(role, "an index or a slice")
                if not mixed:
                    return self._stay(role, "subscripted")
                cur = p
                continue
            if isinstance(p, ast.Attribute):
                if not mixed:
                    return self._stay(role, f"an int's attribute .{p.attr}")
                cur = p
                continue
            if isinstance(p, ast.Call):
                if cur is p.func:  # a method of a derived value (``w.astype(...)``): its arguments are checked apart
                    cur = p
                    continue
                verdict = self._call(p, cur, keyword, mixed, role)
                keyword = None
                if verdict == "stop":
                    return
                if verdict == "value":  # an operand of an elementwise function (``np.maximum(x, k)``)
                    arith = True
                mixed = mixed or verdict != "through"
                cur = p
                continue
            if isinstance(p, ast.Tuple | ast.List | ast.Set | ast.Dict | ast.Starred | ast.ListComp | ast.SetComp
                          | ast.GeneratorExp | ast.DictComp | ast.Lambda | ast.comprehension):
                if isinstance(p, ast.comprehension) and cur is p.iter and not mixed:
                    return self._stay(role, "iterated")
                cur = p
                continue
            if isinstance(p, ast.FormattedValue | ast.JoinedStr):
                return  # an error message
            if isinstance(p, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
                if arith:
                    role.kinds.add("scale")
                if isinstance(p, ast.AugAssign | ast.AnnAssign) and cur is p.target:
                    return
                targets = p.targets if isinstance(p, ast.Assign) else [p.target]
                stored = [t for tgt in targets for t in ast.walk(tgt) if isinstance(t, ast.Subscript | ast.Attribute)]
                if stored and not mixed:
                    return self._stay(role, "stored into a container")
                names = {t.id for tgt in targets for t in ast.walk(tgt)
                         if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
                (values if mixed else alias).update(names)
                return
            if isinstance(p, ast.Return):
                if not mixed:
                    return self._stay(role, "returned")
                if arith:
                    role.kinds.add("scale")
                return
            if isinstance(p, ast.Expr):
                return
            if isinstance(p, ast.For) and cur is p.iter:
                return self._stay(role, "iterated")
            return self._stay(role, f"used in a {type(p).__name__}")

    def _stay(self, role: IntRole, why: str) -> None:
        if why not in role.stays:
            role.stays.append(why)

    @staticmethod
    def _mentions(node: ast.AST, names: set[str]) -> bool:
        return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))

    def _compare(self, p: ast.Compare, cur: ast.AST, role: IntRole, tainted: set[str], mixed: bool) -> None:
        """``j > i - window`` is a bound (positions on either side); ``step < 1`` and ``int(n) != n`` validate the
        int; ``mode == 2`` and ``x.shape[1] != n`` make it a selector or a size."""
        operands = [p.left, *p.comparators]
        others = [o for o in operands if o is not cur and not self._mentions(o, tainted)]
        if not others and not mixed:
            return  # ``int(step) != step``: a validation of the int itself
        if any(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn | ast.Is | ast.IsNot) for op in p.ops):
            return self._stay(role, "an equality test (a selector or a size it must match)")
        if all(_constant(o) for o in others) and not mixed:
            return  # ``step < 1``: a validation against a literal
        role.kinds.add("bound")

    def _call(self, call: ast.Call, cur: ast.AST, keyword: str | None, mixed: bool, role: IntRole) -> str:
        """What a call does with the tainted argument ``cur``: "stop" (the role is decided), "through" (the result
        is still the int: a conversion), "derived" (the result is a value computed from it, followed further)."""
        func = call.func
        name = _last(func)
        root = _root(func) if isinstance(func, ast.Attribute) else None
        method = isinstance(func, ast.Attribute) and root not in self.modules
        position = next((i for i, a in enumerate(call.args) if a is cur), None)
        if isinstance(func, ast.Name) and func.id in self.helpers and func.id != "golden":
            return self._helper(self.helpers[func.id], position, keyword, mixed, role)
        if isinstance(func, ast.Name) and name == "range":
            role.kinds.add("count")
            return "stop"
        if keyword is None and position is not None and isinstance(func, ast.Name) and (
                name in ("min", "max") or position == 0 and (name in _BUILTIN_CONVERT or name in self.converts)):
            return "through"
        if keyword is None and position == 0 and not method and (root == "math" or name in _DTYPE_CONVERT
                                                                  or name == "index"):
            return "through"
        if name in _POW:
            if position == (0 if method else 1) or keyword in ("exponent", "exp", "y"):
                role.kinds.add("exponent")
                return "stop"
            return "derived"
        if name in _TRI:
            if position == (0 if method else 1) or keyword in ("k", "diagonal"):
                role.kinds.add("bound")
                return "stop"
        if name in _SHAPE_CTORS:
            self._stay(role, f"a shape or size ({name}())")
            return "stop"
        if name in RESHAPES and keyword in (None, "shape", "newshape") and (name == "reshape" or len(call.args) >= 2) \
                and (method or position != 0):
            why = f"{keyword}= of {name}()" if keyword else f"an argument of {name}()"
            self._stay(role, why)
            if why not in role.reshapes:
                role.reshapes.append(why)
            return "stop"
        if name in EXPANDS and (keyword in ("size", "shape") or (keyword is None and (method and len(call.args) >= 2
                                                                                     or not method and position == 1))):
            why = f"{keyword}= of {name}()" if keyword else f"an argument of {name}()"
            self._stay(role, why)
            if why not in role.expands:
                role.expands.append(why)
            return "stop"
        if keyword in _AXIS_KW:
            self._stay(role, f"the {keyword}= of {name}()")
            return "stop"
        if name in _VALUE:
            return "value"
        if not method and position == 0 and mixed:
            return "derived"  # a derived tensor into a reduction, a reshape...: the call's other arguments are its own
        self._stay(role, f"{keyword}= of {name}()" if keyword else f"an argument of {name}()")
        return "stop"

    def _helper(self, fdef: ast.FunctionDef, position: int | None, keyword: str | None, mixed: bool,
                role: IntRole) -> str:
        """Follow the int into a helper function of golden.py (``mhc_sinkhorn_golden(x, eps, num_iters)``)."""
        params = [a.arg for a in [*fdef.args.posonlyargs, *fdef.args.args]]
        name = params[position] if position is not None and position < len(params) else None
        if keyword is not None:
            name = keyword if keyword in params or keyword in [a.arg for a in fdef.args.kwonlyargs] else None
        if name is None or self.depth >= _MAX_DEPTH:
            self._stay(role, f"passed to {fdef.name}() where it is not followed")
            return "stop"
        sub = _Analysis(self.tree, self.depth + 1, self.seen)
        role.merge(sub.function(fdef, name, derived=mixed))
        return "stop"


def int_attribute_roles(tree: ast.Module, names: list[str]) -> dict[str, IntRole]:
    """Per attribute name, what ``golden()`` of ``tree`` (golden.py's syntax tree) does with it.

    An attribute golden does not take as a named parameter gets a role that stays (``**kwargs`` hides its use)."""
    golden = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "golden"), None)
    out: dict[str, IntRole] = {}
    for name in names:
        params = [] if golden is None else [a.arg for a in [*golden.args.posonlyargs, *golden.args.args,
                                                              *golden.args.kwonlyargs]]
        if golden is None or name not in params:
            out[name] = IntRole(stays=["not a parameter of golden()"])
            continue
        out[name] = _Analysis(tree).function(golden, name)
    return out


def _strings(node: ast.expr) -> list[str] | None:
    """The str literals of ``node`` (one, or a tuple / list / set of them); None when it is anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
        leaves = [_strings(e) for e in node.elts]
        if all(x is not None and len(x) == 1 for x in leaves):
            return [x[0] for x in leaves if x]
    return None


_SEQ_CALLS = frozenset({"tuple", "list", "set", "frozenset", "sorted"})


def _named(tree: ast.Module, fdef: ast.FunctionDef) -> dict[str, ast.expr]:
    """(version 20) The values bound to plain names at module level of golden.py and in ``fdef`` (``fdef``'s own
    shadow the module's): where a table or a tuple of modes named by a constant is looked up."""
    out: dict[str, ast.expr] = {}
    for body in (tree.body, [n for n in ast.walk(fdef) if n is not fdef]):
        for n in body:
            if isinstance(n, ast.Assign):
                out.update({t.id: n.value for t in n.targets if isinstance(t, ast.Name)})
            elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value is not None:
                out[n.target.id] = n.value
    return out


def _elements(node: ast.expr, named: dict[str, ast.expr], depth: int = 0) -> list[ast.expr] | None:
    """(version 20) The element nodes a constant collection yields when iterated or tested with ``in``: the items of a
    tuple / list / set, the keys of a dict (a literal or ``dict(silu=..., gelu=...)``, ``dict([("a", f), ...])``),
    through a name bound to one, ``tuple(...)`` / ``frozenset(...)`` / ``sorted(...)`` and ``.keys()``; None when it
    is anything else."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, ast.Name) and node.id in named:
        return _elements(named[node.id], named, depth + 1)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return list(node.elts)
    if isinstance(node, ast.Dict):
        return [k for k in node.keys if k is not None]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "dict":
            keys: list[ast.expr] = [ast.Constant(k.arg) for k in node.keywords if k.arg]
            for a in node.args:
                pairs = _elements(a, named, depth + 1) or []
                keys += [p.elts[0] for p in pairs if isinstance(p, ast.Tuple | ast.List) and p.elts]
            return keys
        if node.func.id in _SEQ_CALLS and len(node.args) == 1:
            return _elements(node.args[0], named, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys" \
            and not node.args:
        return _elements(node.func.value, named, depth + 1)
    return None


def _collection_strings(node: ast.expr, named: dict[str, ast.expr]) -> list[str]:
    """(version 20) The str literals among :func:`_elements` of ``node``, or its value when it names one str."""
    value = named.get(node.id) if isinstance(node, ast.Name) else None
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [value.value]
    return [e.value for e in _elements(node, named) or [] if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def _loop_bindings(fdef: ast.FunctionDef, named: dict[str, ast.expr]) -> dict[str, list[str]]:
    """(version 20) Per name a ``for`` loop or a comprehension of ``fdef`` binds from a constant collection, the str
    values it takes: ``for m in MODES``, ``for name, fn in ((\"sum\", np.sum), ...)``, ``for k, f in TABLE.items()``
    (the keys) - so ``if name == mode`` names the modes."""
    out: dict[str, list[str]] = {}
    loops = [(n.target, n.iter) for n in ast.walk(fdef) if isinstance(n, ast.For | ast.AsyncFor)]
    loops += [(g.target, g.iter) for n in ast.walk(fdef) if isinstance(n, ast.comprehension) for g in [n]]
    for target, it in loops:
        items = it.func.value if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) \
            and it.func.attr == "items" and not it.args else None
        if items is not None and isinstance(target, ast.Tuple) and target.elts \
                and isinstance(target.elts[0], ast.Name):
            out.setdefault(target.elts[0].id, []).extend(_collection_strings(items, named))
            continue
        elements = _elements(it, named)
        if elements is None:
            continue
        if isinstance(target, ast.Name):
            out.setdefault(target.id, []).extend(v for e in elements for v in _strings(e) or []
                                                 if isinstance(e, ast.Constant))
        elif isinstance(target, ast.Tuple):
            for i, t in enumerate(target.elts):
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).extend(
                        v for e in elements if isinstance(e, ast.Tuple | ast.List) and len(e.elts) == len(target.elts)
                        for v in _strings(e.elts[i]) or [] if isinstance(e.elts[i], ast.Constant))
    return {k: list(dict.fromkeys(v)) for k, v in out.items() if v}


def _string_values(tree: ast.Module, fdef: ast.FunctionDef, name: str, depth: int,
                   seen: set[tuple[str, str]], wide: bool = False) -> list[str]:
    """The str literals ``fdef`` compares its parameter ``name`` (or a plain alias of it) with, in helpers of golden.py
    it is passed to too, in source order. ``wide`` (version 20): also the values of a constant it is compared with or
    tested ``in`` (``MODES = ("sum", "mean")``), of a name a loop binds from one (``for m, fn in TABLE: if m ==
    mode``), and the keys of a table built by ``dict(...)`` or looked up with ``.get(kind)``."""
    if (fdef.name, name) in seen:
        return []
    seen.add((fdef.name, name))
    helpers = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    tables = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Dict)
              for t in n.targets if isinstance(t, ast.Name)}
    named = _named(tree, fdef) if wide else {}
    bound = _loop_bindings(fdef, named) if wide else {}
    tainted = {name}
    for n in ast.walk(fdef):  # plain aliases: ``k = kind``
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in tainted:
            tainted |= {t.id for t in n.targets if isinstance(t, ast.Name)}

    def is_tainted(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id in tainted

    out: list[str] = []
    for n in ast.walk(fdef):
        if isinstance(n, ast.Compare) and all(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in n.ops):
            operands = [n.left, *n.comparators]
            if any(is_tainted(o) for o in operands):
                for o in operands:
                    out += _strings(o) or []
                    if wide and _strings(o) is None and not is_tainted(o):
                        out += bound.get(o.id, []) if isinstance(o, ast.Name) and o.id in bound \
                            else _collection_strings(o, named)
        elif isinstance(n, ast.Match) and is_tainted(n.subject):
            for c in n.cases:
                pats = c.pattern.patterns if isinstance(c.pattern, ast.MatchOr) else [c.pattern]
                out += [v for p in pats if isinstance(p, ast.MatchValue) for v in _strings(p.value) or []]
        elif isinstance(n, ast.Subscript) and is_tainted(n.slice):  # ``{"silu": f, "gelu": g}[kind]``, ``TABLE[kind]``
            table = n.value if isinstance(n.value, ast.Dict) else tables.get(getattr(n.value, "id", ""))
            if isinstance(table, ast.Dict):
                out += [v for k in table.keys if k is not None for v in _strings(k) or []]
            elif wide and not isinstance(n.value, ast.Tuple | ast.List):
                out += _collection_strings(n.value, named)
        elif wide and isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" \
                and n.args and is_tainted(n.args[0]):  # ``ACTIVATIONS.get(kind)``
            out += _collection_strings(n.func.value, named)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in helpers \
                and n.func.id != "golden" and depth < _MAX_DEPTH:
            sub = helpers[n.func.id]
            params = [a.arg for a in [*sub.args.posonlyargs, *sub.args.args]]
            passed = [params[i] for i, a in enumerate(n.args) if i < len(params) and is_tainted(a)]
            passed += [k.arg for k in n.keywords if k.arg and is_tainted(k.value)]
            for p in passed:
                out += _string_values(tree, sub, p, depth + 1, seen, wide)
    return list(dict.fromkeys(out))


def string_attribute_values(tree: ast.Module, names: list[str], version: int = 19) -> dict[str, list[str]]:
    """(unseen drawing version 19) Per str attribute name, the str literals golden() compares it with (``kind ==
    "silu"``, ``mode in ("a", "b")``, a ``match`` case, the keys of a dict indexed by it), following plain aliases and
    helper functions of golden.py, in source order. Static: nothing runs. Red team round 31 (``act_kind_ignored``): a
    wrapper that took ``kind`` and computed silu for every value passed every seed - a string attribute was never
    varied, verify not knowing its other values. A value golden.py compares with but refuses, or whose outputs are not
    of the SPEC's shapes, is dropped when the cases run (``runtime.verify._engine._drop_refused_attributes``).
    From ``version`` 20 (red team round 33, s43) also the values golden.py never writes beside the parameter: a
    constant of modes it is tested ``in``, a ``dict(silu=..., gelu_tanh=...)`` table looked up with ``.get(kind)``, a
    loop over ``(name, fn)`` pairs compared with it (``_string_values``' ``wide``) - a wrapper ignoring ``kind``
    passed every seed of version 19 there. Version 19's values are found as before (its draws do not move)."""
    golden = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "golden"), None)
    out: dict[str, list[str]] = {}
    for name in names:
        params = [] if golden is None else [a.arg for a in [*golden.args.posonlyargs, *golden.args.args,
                                                              *golden.args.kwonlyargs]]
        if golden is None or name not in params:
            out[name] = []
            continue
        out[name] = _string_values(tree, golden, name, 0, set())
        if version >= 20:  # version 19's values first, in their order: the first MAX_STRING_VALUES of them stay
            out[name] += [v for v in _string_values(tree, golden, name, 0, set(), True) if v not in out[name]]
    return out
