"""How many modules an operator needs, computed deterministically from golden.py (workflow.md Part B §4.3).

Signals, read from the AST of ``golden`` plus every top-level helper it calls (transitively; ``make_inputs``
excluded), so splitting a golden into helpers does not change the decision:

- ``effective_lines``: statements, docstrings excluded, compound statements counted recursively (header 1 +
  body), like upstream ``count_golden_lines.py``;
- ``matmul_count``: ``@`` and calls named ``matmul bmm mm einsum dot tensordot addmm baddbmm addbmm linear
  bilinear``, the convolutions, and the torch.nn layers that are one (``Linear``, ``Conv2d``, ...);
- ``cross_tile_reduce_count``: calls named ``sum mean max amax min amin prod var std norm logsumexp softmax
  log_softmax``, the normalizations (``layer_norm``/``LayerNorm``, group, RMS, batch, instance) and
  ``Softmax``/``LogSoftmax`` layers (method or module function; bare builtins ``max/min/sum`` are Python
  scalars and skipped). A class the golden reaches (a KernelBench ``Model``) counts with all its methods.
  Whole softmax = 1: a max-type reduction whose result (directly or through one assignment) is subtracted
  inside an ``exp(...)`` is the softmax stabiliser and is not counted separately. Every reduction is assumed to
  cross tiles (we cannot know tile sizes from golden.py) -- an approximation that errs towards more modules;
- ``state_groups``: loops that re-bind a name assigned before the loop and read in it (loop-carried state);
  a loop nested in a counted loop is not counted again (FA's m/l/o = 1 group).

Formula: upstream ``derive_design_params`` (layout A, §0.2/§0.3) with the line-signal cap of the layout-B
template: ``L = lines/30, S = state_groups, O = (matmul + reduce)/3; structural = max(S, O); total =
structural + 1 if structural >= 1 and L > structural + 1 else max(L, S, O); module_count = 1 if total < 1.3
else min(round(total), ceil(lines/12))`` (Python banker's rounding). We chose A because it is the only
formula that uses state groups, and the B cap because without it a long but purely elementwise golden
would be split by line count alone; B's ``estimate_decomposition`` score is reported as a second opinion.
"""

from __future__ import annotations

import ast
import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, computed_field

from runtime import pyast

__all__ = ["Complexity", "complexity", "complexity_from_signals", "golden_signals"]

MATMUL_NAMES = frozenset({"matmul", "bmm", "mm", "einsum", "dot", "tensordot", "addmm", "baddbmm", "addbmm",
                          "linear", "bilinear", "Linear", "Bilinear",
                          *(f"{c}{d}d" for c in ("conv", "conv_transpose", "Conv", "ConvTranspose") for d in (1, 2, 3))})
