"""Host-side rules: the wrapper calls the kernel once, allocates outputs itself, and computes nothing.

Everything numeric must happen inside the one JIT graph; a wrapper that loops over tiles, computes with
numpy/torch or hands the kernel a pre-filled buffer makes the emulator verify the host code instead of the
kernel. (Upstream OL62 only restricts torch; since PTO Forge kernels receive numpy arrays, numpy math on the
host is restricted the same way.)
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from runtime.lint._host_scalars import scalar_names, scalar_params
from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._source import _HOST_HELPERS, ParsedFile, is_main_test
from runtime.lint._util import at, kernel_pf, spec_attrs

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

_ALLOC = {"pypto.zeros", "pypto.ones", "pypto.full", "pypto.empty", "pypto.zeros_like", "pypto.ones_like",
          "pypto.full_like", "pypto.empty_like"}
_OUT_NAME = re.compile(r"^(out|output|out_\w+|\w+_out)$")
_TORCH_OK = set("""empty empty_like zeros zeros_like ones ones_like full full_like tensor as_tensor from_numpy
device manual_seed Generator set_default_dtype get_default_dtype is_tensor numel no_grad reshape permute transpose
flatten squeeze unsqueeze cat stack clone randn rand randint randperm normal empty_strided dtype Tensor Size cuda npu
float16 float32 float64 bfloat16 half float double int8 int16 int32 int64 uint8 bool float8_e4m3fn
float8_e5m2 contiguous_format preserve_format channels_last""".split())
_NUMPY_OK = set("""empty empty_like zeros zeros_like ones ones_like full full_like array asarray ascontiguousarray
arange reshape transpose swapaxes moveaxis expand_dims squeeze concatenate stack broadcast_to copy dtype frombuffer
result_type iinfo finfo can_cast issubdtype ndim shape size isscalar float16 float32 float64 int8 int16 int32
int64 uint8 uint16 uint32 uint64 bool_ random ndarray newaxis inf nan pi integer floating generic""".split())
_MATH_METHODS = set("""matmul mm bmm exp exp2 log log2 log10 log1p sum mean softmax log_softmax add sub mul div
true_divide sqrt rsqrt pow max min amax amin sigmoid tanh relu gelu silu dot einsum cumsum cumprod prod var std
norm clip clamp abs neg negative square sin cos erf argmax argmin sort topk round floor ceil reciprocal addmm
baddbmm outer inner tensordot vdot mv addmv addr kron cross nansum nanmean nanmedian median quantile nanquantile
logsumexp logcumsumexp cummax cummin diff trace det slogdet logdet inverse pinverse lerp addcmul addcdiv hypot
atan atan2 asin acos sinh cosh asinh acosh atanh expm1 sign sgn fmod remainder maximum minimum fmax fmin erfc erfinv
lgamma digamma xlogy logit std_mean var_mean histc bincount frac""".split())
"""Red team s30e: ``probe.vdot(probe)`` over 4M elements told the sandbox's one BLAS thread from a user's two (the
sum's order follows the thread count); ``vdot`` was not on the list."""


def _jit_calls(pf: ParsedFile, fn: ast.AST) -> list[ast.Call]:
    """Calls of the JIT kernel in ``fn``: by its name or through a factory-made alias."""
    names = pf.kernel_names_in(fn)
    factories = pf.kernel_factories()
    return [c for c in pf.calls_in.get(fn, [])
            if (isinstance(c.func, ast.Name) and c.func.id in names)
            or (isinstance(c.func, ast.Subscript) and isinstance(c.func.value, ast.Name) and c.func.value.id in names)
            or (isinstance(c.func, ast.Call) and isinstance(c.func.func, ast.Name) and c.func.func.id in factories)]


@check("OL16")
def ol16_no_golden_import(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for node in pf.nodes(ast.Import):
        for alias in node.names:
            last = alias.name.split(".")[-1]
            if last == "golden" or last.endswith("_golden"):
                yield at(node, f"kernel imports the golden (`import {alias.name}`)")
    for node in pf.nodes(ast.ImportFrom):
        mod = node.module or ""
        names = [a.name for a in node.names]
        if any(x == "golden" or x.endswith("_golden") for x in [mod.split(".")[-1], *names]):
            yield at(node, f"kernel imports the golden (`from {mod or '.'} import {', '.join(names)}`)")


@check("OL45")
def ol45_jit_called_once(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    if not pf.jit_fns:
        return
    jit = pf.jit_names()
    for wrapper in pf.wrappers():
        host = [f for f in pf.reachable_from([wrapper]) if f.name not in jit]
        calls = [c for f in host for c in _jit_calls(pf, f)]
        flagged: set[int] = set()
        for c in calls:  # the loops around a call, found by walking up from it (one pass, not loops x calls)
            loop = _enclosing_loop(pf, c)
            if loop is not None and id(loop) not in flagged:
                flagged.add(id(loop))
                yield at(c, f"JIT kernel called inside a host loop in `{wrapper.name}`; loop over tiles "
                         "with `pypto.loop` inside the kernel")
        if not calls and wrapper.name.endswith("_wrapper"):
            yield at(wrapper, f"`{wrapper.name}` never calls the JIT kernel")
            continue
        per_run = _PerRun(pf, {id(c) for c in calls}, host)
        count = per_run.of(wrapper) + sum(1 for c in calls if id(c) not in per_run.counted)  # reached otherwise
        for site in per_run.sites:  # a helper that calls the kernel, called in a host loop (s38)
            loop = _enclosing_loop(pf, site)
            if loop is not None and id(loop) not in flagged:
                flagged.add(id(loop))
                yield at(site, f"JIT kernel called (through `{ast.unparse(site.func)}`) inside a host loop in "
                         f"`{wrapper.name}`; loop over tiles with `pypto.loop` inside the kernel")
        if count > 1:
            yield at(calls[1] if len(calls) > 1 else calls[0],
                     f"`{wrapper.name}` calls the JIT kernel {count} times; call it exactly once")


class _PerRun:
    """The most kernel calls one run of a wrapper makes, following the host functions it calls by name.

    A kernel call in a helper counts once per call of the helper on the path (s38 accident2: ``_run(x[:h])`` then
    ``_run(x[h:])`` - a helper, or a def nested in the wrapper, holding the one kernel call - was one call, and the
    wrapper tiled on the host). A call inside a ``lambda`` counts as two (a name bound to it can be called any
    number of times); a function reached again while it is being counted (recursion) counts as two."""

    def __init__(self, pf: ParsedFile, calls: set[int], host: list[ast.FunctionDef]) -> None:
        self.pf, self.calls = pf, calls
        self.module = {f.name: f for f in host}
        self.memo: dict[int, int] = {}
        self.active: set[int] = set()
        self.sites: list[ast.Call] = []
        self.counted: set[int] = set()

    def _callee(self, fn: ast.AST, call: ast.Call) -> ast.AST | None:
        """The def a bare-name call in ``fn`` runs: a def nested in ``fn``, else a module-level host function."""
        if not isinstance(call.func, ast.Name):
            return None
        nested = [d for d in self.pf.nodes_in(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                  if d.name == call.func.id and self.pf.enclosing_fn.get(d) is fn]  # type: ignore[attr-defined]
        return nested[-1] if nested else self.module.get(call.func.id)

    def _in_lambda(self, node: ast.AST, fn: ast.AST) -> bool:
        cur = self.pf.parents.get(node)
        while cur is not None and cur is not fn:
            if isinstance(cur, ast.Lambda):
                return True
            cur = self.pf.parents.get(cur)
        return False

    def of(self, fn: ast.AST) -> int:
        """The most kernel calls one run of ``fn`` makes."""
        key = id(fn)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            return 2
        self.active.add(key)
        weights: dict[int, int] = {}
        for c in self.pf.calls_in.get(fn, []):
            if self.pf.enclosing_fn.get(c) is not fn:
                continue
            if id(c) in self.calls:
                weights[id(c)] = 2 if self._in_lambda(c, fn) else 1
                self.counted.add(id(c))
                continue
            callee = self._callee(fn, c)
            w = self.of(callee) if callee is not None else 0
            if w:
                weights[id(c)] = w
                self.sites.append(c)
        self.active.discard(key)
        self.memo[key] = _calls_on_one_path(getattr(fn, "body", []), weights)
        return self.memo[key]


def _calls_on_one_path(body: list[ast.stmt], calls: dict[int, int]) -> int:
    """The most kernel calls one run of ``body`` makes (``calls``: node id -> the kernel calls that node makes): a
    call in each branch of an ``if``, or one in a branch that returns and one after it, is one call per run (s38: a
    decode-path branch calling its own kernel and returning made OL45 count two calls for an honest wrapper). Any
    other statement counts every call in it (a ``try``, ``with``, ``match`` or nested def: at most too many)."""
    def count(node: ast.AST) -> int:
        return sum(calls.get(id(n), 0) for n in ast.walk(node))

    def walk(stmts: list[ast.stmt]) -> tuple[int, int | None]:
        ret, fall = 0, 0  # most calls on a path that returns inside ``stmts`` / that falls through their end
        for s in stmts:
            if fall is None:
                break
            if isinstance(s, ast.If):
                c = fall + count(s.test)
                rb, fb = walk(s.body)
                ro, fo = walk(s.orelse)
                ret = max(ret, c + rb, c + ro)
                ends = [c + f for f in (fb, fo) if f is not None]
                fall = max(ends) if ends else None
            elif isinstance(s, (ast.Return, ast.Raise)):
                ret, fall = max(ret, fall + count(s)), None
            else:
                fall += count(s)
        return ret, fall

    ret, fall = walk(body)
    return max(ret, fall or 0)


def _enclosing_loop(pf: ParsedFile, node: ast.AST) -> ast.AST | None:
    """The outermost ``for``/``while``/comprehension around ``node`` inside its function (None when there is none;
    s38 accident2: ``[k(a, b) for a, b in parts]`` tiled on the host unseen)."""
    found = None
    cur = pf.parents.get(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(cur, (ast.For, ast.While, ast.AsyncFor, *_COMPREHENSIONS)):
            found = cur
        cur = pf.parents.get(cur)
    return found


def _module_assign(pf: ParsedFile, name: str) -> ast.AST | None:
    for stmt in pf.tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            return stmt.value
    return None


def _local_assign(pf: ParsedFile, fn: ast.FunctionDef, name: str) -> ast.AST | None:
    for node in pf.nodes_in(fn, ast.Assign):
        if any(isinstance(t, ast.Name) and t.id == name for t in node.targets):  # type: ignore[attr-defined]
            return node.value  # type: ignore[attr-defined]
    return None


@check("OL58")
def ol58_host_allocation(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for wrapper in pf.wrappers():
        for call in pf.calls_in.get(wrapper, []):
            if pf.name(call.func) in _ALLOC:
                yield at(call, f"`{pf.name(call.func)}` in wrapper `{wrapper.name}`; pypto creation ops "
                         "only work inside the JIT graph")
        params = {a.arg for a in wrapper.args.posonlyargs + wrapper.args.args + wrapper.args.kwonlyargs}
        for call in _jit_calls(pf, wrapper):
            outputs = _written_positions(pf, call)
            for pos, arg in enumerate([*call.args, *(k.value for k in call.keywords)]):
                if not isinstance(arg, ast.Name) or arg.id in params:
                    continue
                value, module_level, name = None, False, arg.id
                for _hop in range(6):  # follow `a = b` aliases, locals first, then module level
                    value = _local_assign(pf, wrapper, name)
                    if value is None:
                        value, module_level = _module_assign(pf, name), True
                    if not isinstance(value, ast.Name) or value.id in params:
                        break
                    name = value.id
                if value is None:
                    if _OUT_NAME.match(arg.id):
                        yield at(arg, f"output `{arg.id}` is not allocated in `{wrapper.name}`")
                elif isinstance(value, ast.Call) and pf.name(value.func) in _ALLOC:
                    yield at(arg, f"`{arg.id}` passed to the kernel comes from `{pf.name(value.func)}`")
                elif module_level and isinstance(value, ast.Call) and (pos in outputs or _OUT_NAME.match(arg.id)):
                    yield at(arg, f"`{arg.id}` is a module-level buffer shared by every call; allocate it in "
                             f"`{wrapper.name}`")


def _written_positions(pf: ParsedFile, call: ast.Call) -> set[int]:
    """Positions of the kernel's parameters that the kernel writes (its outputs), for a call of the kernel."""
    from runtime.lint._rules_writeback import written_params  # local: avoid an import cycle at load time

    jit = {fn.name: fn for fn in pf.jit_fns}
    fn = jit.get(call.func.id) if isinstance(call.func, ast.Name) else None
    if fn is None and len(pf.jit_fns) == 1:
        fn = pf.jit_fns[0]  # a factory alias of the one kernel
    if fn is None:
        return set()
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    written = written_params(pf, fn)
    return {i for i, n in enumerate(names) if n in written}


def referenced_from_wrappers(pf: ParsedFile) -> set[str]:
    """Module-level functions the wrappers can reach by *any* reference: a call, an alias (``f = _validate``),
    an argument (``apply(_fixup)``), or module-level code outside ``if __name__ == "__main__"``.

    Why by reference and not by name: a host-math exemption keyed on names (``main``, ``_validate``) let a wrapper
    fix up its outputs in a helper so named; whatever the wrapper reaches is production host code.
    """
    key = "wrapper_reach"
    if key in pf._memo:
        return pf._memo[key]
    names = {fn.name for fn in pf.wrappers()}
    for stmt in pf.tree.body:
        # a class's body and methods count as reachable (red team s30d reached a `_test` helper through a
        # staticmethod); only an exact module-level `if __name__ == "__main__":` is not production code
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or pf.in_main_block(stmt):
            continue
        if isinstance(stmt, ast.If) and is_main_test(stmt.test):
            continue
        names |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id in pf.functions}
    todo = list(names)
    while todo:
        fn = pf.functions.get(todo.pop())
        if fn is None:
            continue
        for n in pf.nodes_in(fn, ast.Name):
            if n.id in pf.functions and n.id not in names:  # type: ignore[attr-defined]
                names.add(n.id)  # type: ignore[attr-defined]
                todo.append(n.id)  # type: ignore[attr-defined]
    pf._memo[key] = names
    return names


def _host_scope(pf: ParsedFile, node: ast.AST, host_names: set[str]) -> tuple[bool, ast.FunctionDef | None]:
    """(is production host code, enclosing top-level function or None at module level).

    Host code is everything outside the JIT graph: wrappers and their helpers, but also module-level code,
    module-level lambdas, class bodies and methods (a fix-up in a lambda or a method is host math as much as one
    in a function). A self-test helper (``main``, ``_test`` ...) is exempt only while no wrapper reaches it;
    ``if __name__ == "__main__":`` blocks are not production code.
    """
    top = pf.enclosing_fn.get(node)
    while top is not None and pf.enclosing_fn.get(top) is not None:
        top = pf.enclosing_fn.get(top)
    if top is None:
        return not pf.in_main_block(node), None
    graph = pf._memo.get("graph_ids")
    if graph is None:
        graph = pf._memo["graph_ids"] = {id(f) for f in pf.graph_functions()}
    name = getattr(top, "name", "")
    if id(top) in graph:
        return False, top  # type: ignore[return-value]
    exempt = name in _HOST_HELPERS and name not in referenced_from_wrappers(pf)
    if pf.functions.get(name) is top:
        return name in host_names and not exempt, top
    # a method (the class is at module level) or a nested def outside the graph: host unless in __main__
    return not pf.in_main_block(top) and not exempt, top  # type: ignore[return-value]


def _function_scopes(pf: ParsedFile, node: ast.AST) -> list[ast.AST]:
    """The functions and lambdas around ``node``, innermost first."""
    out: list[ast.AST] = []
    cur = pf.parents.get(node)
    while cur is not None:
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            out.append(cur)
        cur = pf.parents.get(cur)
    return out


_COPY_METHODS = {"copy", "view", "reshape", "astype", "ravel", "flatten", "transpose", "swapaxes", "squeeze",
                 "contiguous", "clone", "numpy", "cpu", "detach", "to", "permute", "unsqueeze", "expand_dims"}
_COPY_FUNCS = {"numpy.array", "numpy.asarray", "numpy.ascontiguousarray", "numpy.copy", "numpy.reshape",
               "numpy.transpose", "numpy.squeeze", "numpy.expand_dims", "numpy.asanyarray", "torch.as_tensor",
               "torch.from_numpy", "torch.tensor"}


def _copy_of(pf: ParsedFile, node: ast.AST, names: set[str]) -> bool:
    """``node`` is one of ``names``, or a view, slice, copy or layout change of one (no computation)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in names
        if isinstance(node, (ast.Subscript, ast.Starred)):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _COPY_METHODS:
            node = node.func.value
        elif isinstance(node, ast.Call) and pf.name(node.func) in _COPY_FUNCS and node.args:
            node = node.args[0]
        else:
            return False


def aliases_of(pf: ParsedFile, fn: ast.AST, names: set[str]) -> set[str]:
    """``names`` plus every local bound to an alias, view or copy of one of them (``z = y``, ``x2 = x.copy()``,
    ``a, b = x, y``), to a fixpoint: a copy of a parameter is treated as the parameter."""
    key = ("aliases", id(fn), frozenset(names))
    if key in pf._memo:
        return pf._memo[key]
    out = set(names)
    assigns = pf.nodes_in(fn, (ast.Assign, ast.AnnAssign, ast.NamedExpr))
    for _ in range(8):
        before = len(out)
        for node in assigns:
            value = getattr(node, "value", None)
            if value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            for t in targets:
                if isinstance(t, ast.Name) and _copy_of(pf, value, out):
                    out.add(t.id)
                elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
                    for tt, vv in zip(t.elts, value.elts, strict=False):
                        if isinstance(tt, ast.Name) and _copy_of(pf, vv, out):
                            out.add(tt.id)
        if len(out) == before:
            break
    pf._memo[key] = out
    return out


_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def _array_ref(node: ast.AST, params: set[str]) -> str | None:
    """Name of a host-function parameter used as an array (not through ``.shape``/``.dtype``...) in ``node``."""
    if isinstance(node, ast.Name) and node.id in params:
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in params:
        return node.value.id
    return None


_SCALAR_ANN = {"int", "float", "bool", "str"}
_LAYOUT_METHODS = {"reshape", "view", "transpose", "permute", "contiguous", "flatten", "squeeze", "unsqueeze",
                   "swapaxes", "copy", "clone", "cpu", "numpy"}


def _array_params(fn: ast.FunctionDef, attrs: set[str]) -> set[str]:
    """Parameters of a host function that hold arrays: not SPEC attributes, not annotated or defaulted as scalars."""
    a = fn.args
    pos = a.posonlyargs + a.args
    defaults = dict(zip([p.arg for p in pos][len(pos) - len(a.defaults):], a.defaults, strict=True))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None})
    out: set[str] = set()
    for p in pos + a.kwonlyargs:
        ann = ast.unparse(p.annotation) if p.annotation is not None else ""
        default = defaults.get(p.arg)
        scalar_default = isinstance(default, ast.Constant) or (
            isinstance(default, ast.UnaryOp) and isinstance(default.operand, ast.Constant))
        if p.arg in attrs or ann in _SCALAR_ANN or scalar_default:
            continue
        out.add(p.arg)
    return out


def _pure_copy(node: ast.AST, params: set[str]) -> bool:
    """``x``, ``x[...]`` or a layout method chain of an input (``x.reshape(...)``): data moved, nothing computed."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in params
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _LAYOUT_METHODS:
            node = node.func.value
        else:
            return False


def _constant_pad(pf: ParsedFile, node: ast.Attribute, parts: list[str]) -> bool:
    """``F.pad(x, pad)`` / ``np.pad(x, width)`` called in constant mode (no ``mode``, or ``mode="constant"``): padding
    with a constant is layout, as ``torch.cat`` with a filled block is (red team s37: a wrapper padding its rows with
    ``torch.nn.functional.pad`` was refused while the same padding through ``torch.cat`` passed). Other modes
    (reflect, replicate, edge, mean ...) compute values from the input."""
    if parts[-1] != "pad" or not (parts[0] in ("F", "numpy") or "functional" in parts):
        return False
    call = pf.parents.get(node)
    if not isinstance(call, ast.Call) or call.func is not node:
        return False
    mode = next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None and parts[0] == "numpy" and len(call.args) >= 3:
        mode = call.args[2]
    return mode is None or (isinstance(mode, ast.Constant) and mode.value == "constant")


def _is_shape(node: ast.AST) -> bool:
    """``x.shape``, ``x.shape[1:]``, ``x.shape[:-1]`` or ``x.size()``: a shape, never an array's values."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        node = node.func
        return isinstance(node, ast.Attribute) and node.attr == "size"
    return isinstance(node, ast.Attribute) and node.attr == "shape"


def _shape_product(pf: ParsedFile, node: ast.Attribute, parts: list[str]) -> bool:
    """``np.prod(x.shape[:-1])``: the number of rows of a tensor, computed from its shape (the host-side habit of
    flattening leading axes before a kernel call, as ``math.prod`` does; s38: refused as host math). Only a call whose
    one argument is a shape and that has no other argument."""
    if parts[0] != "numpy" or parts[-1] != "prod" or len(parts) != 2:
        return False
    call = pf.parents.get(node)
    return (isinstance(call, ast.Call) and call.func is node and len(call.args) == 1 and not call.keywords
            and _is_shape(call.args[0]))


@check("OL62")
def ol62_no_host_math(ctx: LintContext) -> Iterator[Hit]:
    """numpy/torch math, operators and math methods on a wrapper's inputs in host code.

    ``torch.library`` (``Library``, ``impl``, ``define``, ``custom_op``) is not math: it registers the wrapper as a
    torch operator (the gym's ``gated_delta_rule_impl.py`` does, for graph capture), and OL62 said it "computes on
    the host" (UX audit s49). Whether a kernel file may hold that registration is PF11's question (a module-level
    ``Library`` is state that outlives a call) and PF02's (``torch.ops``), each with its own reason; the functions
    registered are host code like any other, so math inside them is still OL62's."""
    pf = kernel_pf(ctx)
    attrs = spec_attrs(ctx)
    host_names = {f.name for f in pf.host_functions()}
    for node in pf.nodes(ast.Attribute):
        if isinstance(pf.parents.get(node), ast.Attribute) or not _host_scope(pf, node, host_names)[0]:
            continue
        name = pf.name(node)
        parts = name.split(".")
        if _constant_pad(pf, node, parts) or _shape_product(pf, node, parts):
            continue
        if "functional" in parts or (len(parts) > 1 and parts[0] == "F" and "F" not in pf.aliases):
            yield at(node, f"`{name}` computes on the host")
        elif parts[0] == "torch" and len(parts) >= 2 and parts[1] not in _TORCH_OK and parts[1] != "library":
            yield at(node, f"`{name}` computes on the host; only allocation/layout torch functions are allowed")
        elif parts[0] == "numpy" and len(parts) >= 2 and parts[1] not in _NUMPY_OK:
            yield at(node, f"`{name}` computes on the host; only allocation/layout numpy functions are allowed")
    for call in pf.nodes(ast.Call):
        f = call.func
        if (isinstance(f, ast.Attribute) and f.attr in _MATH_METHODS
                and pf.name(f).split(".")[0] not in ("torch", "numpy", "math", "pypto")
                and _host_scope(pf, call, host_names)[0]):
            yield at(call, f"`.{f.attr}(...)` computes on the host")
    for kind in (ast.BinOp, ast.UnaryOp, ast.AugAssign, ast.Assign):
        for node in pf.by_type.get(kind, []):
            ok, top = _host_scope(pf, node, host_names)
            if not ok:
                continue
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                yield at(node, "`@` (matmul) computes on the host")
                continue
            scopes = _function_scopes(pf, node)
            if not scopes:
                continue  # module-level statements have no array parameters (constants like TILE = 16 * 4)
            params: set[str] = set()
            for scope in scopes:  # a lambda's or an inner def's parameters are arrays as much as the wrapper's
                # ... except a helper's parameters that every call passes a size (`ceil_div(x.shape[0], TILE)`)
                params |= _array_params(scope, attrs) - scalar_params(pf, scope)  # type: ignore[arg-type]
            params = aliases_of(pf, scopes[-1], params)
            top = top if top is not None else scopes[-1]
            if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH):
                ref = _array_ref(node.left, params) or _array_ref(node.right, params)
                if ref:
                    yield at(node, f"arithmetic on input `{ref}` in host code; compute inside the kernel")
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _array_ref(node.operand, params):
                yield at(node, f"arithmetic on input `{_array_ref(node.operand, params)}` in host code")
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, (ast.Name, ast.Subscript)):
                if isinstance(node.target, ast.Name) and node.target.id in scalar_names(
                        pf, scopes[0], scalar_params(pf, scopes[0])):
                    continue  # a size counted up (`t += 1` for a tail tile): every binding of it is a size
                yield at(node, "in-place arithmetic on an array in host code; compute inside the kernel")
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) for t in node.targets):
                first_call = min((c.lineno for c in _jit_calls(pf, top)), default=None)
                if _pure_copy(node.value, params) and first_call is not None and node.lineno < first_call:
                    continue  # padding an input into a kernel buffer (same as np.concatenate): layout, not math
                refs = [n.id for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id in params
                        and not isinstance(pf.parents.get(n), ast.Attribute)]
                if refs:
                    yield at(node, f"host code writes data derived from input `{refs[0]}` into an array")


# ------------------------------------------------------------------------------------------- inside the graph
# A JIT body (and every helper it calls) is Python that runs once, on the host, when the kernel is traced: what it
# computes there becomes a constant of the traced graph. Red team s17: `torch.get_num_threads()`,
# `np.datetime64("now")`, `torch.rand(1)` inside a JIT body chose the loop bound, so the sandbox got the right
# kernel and every other host a wrong one. Inside the graph only pypto, math, shape/index arithmetic, builtins for
# it, dtype constants and the file's own helpers are allowed; numpy/torch (beyond dtype constants) and every other
# module are refused. Functions of the graph that only *build* the kernel (a factory, a host entry with a nested
# `@jit`) are host code outside their JIT bodies: there numpy/torch keep the host allow-list.

_GRAPH_MODULES_OK = ("pypto", "math", "typing", "dataclasses", "functools", "ml_dtypes")
_GRAPH_NP_TORCH_OK = set("""dtype finfo iinfo inf nan pi e newaxis Tensor ndarray Size float16 float32 float64
bfloat16 half float double int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool bool_ float8_e4m3fn float8_e5m2
longlong intc single""".split())
"""numpy/torch members a JIT body may name: dtype constants and dtype facts (no state, no environment)."""


def _imported_roots(pf: ParsedFile) -> set[str]:
    roots: set[str] = set()
    for node in pf.nodes(ast.Import):
        roots |= {a.name.split(".")[0] for a in node.names}
    for node in pf.nodes(ast.ImportFrom):
        if node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


def _module_level_aliases(pf: ParsedFile, roots: set[str]) -> dict[str, str]:
    """Module-level ``T = np`` / ``F = np.datetime64``: the name stands for a module member inside functions."""
    out: dict[str, str] = {}
    for _ in range(3):
        for stmt in pf.tree.body:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, (ast.Name, ast.Attribute))):
                full = pf.name(stmt.value)
                head, _, rest = full.partition(".")
                if head in out:
                    full = out[head] + ("." + rest if rest else "")
                if full.split(".")[0] in roots:
                    out[stmt.targets[0].id] = full
    return out


