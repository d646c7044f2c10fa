"""Loading an operator directory: SPEC.md parsed and validated, golden.py checked statically.

``load_op_dir`` never executes golden.py (that happens only in a child process, see
:mod:`runtime.opdir._golden_runner`); it parses it with ``ast`` to find ``golden`` and ``make_inputs``.
It raises on what makes the directory unusable (SPEC problems, golden.py missing / syntax error / no
``golden`` function). Inventory and marker problems are reported by :func:`runtime.opdir._intake` instead,
so a verifier can still run on a directory whose inventory needs fixing.
"""

from __future__ import annotations

import ast
import logging
from functools import cached_property
from pathlib import Path

import numpy as np

from runtime import pyast
from runtime.opdir._cases import Case, build_cases
from runtime.opdir._golden_runner import run_golden
from runtime.opdir._inputs import generate_inputs
from runtime.opdir._inventory import InventoryRow, ModuleMarker, parse_inventory, parse_module_markers
from runtime.opdir._problems import OpDirError, Problem, closest_dir_hint, enclosing_op_dir_hint
from runtime.opdir._spec import Spec, load_spec

__all__ = ["GOLDEN_FILE", "SPEC_FILE", "OpDir", "load_op_dir"]

log = logging.getLogger(__name__)

SPEC_FILE = "SPEC.md"
GOLDEN_FILE = "golden.py"


