"""What a target file must compute: final outputs or the boundary outputs of modules 1..k.

* ``<op>_impl.py`` -> wrapper ``<op>_wrapper``, expected = golden outputs (SPEC output order);
* ``modules/<op>_module<sfx>_impl.py`` -> wrapper ``<op>_module<sfx>_wrapper``, expected = every output of
  modules 1..k in module_interfaces.yaml (module order, then output order), taken from golden's captured
  intermediates (or its outputs when a boundary is a final output).

The wrapper's parameters are read from the stage file's AST (never by importing it): each must be a SPEC
input, or - only on a line marked ``# STUB`` - a boundary tensor of a later module that the verifier feeds
from the golden (workflow.md Part A "Stubs").
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runtime import pyast
from runtime.interfaces import InterfacesError, ModuleInterfaces, find_interfaces, load_interfaces
from runtime.markers import STUB_RE
from runtime.markers import module_regions as _regions
from runtime.stages import final_file, final_wrapper, parse_stage_name, stage_wrapper
from runtime.verify._calling import imports_torch

__all__ = ["TargetError", "TargetPlan", "frozen_violations", "module_regions", "plan_target"]



class TargetError(ValueError):
    """The target or module_interfaces.yaml cannot be used (one clear message)."""


@dataclass
class TargetPlan:
    """How to run and judge one target."""

    kind: str  # "module" | "final"
    module: int | None
    wrapper: str
    params: list[str]
    stub_params: list[str]
    expected: list[str]  # leaf names, in the order the wrapper returns them
    interfaces_path: Path | None
    notes: list[str] = field(default_factory=list)
    attrs: list[str] = field(default_factory=list)
    """SPEC attributes the wrapper names as parameters: passed as keyword arguments with the SPEC values."""
    torch_io: bool = False
    """The file imports torch: the wrapper gets torch CPU tensors and may return them (see ``_calling``)."""


def _wrapper_params(source: str, wrapper: str, file: str,
                    attrs: dict[str, Any] | None = None) -> tuple[list[str], list[str], list[str]]:
    """(tensor parameters in order, STUB parameters, SPEC-attribute parameters) of the wrapper.

    Tensor parameters come first and positionally; after them, a parameter named like a SPEC attribute gets
    that attribute as a keyword argument, and any other parameter needs a default (it is not passed).
    """
    try:
        tree = pyast.parse(source, filename=file)
    except SyntaxError as exc:
        raise TargetError(f"{file}:{exc.lineno}: syntax error: {exc.msg}") from None
    lines = source.splitlines()
    attrs = attrs or {}
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == wrapper]
    for node in defs[-1:]:  # the last definition is the one the module exports (an imported gym file may
        # define a function of that name first, kept as `_gym_<name> = <name>` before the PTO Forge wrapper)
            args = node.args
            if args.vararg or args.kwarg:
                raise TargetError(f"{file}:{node.lineno}: {wrapper} must take explicit parameters (no *args/**kwargs)")
            positional = args.posonlyargs + args.args
            n_default = len(args.defaults)
            has_default = {a.arg for a in positional[len(positional) - n_default:]} if n_default else set()
            has_default |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None}
            params: list[str] = []
            keyword: list[str] = []
            for a in positional:
                if a.arg in attrs:
                    keyword.append(a.arg)
                elif a.arg in has_default:
                    continue
                elif keyword:
                    raise TargetError(f"{file}:{node.lineno}: {wrapper}: tensor parameter {a.arg!r} comes after a "
                                      "SPEC attribute; put the tensor inputs first")
                else:
                    params.append(a.arg)
            for a in args.kwonlyargs:
                if a.arg in attrs:
                    keyword.append(a.arg)
                elif a.arg not in has_default:
                    raise TargetError(f"{file}:{node.lineno}: {wrapper}: keyword-only parameter {a.arg!r} is not a "
                                      "SPEC attribute and has no default")
            stubs = [a.arg for a in positional if a.arg in params
                     and STUB_RE.search(lines[a.lineno - 1] if a.lineno - 1 < len(lines) else "")]
            return params, stubs, keyword
    raise TargetError(f"{file}: no top-level function {wrapper}() (the wrapper the verifier calls)")


def plan_target(op_dir: Path, target: Path, op_name: str, input_names: list[str],
                output_names: list[str], attrs: dict[str, Any] | None = None) -> TargetPlan:
    """Resolve what ``target`` must compute.

    Raises:
        TargetError: unknown file name pattern, missing/invalid module_interfaces.yaml for a stage file,
            missing wrapper, or wrapper parameters that are not inputs.
    """
    name = target.name
    try:
        source = target.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        from runtime.lint._encoding import not_utf8

        raise TargetError(f"{name}: {not_utf8(target.read_bytes(), 'kernel files') or exc}") from None
    except OSError as exc:
        raise TargetError(f"{name}: cannot be read as UTF-8 Python source ({exc})") from None
    if "\x00" in source:  # UTF-16 without a byte-order mark decodes as UTF-8 (was "line None: syntax error")
        from runtime.lint._encoding import nul_problem

        hit = nul_problem(source)
        assert hit is not None
        raise TargetError(f"{name}: {hit.message}; {hit.fix}")
    interfaces = find_interfaces(op_dir)
    stage = parse_stage_name(name, op_name)
    if name == final_file(op_name):
        wrapper = final_wrapper(op_name)
        params, stubs, keyword = _wrapper_params(source, wrapper, name, attrs)
        if stubs:
            raise TargetError(f"{name}: STUB parameters are not allowed in the final file ({', '.join(stubs)})")
        plan = TargetPlan("final", None, wrapper, params, [], list(output_names), interfaces, attrs=keyword)
    else:
        k = stage.module if stage.kind == "stage" and stage.op == op_name else None
        if k is None:
            raise TargetError(
                f"{name}: a target is {op_name}_impl.py or modules/{op_name}_module<1|12|123...>_impl.py")
        if interfaces is None:
            raise TargetError(f"{name}: a stage file needs module_interfaces.yaml in the op directory")
        try:
            model = load_interfaces(interfaces)
        except InterfacesError as exc:
            raise TargetError(str(exc)) from None
        if len(model.modules) < k:
            raise TargetError(f"{name}: module_interfaces.yaml declares {len(model.modules)} module(s), the file is M{k}")
        expected = model.boundary_outputs(k)
        if not expected:
            raise TargetError(f"{interfaces.name}: modules 1..{k} declare no outputs")
        wrapper = stage_wrapper(op_name, k)
        params, stubs, keyword = _wrapper_params(source, wrapper, name, attrs)
        boundaries = _stub_boundaries(model, k)
        loose = [s for s in stubs if s not in boundaries]
        if loose:
            raise TargetError(
                f"{name}: STUB parameter(s) {', '.join(loose)} are not boundary tensors of modules 1..{k}: a STUB may "
                f"only feed a module input that module_interfaces.yaml sources from an earlier module ("
                f"{', '.join(sorted(boundaries)) or 'none here'})")
        plan = TargetPlan("module", k, wrapper, params, stubs, expected, interfaces, attrs=keyword)
    for p in plan.params:
        if p not in input_names and p not in plan.stub_params:
            raise TargetError(
                f"{name}: wrapper parameter {p!r} is not a SPEC input ({', '.join(input_names)})"
                + ("" if plan.kind == "final" else "; golden-fed boundary tensors need a '# STUB' comment"))
    plan.torch_io = imports_torch(source)
    return plan


def _stub_boundaries(model: ModuleInterfaces, k: int) -> set[str]:
    """Names a ``# STUB`` may feed in stage ``k``: module inputs among modules 1..k sourced from an earlier module.

    Why: a STUB is a golden-fed stand-in for a boundary the design declared, never an arbitrary golden local - a
    stage that took the golden's own intermediates (say the exponentials and row sums of a softmax) as STUBs
    could skip its module's work and still match (held-out attack A11).
    """
    return {i.name for m in model.modules[:k] for i in m.inputs if i.source != "primary"}


def module_regions(source: str) -> dict[int, list[str]]:
    """Lines of each ``# --- Module Mk`` region (`runtime.markers`, the definition lint rule PF05 uses too).

    A region runs to the next module marker, an ``# --- end ...`` marker or the end of the enclosing block;
    ``# STUB`` lines and trailing blank lines are not part of it; trailing whitespace is ignored.
    """
    return {num: region.texts for num, region in _regions(source.splitlines()).items()}


def frozen_violations(previous: str, current: str, upto: int) -> list[str]:
    """Messages for every module 1..upto whose marked region differs between two stage files."""
    before, after = module_regions(previous), module_regions(current)
    problems: list[str] = []
    for mid in range(1, upto + 1):
        if mid not in before:
            continue
        if mid not in after:
            problems.append(f"frozen module M{mid}: its '# --- Module M{mid}' region was removed")
            continue
        a, b = before[mid], after[mid]
        if a != b:
            first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
            was = a[first].strip() if first < len(a) else "<end of region>"
            now = b[first].strip() if first < len(b) else "<end of region>"
            problems.append(f"frozen module M{mid} was modified at region line {first + 1}: "
                            f"was {was!r}, now {now!r}")
    return problems
