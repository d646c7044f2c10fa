"""Intake: everything that can be checked about an operator directory before any agent runs.

``intake(op_dir)`` loads SPEC.md and golden.py, builds the cases, parses the inventory and the module
markers, computes the complexity decision, runs golden.py on every case (one child process) and checks its
outputs: shapes and dtypes as declared, no NaN, and not degenerate -- a golden whose output is constant,
all zero, or identical for two different seeds would let a kernel that ignores its inputs pass, so such a
SPEC is rejected. It never raises for user mistakes and never writes into the op directory.
"""

from __future__ import annotations

import ast
import logging
import math
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from runtime.dtypes import is_float, name_of
from runtime.opdir._cases import Case
from runtime.opdir._complexity import Complexity, complexity
from runtime.opdir._golden_runner import GOLDEN_CASE_TIMEOUT_S, GoldenRun, run_golden_cases
from runtime.opdir._inventory import InventoryRow, ModuleMarker
from runtime.opdir._opdir import GOLDEN_FILE, OpDir, load_op_dir
from runtime.opdir._problems import GoldenError, OpDirError, Problem
from runtime.opdir._spec import Spec

__all__ = ["GoldenSummary", "IntakeReport", "check_golden_runs", "intake"]

log = logging.getLogger(__name__)


class GoldenSummary(BaseModel):
    """Shapes and dtypes golden.py produced for one case (never values)."""

    model_config = ConfigDict(frozen=True)

    case: str
    outputs: dict[str, str]
    """output name -> ``dtype[shape]``, e.g. ``fp32[64, 256]``."""
    intermediates: dict[str, str]
    duration_s: float