class OpDir:
    """A loaded operator directory.

    Example::

        op = load_op_dir("workspace/silu")
        case = op.cases()[0]              # Case(name="B64_D256-fp32-s0-normal", ...)
        x, = op.make_inputs(case)
    """

    def __init__(self, root: Path, spec: Spec, golden_source: str, golden_tree: ast.Module) -> None:
        self.root = root
        self.spec = spec
        self.spec_path = root / SPEC_FILE
        self.golden_path = root / GOLDEN_FILE
        self.golden_source = golden_source
        self.golden_tree = golden_tree
        top = {n.name for n in golden_tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.has_make_inputs = "make_inputs" in top
        """golden.py defines ``make_inputs(case, rng)``: inputs come from it (run in the golden process)."""

    def __repr__(self) -> str:
        return f"OpDir({str(self.root)!r}, op_name={self.spec.op_name!r})"

    @cached_property
    def golden_def(self) -> ast.FunctionDef | None:
        """golden.py's top-level ``def golden``, or None (``golden`` bound some other way)."""
        return next((n for n in self.golden_tree.body if isinstance(n, ast.FunctionDef) and n.name == "golden"), None)

    @cached_property
    def _cases(self) -> list[Case]:
        return build_cases(self.spec)

    def cases(self, *, case: str | None = None) -> list[Case]:
        """The verification cases; ``case`` selects one by name.

        Raises:
            OpDirError: ``case`` names no case (the message lists the valid names).
        """
        if case is None:
            return list(self._cases)
        chosen = [c for c in self._cases if c.name == case]
        if not chosen:
            names = ", ".join(c.name for c in self._cases)
            raise OpDirError([Problem(file=SPEC_FILE, field="case", message=f"no case named {case!r}; cases: {names}")])
        return chosen

    def make_inputs(self, case: Case) -> list[np.ndarray]:
        """The inputs of ``case`` (deterministic: same case -> identical bytes).

        When golden.py defines ``make_inputs`` the arrays come from it, run in a golden child process
        (the same arrays ``run_golden`` uses); otherwise they are generated from SPEC.md in this process.
        """
        if self.has_make_inputs:
            return run_golden(self, case).inputs
        return generate_inputs(self.spec, case)

    def inventory(self) -> list[InventoryRow]:
        """Rows of the *Golden function inventory* table (malformed rows are skipped; see intake)."""
        return parse_inventory(self.golden_source, GOLDEN_FILE)[0]

    def module_markers(self) -> list[ModuleMarker]:
        """``# --- Module Mk: role ---`` lines of golden.py, in file order."""
        return parse_module_markers(self.golden_source, GOLDEN_FILE)[0]

    def static_problems(self) -> list[Problem]:
        """Inventory and module-marker problems (not fatal for loading; intake reports them)."""
        return parse_inventory(self.golden_source, GOLDEN_FILE)[1] + parse_module_markers(self.golden_source,
                                                                                          GOLDEN_FILE)[1]


def _other_top_level_names(tree: ast.Module) -> set[str]:
    """Names bound at module level by assignment or import (``golden = partial(...)``, ``from x import golden``)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _check_golden(source: str, spec: Spec | None) -> tuple[ast.Module | None, list[Problem]]:
    try:
        tree = pyast.parse(source, filename=GOLDEN_FILE)
    except SyntaxError as exc:
        return None, [Problem(file=GOLDEN_FILE, line=exc.lineno, field="golden", message=f"syntax error: {exc.msg}")]
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    problems: list[Problem] = []
    golden = funcs.get("golden")
    if golden is None and "golden" not in _other_top_level_names(tree):
        problems.append(Problem(file=GOLDEN_FILE, line=1, field="golden",
                                message="golden.py defines no top-level function 'golden(*inputs)'"))
    elif golden is not None and spec is not None:
        a = golden.args
        positional = len(a.posonlyargs) + len(a.args)
        if a.vararg is None and positional < len(spec.inputs):
            problems.append(Problem(file=GOLDEN_FILE, line=golden.lineno, field="golden",
                                    message=f"golden takes {positional} positional parameter(s) but SPEC.md declares "
                                            f"{len(spec.inputs)} inputs ({', '.join(t.name for t in spec.inputs)})"))
    mk = funcs.get("make_inputs")
    if mk is not None and len(mk.args.posonlyargs) + len(mk.args.args) != 2 and mk.args.vararg is None:
        problems.append(Problem(file=GOLDEN_FILE, line=mk.lineno, field="make_inputs",
                                message="make_inputs must take exactly two parameters: (case, rng)"))
    return tree, problems


def _not_there(path: Path) -> str:
    """Why ``path`` (SPEC.md, golden.py) cannot be read as the file it should be."""
    return f"{path} is a directory, not a file" if path.is_dir() else f"missing: {path} does not exist"


def load_op_dir(path: str | Path) -> OpDir:
    """Load and validate an operator directory (SPEC.md + golden.py); never writes anything.

    Raises:
        OpDirError: every problem found, each naming file, line and field.
    """
    root = Path(path)
    if not root.is_dir():
        # a missing folder said "is not a directory", which reads as "it is a file" (s47 open item): say which
        raise OpDirError([Problem(file=str(path), message=(
            "is a file, not a directory" if root.exists() else "does not exist")
            + " (expected an operator directory holding SPEC.md and golden.py)"
            + (enclosing_op_dir_hint(root) if root.exists() else closest_dir_hint(root)))])
    problems: list[Problem] = []
    spec: Spec | None = None
    if not (root / SPEC_FILE).is_file():
        problems.append(Problem(file=SPEC_FILE, message=_not_there(root / SPEC_FILE)))
    else:
        try:
            spec = load_spec(root / SPEC_FILE)
        except OpDirError as exc:
            problems.extend(exc.problems)
    tree: ast.Module | None = None
    source = ""
    if not (root / GOLDEN_FILE).is_file():
        problems.append(Problem(file=GOLDEN_FILE, message=_not_there(root / GOLDEN_FILE)))
    else:
        try:
            source = (root / GOLDEN_FILE).read_text(encoding="utf-8-sig")  # a byte-order mark dropped, as Python does
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(file=GOLDEN_FILE, message=f"cannot read: {exc}"))
        else:
            tree, golden_problems = _check_golden(source, spec)
            problems.extend(golden_problems)
    if spec is not None and not problems:
        problems.extend(_size_problems(spec))
    if problems:
        raise OpDirError(problems)
    assert spec is not None and tree is not None
    return OpDir(root, spec, source, tree)


def _size_problems(spec: Spec) -> list[Problem]:
    """Cases too large for this machine's memory: an op-dir problem, found before anything is allocated."""
    from runtime.opdir._memory import memory_problems

    try:
        cases = build_cases(spec)
    except Exception:  # noqa: BLE001 - case problems are reported where the cases are built
        return []
    return memory_problems(spec, cases)