"""matmul-like calls: numpy/torch functions and the torch.nn layers and functionals that are one (a KernelBench
model's ``nn.Linear`` built in ``__init__`` is the forward's matmul)"""
REDUCE_NAMES = frozenset({"sum", "mean", "max", "amax", "min", "amin", "prod", "var", "std", "norm",
                          "logsumexp", "softmax", "log_softmax", "nansum", "nanmean", "nanmax", "nanmin",
                          "Softmax", "LogSoftmax", "layer_norm", "LayerNorm", "group_norm", "GroupNorm",
                          "rms_norm", "RMSNorm", "batch_norm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                          "instance_norm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"})
_MAX_LIKE = frozenset({"max", "amax", "min", "amin", "nanmax", "nanmin"})
_BUILTIN_SCALAR = frozenset({"max", "min", "sum"})


class Complexity(BaseModel):
    """The deterministic decomposition decision (shown to the designer and at the design gate)."""

    model_config = ConfigDict(frozen=True)

    effective_lines: int
    matmul_count: int
    cross_tile_reduce_count: int
    state_groups: int
    line_signal: float
    """L = effective_lines / 30."""
    op_signal: float
    """O = (matmul_count + cross_tile_reduce_count) / 3."""
    total_complexity: float
    module_count: int
    level: Literal["L0", "L1"]
    estimate_b: int
    """Second opinion: upstream layout-B ``estimate_decomposition`` suggestion (no state groups)."""
    functions: list[str]
    """Functions whose statements were counted (golden first)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def signals(self) -> dict[str, int]:
        """The four raw signals, as DESIGN.md §0.1 lists them."""
        return {"effective_lines": self.effective_lines, "matmul_count": self.matmul_count,
                "cross_tile_reduce_count": self.cross_tile_reduce_count,
                "loop_carried_state_groups": self.state_groups}


def complexity_from_signals(effective_lines: int, matmul_count: int, cross_tile_reduce_count: int,
                            state_groups: int) -> tuple[float, int]:
    """``(total_complexity, module_count)`` from the four signals (formula in the module docstring)."""
    lines = max(0, effective_lines)
    big_l = lines / 30
    big_s = float(state_groups)
    big_o = (matmul_count + cross_tile_reduce_count) / 3
    structural = max(big_s, big_o)
    total = structural + 1 if structural >= 1 and big_l > structural + 1 else max(big_l, big_s, big_o)
    if total < 1.3:
        return total, 1
    return total, max(1, min(round(total), math.ceil(lines / 12)))


def _estimate_b(lines: int, ops: float) -> int:
    score = max(min(lines / 30, max(1.0, ops) + 1), ops)
    return 1 if score < 1.3 else max(1, min(math.floor(score + 0.5), math.ceil(lines / 12)))


def _call_name(node: ast.Call) -> tuple[str, bool]:
    """(name, is_bare_name) of a call: ``np.max(...)`` -> ("max", False), ``max(...)`` -> ("max", True)."""
    f = node.func
    if isinstance(f, ast.Attribute):
        if isinstance(f.value, ast.Name) and f.value.id == "self":
            return "", False  # a layer of the model called (`self.linear(x)`): its constructor counted it
        return f.attr, False
    if isinstance(f, ast.Name):
        return f.id, True
    return "", False


def _statements(body: list[ast.stmt]) -> int:
    count = 0
    for i, st in enumerate(body):
        if i == 0 and isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
            continue
        count += 1
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(st, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                count += _statements(inner)
        for handler in getattr(st, "handlers", []) or []:
            count += 1 + _statements(handler.body)
        for case in getattr(st, "cases", []) or []:
            count += 1 + _statements(case.body)
    return count


def _functions_used(tree: ast.Module, entry: str = "golden") -> list[ast.FunctionDef]:
    """``entry`` and every top-level function it reaches by name; a top-level class it reaches (``Model(...)``,
    a KernelBench task's module built by the import adapter) brings all its methods - ``forward`` is where the
    operator is."""
    top: dict[str, ast.FunctionDef | ast.ClassDef] = {
        n.name: n for n in tree.body
        if (isinstance(n, ast.FunctionDef) and n.name != "make_inputs") or isinstance(n, ast.ClassDef)}
    if not isinstance(top.get(entry), ast.FunctionDef):
        return []
    order, todo = [entry], [entry]
    while todo:
        fn = top[todo.pop()]
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                name = node.func.id
                if name in top and name not in order:
                    order.append(name)
                    todo.append(name)
    out: list[ast.FunctionDef] = []
    for n in order:
        d = top[n]
        out += [m for m in d.body if isinstance(m, ast.FunctionDef)] if isinstance(d, ast.ClassDef) else [d]
    return out


def _stabiliser_names(fn: ast.FunctionDef) -> set[str]:
    """Names subtracted inside exp(...) calls, plus names whose assignment reads one of those names' sources."""
    direct: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _call_name(node)[0] in ("exp", "exp2"):
            for sub in ast.walk(node):
                if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Sub):
                    direct |= {n.id for n in ast.walk(sub.right) if isinstance(n, ast.Name)}
    # one hop back: m_new = np.maximum(m, blk_max) -> blk_max counts as a stabiliser too
    hop: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in direct for t in node.targets):
            hop |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    return direct | hop


def _reductions(fn: ast.FunctionDef) -> int:
    stabilisers = _stabiliser_names(fn)
    skip: set[int] = set()
    for node in ast.walk(fn):  # m = x.max(...) / m_new = np.maximum(m, s.max(...)) with m, m_new inside exp(. - m)
        if isinstance(node, ast.Assign) and {t.id for t in node.targets if isinstance(t, ast.Name)} & stabilisers:
            skip |= {id(c) for c in ast.walk(node.value) if isinstance(c, ast.Call) and _call_name(c)[0] in _MAX_LIKE}
    for node in ast.walk(fn):  # inline form: exp(s - s.max(axis=-1, keepdims=True))
        if isinstance(node, ast.Call) and _call_name(node)[0] in ("exp", "exp2"):
            for sub in ast.walk(node):
                if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Sub):
                    skip |= {id(c) for c in ast.walk(sub.right)
                             if isinstance(c, ast.Call) and _call_name(c)[0] in _MAX_LIKE}
    count = 0
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and id(node) not in skip:
            name, bare = _call_name(node)
            if name in REDUCE_NAMES and not (bare and name in _BUILTIN_SCALAR):
                count += 1
    return count