class IntakeReport(BaseModel):
    """Everything ``python -m orchestrator intake`` prints. ``ok`` iff ``problems`` is empty."""

    op_dir: str
    ok: bool
    spec: Spec | None = None
    cases: list[Case] = Field(default_factory=list)
    inventory: list[InventoryRow] = Field(default_factory=list)
    markers: list[ModuleMarker] = Field(default_factory=list)
    complexity: Complexity | None = None
    golden: list[GoldenSummary] = Field(default_factory=list)
    has_make_inputs: bool = False
    problems: list[Problem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """Non-fatal remarks (many cases, very large shapes, no dynamic axis to test tails on)."""


def _describe(arr: np.ndarray) -> str:
    try:
        dt = name_of(arr.dtype)
    except ValueError:
        dt = str(arr.dtype)
    return f"{dt}{list(arr.shape)}"


def _probe_pair(cases: list[Case]) -> tuple[Case, Case] | None:
    """Two cases with the same shape and dtype but different seeds (for the input-dependence check)."""
    first = cases[0]
    for other in cases[1:]:
        if other.dims == first.dims and other.dtype == first.dtype and other.seed != first.seed:
            return first, other
    return None


def check_golden_runs(op: OpDir, runs: dict[str, GoldenRun], cases: list[Case]) -> list[Problem]:
    """Shape/dtype/NaN checks per case plus the degenerate-golden checks on two seeds."""
    spec = op.spec
    problems: list[Problem] = []
    line = op.golden_def.lineno if op.golden_def is not None else None

    def add(field: str, message: str) -> None:
        problems.append(Problem(file=GOLDEN_FILE, line=line, field=field, message=message))

    for c in cases:
        run = runs[c.name]
        for t, arr in zip(spec.inputs, run.inputs):
            want = (t.concrete_dtype(c.dtype), t.concrete_shape(c.dims))
            if (_safe_name(arr), tuple(arr.shape)) != want:
                add(f"inputs.{t.name}", f"case {c.name}: make_inputs produced {_describe(arr)}, SPEC.md declares "
                                        f"{want[0]}{list(want[1])}")
        for t in spec.outputs:
            arr = run.outputs[t.name]
            want = (t.concrete_dtype(c.dtype), t.concrete_shape(c.dims))
            if (_safe_name(arr), tuple(arr.shape)) != want:
                add(f"outputs.{t.name}", f"case {c.name}: golden returned {_describe(arr)}, SPEC.md declares "
                                         f"{want[0]}{list(want[1])}")
            elif is_float(want[0]) and np.isnan(arr.astype(np.float32)).any():
                add(f"outputs.{t.name}", f"case {c.name}: golden output contains NaN (inputs outside the "
                                         "function's domain? narrow the input range in SPEC.md)")
    if problems:
        return problems
    first = runs[cases[0].name]
    may_be_constant = {t.name for t in spec.outputs if t.constant}
    for name in first.outputs:
        if name in may_be_constant:
            continue
        flats = [_flat(runs[c.name].outputs[name]) for c in cases if c.name in runs]
        # a constant output is refused only when it is constant in EVERY case (softmax over an axis that is 1
        # in one case is legitimate); SPEC `constant: true` on the output accepts it everywhere
        if all(f.size and not np.any(f) for f in flats):
            add(f"outputs.{name}", f"golden output is all zeros in every case (e.g. {cases[0].name}); a kernel "
                                   "writing zeros would pass -- choose inputs or ranges that give a non-trivial "
                                   "result, or mark the output `constant: true` in SPEC.md")
        elif all(f.size > 1 and np.all(f == f.reshape(-1)[0]) for f in flats):
            flat = flats[0]
            add(f"outputs.{name}", f"golden output is constant ({flat.reshape(-1)[0]:g} everywhere) in every case "
                                   f"(e.g. {cases[0].name}); a kernel returning that constant would pass -- or mark "
                                   "the output `constant: true` in SPEC.md if that is its meaning")
    pair = _probe_pair(cases)
    if pair is not None and not problems:
        a, b = runs[pair[0].name], runs[pair[1].name]
        inputs_differ = any(x.tobytes() != y.tobytes() for x, y in zip(a.inputs, b.inputs))
        for name in a.output_names:
            if name in {t.name for t in spec.outputs if t.constant}:
                continue
            same = a.outputs[name].tobytes() == b.outputs[name].tobytes()
            # both constant (a ReLU golden that is all zeros on both probe inputs): not evidence that the output
            # ignores its inputs - the check above already refused an output constant in every case
            flat = _flat(a.outputs[name]).reshape(-1)
            if inputs_differ and same and not (flat.size and np.all(flat == flat[0])):
                add(f"outputs.{name}", f"golden output is identical for seeds {pair[0].seed} and {pair[1].seed} "
                                       f"(cases {pair[0].name}, {pair[1].name}): it does not depend on the inputs")
    return problems


def _flat(arr: np.ndarray) -> np.ndarray:
    return arr.astype(np.float64) if arr.dtype.kind != "b" else arr.astype(np.int8)


def _safe_name(arr: np.ndarray) -> str:
    try:
        return name_of(arr.dtype)
    except ValueError:
        return str(arr.dtype)


MANY_CASES = 24
"""More cases than this makes every verification slow; intake says so."""
LARGE_TENSOR = 1 << 22
"""Elements above which one tensor of a case is called large (the CPU emulator runs every case)."""


def _scaled_by(fdef: ast.FunctionDef | None, name: str) -> bool:
    """``golden()`` multiplies or divides by ``name`` (a value it computes with, not a count or an axis; an exponent is
    left out - ``beta1 ** step`` takes a count)."""

    def mentions(node: ast.AST) -> bool:  # ``cap``, ``np.float32(cap)`` - not an index (``x[:, :k] * 2``)
        if isinstance(node, ast.Name):
            return node.id == name
        if isinstance(node, ast.Subscript):
            return mentions(node.value)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return mentions(node.left)
        return any(mentions(child) for child in ast.iter_child_nodes(node))

    scaling = (ast.Mult, ast.Div)
    return fdef is not None and any(isinstance(n, ast.BinOp) and isinstance(n.op, scaling)
                                    and (mentions(n.left) or mentions(n.right)) for n in ast.walk(fdef))


def _int_attribute_notes(spec: Spec, fdef: ast.FunctionDef | None) -> list[str]:
    """An attribute written as a whole number that golden() computes with: YAML reads ``cap: 30`` as an int (red team
    s35b: a kernel with the SPEC's cap built in passed every verification of such a SPEC - float attributes only were
    varied). Since unseen drawing version 14 such an int is varied too, but through whole numbers only (two of them,
    :func:`runtime.opdir._unseen.int_values`), where a float gets values of seven digits and one within 1-3%."""
    return [f"attribute '{k}' is an int ({v}) that golden() multiplies or divides by: verification passes other whole "
            f"numbers only - if it is a real value, write it as {float(v)!r}"
            for k, v in spec.attrs.items() if type(v) is int and _scaled_by(fdef, k)]


def _notes(spec: Spec, cases: list[Case]) -> list[str]:
    notes = []
    if len(cases) > MANY_CASES:
        notes.append(f"{len(cases)} cases (P0 shapes x dtypes x seeds): every verification runs all of them; "
                     f"consider fewer P0 shapes or seeds (about 12 is typical)")
    if not spec.dynamic_axes:
        notes.append("no dynamic_axes: no tail case is derived; make sure a P0 shape has sizes that are not "
                     "multiples of the tile")
    for c in cases:
        biggest = max((math.prod(t.concrete_shape(c.dims)) for t in [*spec.inputs, *spec.outputs]), default=0)
        if biggest > LARGE_TENSOR:
            notes.append(f"case {c.name} has a tensor of {biggest:,} elements; verification on the CPU emulator "
                         "will be slow")
            break
    return notes


def intake(op_dir: str | Path, *, timeout: float = GOLDEN_CASE_TIMEOUT_S, run_golden: bool = True,
           intermediates: bool = True) -> IntakeReport:
    """Check an operator directory completely; never raises for user mistakes, never writes.

    Args:
        op_dir: the operator directory.
        timeout: seconds per case for the golden run.
        run_golden: False skips executing golden.py (static checks only).
        intermediates: False runs golden.py without capturing its intermediates (``GoldenSummary.intermediates``
            empty): the same checks and problems, for a caller that only needs the verdict (a run's intake).
    """
    report = IntakeReport(op_dir=str(op_dir), ok=False)
    try:
        op = load_op_dir(op_dir)
    except OpDirError as exc:
        report.problems = exc.problems
        return report
    report.spec = op.spec
    report.has_make_inputs = op.has_make_inputs
    report.cases = op.cases()
    report.inventory = op.inventory()
    report.markers = op.module_markers()
    report.problems = op.static_problems()
    report.complexity = complexity(op)
    report.notes = _notes(op.spec, report.cases) + _int_attribute_notes(op.spec, op.golden_def)
    if run_golden:
        try:
            runs = run_golden_cases(op, report.cases, timeout=timeout, intermediates=intermediates)
        except GoldenError as exc:
            report.problems.extend(exc.problems)
        else:
            report.golden = [
                GoldenSummary(case=name, outputs={k: _describe(v) for k, v in run.outputs.items()},
                              intermediates={k: _describe(v) for k, v in run.intermediates.items()},
                              duration_s=round(run.duration_s, 6))
                for name, run in runs.items()
            ]
            report.problems.extend(check_golden_runs(op, runs, report.cases))
    report.ok = not report.problems
    return report