def graph_zones(pf: ParsedFile) -> tuple[list[ast.AST], list[ast.AST]]:
    """(functions whose code runs at trace time: JIT kernels, the helpers they call - module-level or nested -,
    graph functions that only build a kernel: factories and host entries with a nested ``@jit``)."""
    key = "graph_zones"
    if key in pf._memo:
        return pf._memo[key]
    strict: dict[int, ast.AST] = {id(f): f for f in pf.reachable_from(pf.jit_fns)}
    by_name: dict[str, list[ast.AST]] = {}
    for f in pf.nodes(ast.FunctionDef):
        by_name.setdefault(f.name, []).append(f)
    todo = list(strict.values())
    while todo:  # nested helpers (a def inside a factory) the graph calls by name
        fn = todo.pop()
        for call in pf.calls_in.get(fn, []):
            if isinstance(call.func, ast.Name):
                for target in by_name.get(call.func.id, []):
                    if id(target) not in strict:
                        strict[id(target)] = target
                        todo.append(target)
    loose = [f for f in pf.graph_functions() if id(f) not in strict]
    pf._memo[key] = (list(strict.values()), loose)
    return pf._memo[key]


@check("OL62")
def ol62_graph_library_calls(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    if not pf.jit_fns:
        return
    roots = _imported_roots(pf) - {"pypto", "math"}
    if not roots:
        return
    aliases = _module_level_aliases(pf, roots)
    strict, loose = graph_zones(pf)
    strict_ids: set[int] = set()
    for fn in strict:
        strict_ids |= {id(n) for n in pf.fn_nodes.get(fn, [])}
    decorators: set[int] = set()
    for fn in [*strict, *loose]:
        for dec in getattr(fn, "decorator_list", []):  # evaluated where the def stands (module level)
            decorators |= {id(n) for n in ast.walk(dec)}
    seen: set[int] = set()
    for zone, fns in (("strict", strict), ("loose", loose)):
        for fn in fns:
            for node in pf.fn_nodes.get(fn, []):
                if not isinstance(node, (ast.Attribute, ast.Name)) or id(node) in seen or id(node) in decorators:
                    continue
                if not isinstance(node.ctx, ast.Load) or isinstance(pf.parents.get(node), ast.Attribute):
                    continue
                if zone == "loose" and id(node) in strict_ids:
                    continue
                seen.add(id(node))
                full = pf.name(node)
                head, _, rest = full.partition(".")
                if head in aliases and head not in pf.aliases:
                    full = aliases[head] + ("." + rest if rest else "")
                    head, _, rest = full.partition(".")
                if head not in roots or _local_binding(pf, node, head):
                    continue
                member = rest.split(".")[0]
                where = getattr(pf.enclosing_fn.get(node), "name", "?")
                if not rest:
                    continue  # a module handed around as a value: PF02's (`_modules_as_values`), everywhere
                if zone == "strict":
                    if head in _GRAPH_MODULES_OK or (head in ("numpy", "torch") and member in _GRAPH_NP_TORCH_OK):
                        continue
                    yield at(node, f"`{full}` inside the JIT graph (`{where}`): a kernel body and the helpers it "
                             "calls run once on the host, when the kernel is traced, and what they compute becomes "
                             "a constant of the kernel; use only pypto, math, shape/index arithmetic and the file's "
                             "own helpers there")
                elif head not in ("numpy", "torch") or (head == "torch" and member in _TORCH_OK) or (
                        head == "numpy" and member in _NUMPY_OK):
                    continue  # other modules: their import is PF01's, their uses PF02/PF04's
                else:
                    yield at(node, f"`{full}` in `{where}`, which builds the JIT kernel: it computes on the host "
                             "(only allocation/layout numpy/torch functions and dtype constants are allowed)")


def _local_binding(pf: ParsedFile, node: ast.AST, name: str) -> bool:
    """``name`` is bound inside a function around ``node`` (a parameter or local that shadows the module)."""
    if name in pf.aliases:
        return False  # an import alias (np, F): its uses are the module's
    for scope in _function_scopes(pf, node):
        a = scope.args  # type: ignore[attr-defined]
        if any(p.arg == name for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]):
            return True
        if isinstance(scope, ast.Lambda):
            continue
        for n in pf.nodes_in(scope, ast.Name):
            if n.id == name and isinstance(n.ctx, ast.Store):  # type: ignore[attr-defined]
                return True
    return False