def _matmuls(fn: ast.FunctionDef) -> int:
    count = 0
    for node in ast.walk(fn):
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.MatMult):
            count += 1
        elif isinstance(node, ast.Call) and _call_name(node)[0] in MATMUL_NAMES:
            count += 1
    return count


def _assigned(nodes: list[ast.AST]) -> dict[str, int]:
    """Name -> first line where it is bound by an assignment among ``nodes`` (walked)."""
    out: dict[str, int] = {}
    for root in nodes:
        for node in ast.walk(root):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        out.setdefault(n.id, node.lineno)
    return out


def _state_groups(fn: ast.FunctionDef) -> int:
    before_lines = _assigned(fn.body)
    params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}

    def carried(loop: ast.For | ast.While) -> bool:
        inside = _assigned(list(loop.body))
        loop_vars = ({n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
                     if isinstance(loop, ast.For) else set())
        reads = {n.id for st in loop.body for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for name in inside:
            if name in loop_vars or name not in reads:
                continue
            if name in params or before_lines.get(name, 10**9) < loop.lineno:
                return True
        return False

    def visit(stmts: list[ast.stmt]) -> int:
        total = 0
        for st in stmts:
            if isinstance(st, (ast.For, ast.While)) and carried(st):
                total += 1
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(st, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    total += visit(inner)
        return total

    return visit(fn.body)


def golden_signals(source: str) -> tuple[int, int, int, int, list[str]]:
    """``(effective_lines, matmul_count, cross_tile_reduce_count, state_groups, functions)`` of golden.py source.

    Raises:
        SyntaxError: the source does not parse.
        ValueError: there is no top-level ``golden`` function.
    """
    tree = pyast.parse(source)
    fns = _functions_used(tree)
    if not fns:
        raise ValueError("golden.py defines no top-level function 'golden'")
    lines = sum(_statements(fn.body) for fn in fns)
    return (lines, sum(_matmuls(f) for f in fns), sum(_reductions(f) for f in fns),
            sum(_state_groups(f) for f in fns), [f.name for f in fns])


def complexity(op: object) -> Complexity:
    """The complexity decision for an :class:`~runtime.opdir.OpDir` (or golden.py source text)."""
    source = op if isinstance(op, str) else op.golden_source  # type: ignore[attr-defined]
    lines, mm, red, groups, names = golden_signals(source)
    total, count = complexity_from_signals(lines, mm, red, groups)
    return Complexity(
        effective_lines=lines, matmul_count=mm, cross_tile_reduce_count=red, state_groups=groups,
        line_signal=round(lines / 30, 4), op_signal=round((mm + red) / 3, 4), total_complexity=round(total, 4),
        module_count=count, level="L0" if count == 1 else "L1", estimate_b=_estimate_b(lines, (mm + red) / 3),
        functions=names,
    )
