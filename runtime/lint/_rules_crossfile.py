"""Cross-file rules: the kernel agrees with DESIGN.md, module_interfaces.yaml and golden.py.

They need the op directory (``op_dir``); without it they report SKIP. The wrapper ABI (OL50) matters most:
the verifier calls ``<op>_module<sfx>_wrapper`` / ``<op>_wrapper`` with the primary inputs in
module_interfaces.yaml order (a stage wrapper may take just the primary inputs its modules 1..k read), so a
renamed or reordered parameter feeds the wrong tensor.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from runtime.lint._opdir import OpContext, parse_stage_name
from runtime.lint._registry import Hit, LintContext, Skip, check
from runtime.lint._util import (
    at,
    dynamic_names,
    has_dynamic,
    is_tensor_annotation,
    jit_params,
    kernel_pf,
    spec_attrs,
)
from runtime.markers import STUB_RE
from runtime.stages import final_wrapper, stage_wrapper

__all__ = ["design_code_blocks"]

_FENCE = re.compile(r"^\s*```\s*(\w*)")
_ASSIGNED = re.compile(r"^\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=[^=]")
_COMMON = {"i", "j", "k", "n", "m", "x", "y", "z", "tmp", "temp", "result", "out", "input", "output"}
_DYN_TEXT = re.compile(r"pypto\.DYNAMIC|dynamic[ _-]ax(is|es)", re.IGNORECASE)


def design_code_blocks(text: str) -> list[tuple[int, str]]:
    """(first line number, code) of each ```python / ```py fenced block in a markdown text."""
    blocks: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m:
            lang = m.group(1).lower()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            if lang in ("python", "py"):
                blocks.append((i + 2, "\n".join(lines[i + 1:j])))
            i = j + 1
        else:
            i += 1
    return blocks


def _design_declares_dynamic(op: OpContext) -> bool:
    if op.design_text is None:
        raise Skip("no DESIGN.md in the op directory")
    if "dynamic_axes" in op.design:
        return bool(op.dynamic_axes())
    return bool(_DYN_TEXT.search(op.design_text))


@check("OL31")
def ol31_dynamic_marked(ctx: LintContext) -> Iterator[Hit]:
    pf, op = kernel_pf(ctx), ctx.require_op()
    if op.design_text is None:
        raise Skip("no DESIGN.md in the op directory")
    axes = op.dynamic_axes()
    if not axes:
        return
    for fn in pf.jit_fns:
        anns = [p.annotation for p in jit_params(fn) if is_tensor_annotation(p.annotation, pf)]
        if not any(has_dynamic(a, dynamic_names(pf)) for a in anns if a is not None):
            yield at(fn, f"DESIGN.md declares dynamic axes {axes} but no annotation of `{fn.name}` uses "
                     "`pypto.DYNAMIC`")


@check("OL43")
def ol43_dynamic_loop(ctx: LintContext) -> Iterator[Hit]:
    pf, op = kernel_pf(ctx), ctx.require_op()
    if not pf.jit_fns or not _design_declares_dynamic(op):
        return
    loops = {"pypto.loop", "pypto.loop_unroll"}
    if not any(pf.name(c.func) in loops for fn in pf.graph_functions() for c in pf.calls_in.get(fn, [])):
        yield at(pf.jit_fns[0], "DESIGN.md declares dynamic axes but the kernel has no `pypto.loop`")


def _expected_wrapper(ctx: LintContext, op: OpContext) -> tuple[str, str]:
    stage = parse_stage_name(ctx.display, op.op_name)
    if stage.kind == "other":
        raise Skip("file name is neither `<op>_impl.py` nor `<op>_module<sfx>_impl.py`")
    name = op.op_name or stage.op
    if stage.kind == "stage":
        if stage.error:
            return "", stage.error
        return stage_wrapper(name, len(stage.modules)), ""
    return final_wrapper(name), ""


@check("OL50")
def ol50_wrapper_abi(ctx: LintContext) -> Iterator[Hit]:
    pf, op = kernel_pf(ctx), ctx.require_op()
    wrapper_name, error = _expected_wrapper(ctx, op)
    if error:
        yield Hit(f"cannot derive the wrapper name: {error}", 1, 1)
        return
    expected = op.primary_inputs()
    fn = pf.functions.get(wrapper_name)
    if fn is None:
        yield Hit(f"no wrapper `{wrapper_name}` (the verifier calls it by this name)", 1, 1)
        return
    if expected is None:
        raise Skip("no primary_inputs in module_interfaces.yaml (or inputs in SPEC.md)")
    a = fn.args
    if a.vararg or a.kwarg:
        yield at(fn, f"`{wrapper_name}` takes *args/**kwargs; list the primary inputs explicitly")
    attrs = spec_attrs(ctx)  # SPEC attributes come as keywords; defaulted extras are not passed (verify)
    positional = [*a.posonlyargs, *a.args]
    defaulted = {p.arg for p in positional[len(positional) - len(a.defaults):]} if a.defaults else set()
    defaulted |= {p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None}
    params = [p for p in [*a.posonlyargs, *a.args, *a.kwonlyargs] if p.arg not in attrs
              and not (p.arg in defaulted and p.arg not in (expected or []))]
    stubs = [p for p in params if STUB_RE.search(pf.line_text(p.lineno))]
    real = [p.arg for p in params if p not in stubs]
    accepted = [expected]
    stage = parse_stage_name(ctx.display, op.op_name)
    if stage.kind == "stage":  # a stage wrapper may also take only the primary inputs its modules read
        used = op.primary_inputs_used(stage.modules)
        if used:
            accepted.append(used)
    if real not in accepted:
        alt = f" (or {accepted[1]}, the ones modules {stage.suffix} read)" if len(accepted) > 1 else ""
        yield at(fn, f"`{wrapper_name}` parameters {real} != primary inputs {expected}{alt}, in "
                 "module_interfaces.yaml order")
    if stubs and params[: len(real)] != [p for p in params if p not in stubs]:
        yield at(stubs[0], "`# STUB` parameters must come after the primary inputs")


@check("OL33")
def ol33_golden_arity(ctx: LintContext) -> Iterator[Hit]:
    pf, op = kernel_pf(ctx), ctx.require_op()
    sig = op.golden_signature
    if sig is None:
        raise Skip("no parseable `golden(...)` in golden.py")
    wrapper_name, _ = _expected_wrapper(ctx, op)
    fn = pf.functions.get(wrapper_name)
    if fn is None:
        raise Skip(f"no `{wrapper_name}` (reported by OL50)")
    required = len(fn.args.posonlyargs + fn.args.args) - len(fn.args.defaults)
    if required != sig[1]:
        yield at(fn, f"`{wrapper_name}` has {required} required parameters, `golden` has {sig[1]}")


def _design_names(text: str) -> set[str]:
    names: set[str] = set()
    for _line, code in design_code_blocks(text):
        for row in code.splitlines():
            m = _ASSIGNED.match(row)
            if m:
                names |= {n.strip() for n in m.group(1).split(",")}
    return names - _COMMON


@check("OL37")
def ol37_design_names(ctx: LintContext) -> Iterator[Hit]:
    pf, op = kernel_pf(ctx), ctx.require_op()
    if op.design_text is None:
        raise Skip("no DESIGN.md in the op directory")
    design = _design_names(op.design_text)
    if len(design) < 3:
        raise Skip("DESIGN.md pseudocode names fewer than 3 intermediates")
    kernel: set[str] = set()
    for fn in pf.jit_fns:
        for node in pf.nodes_in(fn, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            kernel |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    shared = design & (kernel - _COMMON)
    if len(shared) < 2:
        yield Hit(f"kernel intermediates share {len(shared)} names with the DESIGN.md pseudocode "
                  f"({', '.join(sorted(design)[:6])}, ...)", 1, 1)
