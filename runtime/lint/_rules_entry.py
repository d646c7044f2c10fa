"""Kernel entry rules: the JIT decorator, the pypto import, the kernel signature, the wrapper's existence.

These are what the PyPTO frontend checks (or silently mis-handles) before a single op is traced, so an
error here wastes a whole verification round.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._source import dotted
from runtime.lint._util import (
    at,
    dynamic_names,
    has_dynamic,
    infer_dtype,
    is_tensor_annotation,
    jit_params,
    kernel_pf,
)

_SCALAR_ANNOTATIONS = {"int", "float", "bool", "str", "list", "tuple", "dict"}
_FP32_ONLY = {"sigmoid", "softmax", "sin", "cos"}


def _literal_jit(dec: ast.AST) -> bool:
    return dotted(dec.func if isinstance(dec, ast.Call) else dec) == "pypto.frontend.jit"


@check("OL01")
def ol01_single_literal_jit(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    literal = [fn for fn in pf.nodes(ast.FunctionDef) if any(_literal_jit(d) for d in fn.decorator_list)]
    if not literal:
        aliased = [fn.name for fn in pf.jit_fns]
        extra = f" (found aliased jit on {', '.join(aliased)})" if aliased else ""
        yield Hit(f"no function decorated with the literal `@pypto.frontend.jit`{extra}", 1, 1)
    if literal:  # several kernels (one per dtype or path, behind one dispatcher) are fine; aliases are not
        for fn in pf.jit_fns:
            if fn not in literal:
                yield at(fn, f"JIT kernel `{fn.name}` is decorated through an alias; use the literal "
                         "`@pypto.frontend.jit`")


@check("OL07")
def ol07_plain_import(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    plain = False
    for node in pf.nodes(ast.Import):
        for alias in node.names:
            if alias.name == "pypto" and alias.asname is None:
                plain = plain or pf.parents.get(node) is pf.tree
            elif alias.name == "pypto" or alias.name.startswith("pypto."):
                yield at(node, f"`import {alias.name}{' as ' + alias.asname if alias.asname else ''}`: "
                         "import pypto only as `import pypto`")
    for node in pf.nodes(ast.ImportFrom):
        mod = node.module or ""
        if mod == "pypto" or mod.startswith("pypto."):
            yield at(node, f"`from {mod} import ...`: spell the names as `pypto.<name>` after `import pypto`")
    if not plain:
        yield Hit("no module-level `import pypto`", 1, 1)


@check("OL08")
def ol08_wrapper_exists(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    if not any(name.endswith("_wrapper") for name in pf.functions):
        yield Hit("no module-level function named `*_wrapper` (the verifier calls the wrapper)", 1, 1)


@check("OL05")
def ol05_annotations(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.jit_fns:
        for p in jit_params(fn):
            ann = p.annotation
            if ann is None:
                yield at(p, f"JIT parameter `{p.arg}` has no annotation")
            elif isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                yield at(p, f"JIT parameter `{p.arg}` has a string annotation; tensors must be annotated with "
                         "`pypto.Tensor(...)` objects (no `from __future__ import annotations`)")
            elif not is_tensor_annotation(ann, pf):
                name = pf.name(ann.value if isinstance(ann, ast.Subscript) else ann)
                if name.split(".")[-1] in ("Tensor", "ndarray", "Array") or name.startswith(("torch.", "numpy.")):
                    yield at(p, f"JIT parameter `{p.arg}` is annotated `{ast.unparse(ann)}`; "
                             "tensors must be annotated `pypto.Tensor([...], pypto.DT_...)`")


@check("OL25")
def ol25_explicit_shape(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.jit_fns:
        for p in jit_params(fn):
            ann = p.annotation
            if not is_tensor_annotation(ann, pf):
                continue
            if isinstance(ann, ast.Subscript):
                if isinstance(ann.slice, ast.Constant) and ann.slice.value is Ellipsis:
                    yield at(p, f"`{p.arg}: {ast.unparse(ann)}` takes shape and dtype from the call (0.2.0 forces "
                             "FP32); give an explicit shape and dtype")
                continue
            if not isinstance(ann, ast.Call):
                yield at(p, f"`{p.arg}: {ast.unparse(ann)}` has no explicit shape")  # type: ignore[arg-type]
                continue
            shape = ann.args[0] if ann.args else next((k.value for k in ann.keywords if k.arg == "shape"), None)
            if shape is None or (isinstance(shape, (ast.List, ast.Tuple)) and not shape.elts):
                yield at(p, f"`{p.arg}: {ast.unparse(ann)}` has no explicit shape")
            elif len(ann.args) < 2 and not any(k.arg == "dtype" for k in ann.keywords):
                yield at(p, f"`{p.arg}: {ast.unparse(ann)}` has no dtype (defaults to FP32)", status="WARN")


@check("OL26")
def ol26_tensors_first(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.jit_fns:
        seen_scalar = ""
        for p in jit_params(fn):
            if is_tensor_annotation(p.annotation, pf):
                if seen_scalar:
                    yield at(p, f"tensor parameter `{p.arg}` comes after non-tensor parameter `{seen_scalar}`")
            elif not seen_scalar:
                seen_scalar = p.arg


@check("OL28")
def ol28_fp32_only_ops(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.jit_fns:
        for call in pf.nodes_in(fn, ast.Call):
            name = pf.name(call.func)  # type: ignore[attr-defined]
            short = name.split(".")[-1]
            if short not in _FP32_ONLY:
                continue
            if name.startswith("pypto.") and call.args:  # type: ignore[attr-defined]
                arg = call.args[0]  # type: ignore[attr-defined]
            elif isinstance(call.func, ast.Attribute) and not name.startswith("pypto."):  # type: ignore[attr-defined]
                arg = call.func.value  # type: ignore[attr-defined]
            else:
                continue
            dt = infer_dtype(arg, fn, pf, call.lineno)  # type: ignore[attr-defined]
            if dt is not None and dt != "DT_FP32":
                yield at(call, f"`{short}` is FP32-only but its input is {dt}; cast to pypto.DT_FP32 first")


@check("OL29")
def ol29_dynamic_axis(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    if ctx.op is not None and ctx.op.spec and not ctx.op.spec.get("dynamic_axes"):
        return  # SPEC declares every axis static
    for fn in pf.jit_fns:
        anns = [p.annotation for p in jit_params(fn) if is_tensor_annotation(p.annotation, pf)]
        if anns and not any(has_dynamic(a, dynamic_names(pf)) for a in anns if a is not None):
            yield at(fn, f"no tensor annotation of `{fn.name}` marks an axis `pypto.DYNAMIC`")

