"""Design-stage rules: DESIGN.md sections and front matter, module_interfaces.yaml, golden.py purity, and the
API/unroll rules applied to DESIGN.md python blocks.

The design gate is where a wrong plan is cheapest to stop: a module graph whose sources do not line up, or
pseudocode that prescribes an API name that does not exist, would otherwise cost a whole module loop.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

import yaml

from runtime.dtypes import DTypeError, canonical_name
from runtime.lint._opdir import front_matter
from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._rules_api import unknown_api_names
from runtime.lint._rules_crossfile import design_code_blocks
from runtime.lint._rules_loops import multi_value_unrolls
from runtime.lint._source import dotted
from runtime.lint._util import at, kernel_pf

__all__ = ["REQUIRED_SECTIONS", "validate_interfaces"]

REQUIRED_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Computation graph / API mapping", ("computation graph", "compute graph", "api mapping")),
    ("Tiling", ("tiling", "data partitioning")),
    ("Decomposition", ("decomposition",)),
    ("Verification plan", ("verification plan",)),
)
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_API_RE = re.compile(r"\bpypto\.([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?")
_UNROLL_RE = re.compile(r"pypto\.loop\([^)]*unroll_list\s*=\s*\[([^\]]*)\]")
_MODULE_SRC = re.compile(r"^module_(\d+)$")


def _headings(text: str) -> list[str]:
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = _HEADING.match(line)
        if m and not fenced:
            out.append(m.group(1).strip().lower())
    return out


@check("OL12", "design")
def ol12_sections(ctx: LintContext) -> Iterator[Hit]:
    heads = _headings(ctx.source)
    for title, keys in REQUIRED_SECTIONS:
        if not any(k in h for h in heads for k in keys):
            yield Hit(f"DESIGN.md has no `{title}` section (a heading containing "
                      f"{' or '.join(repr(k) for k in keys)})", 1, 1)


@check("PF07", "design")
def pf07_front_matter(ctx: LintContext) -> Iterator[Hit]:
    data, error, _ = front_matter(ctx.source)
    if data is None:
        yield Hit(f"DESIGN.md: {error}", 1, 1)
        return
    if not isinstance(data.get("op_name"), str) or not data["op_name"]:
        yield Hit("front matter: `op_name` missing or not a string", 1, 1)
    elif ctx.op is not None and ctx.op.spec.get("op_name") and data["op_name"] != ctx.op.spec["op_name"]:
        yield Hit(f"front matter: op_name {data['op_name']!r} != SPEC.md op_name {ctx.op.spec['op_name']!r}", 1, 1)
    if not isinstance(data.get("dynamic_axes"), list):
        yield Hit("front matter: `dynamic_axes` missing or not a list (write `[]` when every axis is static)", 1, 1)
    count = data.get("module_count")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        yield Hit(f"front matter: `module_count` must be an int >= 1, got {count!r}", 1, 1)


@check("OL55", "design")
def ol55_design_blocks(ctx: LintContext) -> Iterator[Hit]:
    for start, code in design_code_blocks(ctx.source):
        for offset, row in enumerate(code.splitlines()):
            found = [(m.start(), ".".join(x for x in ("pypto", *m.groups()) if x)) for m in _API_RE.finditer(row)]
            for i, message in unknown_api_names([full for _c, full in found]):
                yield Hit(f"DESIGN.md code: {message}", start + offset, found[i][0] + 1)


@check("OL56", "design")
def ol56_design_blocks(ctx: LintContext) -> Iterator[Hit]:
    for start, code in design_code_blocks(ctx.source):
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError):
            for offset, row in enumerate(code.splitlines()):
                m = _UNROLL_RE.search(row)
                if m and len(re.findall(r"-?\d+", m.group(1))) >= 2:
                    yield Hit("DESIGN.md code: `unroll_list` with several values; use one", start + offset, m.start() + 1)
            continue
        for call, n in multi_value_unrolls(tree):
            yield Hit(f"DESIGN.md code: `unroll_list` with {n} values; use one", start + call.lineno - 1,
                      call.col_offset + 1)


@check("OL15", "golden")
def ol15_golden_pure(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for node in pf.by_type.get(ast.Import, []):
        for alias in node.names:  # type: ignore[attr-defined]
            if alias.name.split(".")[0] == "pypto":
                yield at(node, "golden.py imports pypto; the golden must not depend on the kernel API")
    for node in pf.by_type.get(ast.ImportFrom, []):
        if (node.module or "").split(".")[0] == "pypto":  # type: ignore[attr-defined]
            yield at(node, "golden.py imports from pypto; the golden must not depend on the kernel API")
    for node in pf.by_type.get(ast.Attribute, []):
        if node.attr == "T" and isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
            yield at(node, f"`{ast.unparse(node)}` reverses all axes; transpose with explicit axes", status="WARN")
    for call in pf.by_type.get(ast.Call, []):
        f = call.func  # type: ignore[attr-defined]
        if isinstance(f, ast.Attribute) and f.attr == "t" and not call.args and not call.keywords:  # type: ignore[attr-defined]
            yield at(call, f"`{dotted(f)}()` transposes implicitly; use explicit axes", status="WARN")


# ------------------------------------------------------------------------------ module_interfaces.yaml

def _line_index(text: str) -> dict[tuple, int]:
    """Map YAML paths (tuple of keys/indices) to 1-based lines, from the composed node tree."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return {}
    out: dict[tuple, int] = {}
    todo: list[tuple[tuple, Any]] = [((), root)]
    while todo:
        path, node = todo.pop()
        if node is None:
            continue
        out[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                todo.append((path + (k.value,), v))
                out[path + (k.value,)] = k.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                todo.append((path + (i,), v))
    return out


def _shape_dim_ok(dim: Any) -> bool:
    if isinstance(dim, int) and not isinstance(dim, bool):
        return True
    if not isinstance(dim, str):
        return False
    try:
        tree = ast.parse(dim, mode="eval")
    except SyntaxError:
        return False
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Add, ast.Sub, ast.Mult,
               ast.FloorDiv, ast.UAdd, ast.USub)
    return all(isinstance(n, allowed) or (isinstance(n, ast.Constant) and isinstance(n.value, int))
               for n in ast.walk(tree))


def _dtype_ok(dt: Any) -> bool:
    if dt == "T":
        return True
    try:
        canonical_name(str(dt))
    except DTypeError:
        return False
    return True


def validate_interfaces(data: Any, spec: dict[str, Any] | None = None) -> list[tuple[tuple, str]]:
    """Schema + upstream validate_yaml rules 1-6 (+ ids contiguous, SPEC agreement). (path, message) list."""
    if not isinstance(data, dict):
        return [((), "module_interfaces.yaml is not a YAML mapping")]
    errs: list[tuple[tuple, str]] = []
    for key in ("op", "primary_inputs", "modules", "final_outputs"):
        if key not in data:
            errs.append(((), f"missing top-level key `{key}`"))
    prim = data.get("primary_inputs")
    prim_names: list[str] = []
    if not isinstance(prim, list) or not prim:
        errs.append((("primary_inputs",), "`primary_inputs` must be a non-empty list"))
    else:
        for i, p in enumerate(prim):
            if not isinstance(p, dict) or not isinstance(p.get("name"), str):
                errs.append((("primary_inputs", i), "primary input needs a `name`"))
                continue
            prim_names.append(p["name"])
            if "dtype" in p and not _dtype_ok(p["dtype"]):
                errs.append((("primary_inputs", i), f"unknown dtype {p['dtype']!r}"))
        if len(set(prim_names)) != len(prim_names):
            errs.append((("primary_inputs",), "duplicate primary input names"))
    if spec and isinstance(spec.get("inputs"), list):
        spec_names = [s.get("name") for s in spec["inputs"] if isinstance(s, dict)]
        if prim_names and spec_names and prim_names != spec_names:
            errs.append((("primary_inputs",), f"primary inputs {prim_names} != SPEC.md inputs {spec_names}"))
    if spec and spec.get("op_name") and data.get("op") and data["op"] != spec["op_name"]:
        errs.append((("op",), f"op {data['op']!r} != SPEC.md op_name {spec['op_name']!r}"))
    mods = data.get("modules")
    produced: dict[int, set[str]] = {}
    if not isinstance(mods, list) or not mods:
        errs.append((("modules",), "`modules` must be a non-empty list"))
        mods = []
    for i, mod in enumerate(mods):
        path = ("modules", i)
        if not isinstance(mod, dict):
            errs.append((path, "module entry must be a mapping"))
            continue
        mid = mod.get("id")
        if mid != i + 1:
            errs.append(((*path, "id"), f"module ids must be 1, 2, 3 ... in order; got {mid!r} at position {i + 1}"))
        mid = mid if isinstance(mid, int) else i + 1
        outs = mod.get("outputs")
        if not isinstance(outs, list) or not outs:
            errs.append((path, f"module {mid} needs a non-empty `outputs` list"))
            outs = []
        names: set[str] = set()
        for j, o in enumerate(outs):
            opath = (*path, "outputs", j)
            if not isinstance(o, dict) or not isinstance(o.get("name"), str):
                errs.append((opath, "output needs a `name`"))
                continue
            if o["name"] in names:
                errs.append((opath, f"duplicate output `{o['name']}` in module {mid}"))
            names.add(o["name"])
            shape = o.get("shape")
            if not isinstance(shape, list) or not all(_shape_dim_ok(d) for d in shape):
                errs.append((opath, f"output `{o['name']}` shape {shape!r}: dims must be ints, names or "
                                    "`+ - * //` expressions"))
            if not _dtype_ok(o.get("dtype")):
                errs.append((opath, f"output `{o['name']}` dtype {o.get('dtype')!r} is not a known dtype"))
        inputs = mod.get("inputs")
        if not isinstance(inputs, list):
            errs.append((path, f"module {mid} needs an `inputs` list"))
            inputs = []
        for j, inp in enumerate(inputs):
            ipath = (*path, "inputs", j)
            if not isinstance(inp, dict):
                errs.append((ipath, "input entry must be a mapping with name and source"))
                continue
            name, src = inp.get("name"), str(inp.get("source", ""))
            if src == "primary":
                if name not in prim_names:
                    errs.append((ipath, f"input `{name}` has source primary but is not a primary input"))
                continue
            m = _MODULE_SRC.match(src)
            if m is None:
                errs.append((ipath, f"input `{name}` source {src!r} must be `primary` or `module_<j>`"))
            elif int(m.group(1)) >= mid:
                errs.append((ipath, f"input `{name}` comes from module {m.group(1)}, not an earlier module"))
            elif name not in produced.get(int(m.group(1)), set()):
                errs.append((ipath, f"input `{name}` is not an output of module {m.group(1)}"))
        produced[mid] = names
    finals = data.get("final_outputs")
    if not isinstance(finals, list) or not finals:
        errs.append((("final_outputs",), "`final_outputs` must be a non-empty list"))
        finals = []
    for j, f in enumerate(finals):
        fpath = ("final_outputs", j)
        if not isinstance(f, dict):
            errs.append((fpath, "final output must be a mapping with name and source"))
            continue
        m = _MODULE_SRC.match(str(f.get("source", "")))
        if m is None or int(m.group(1)) not in produced:
            errs.append((fpath, f"final output `{f.get('name')}` source {f.get('source')!r} is not a module"))
        elif f.get("name") not in produced[int(m.group(1))]:
            errs.append((fpath, f"final output `{f.get('name')}` is not produced by module {m.group(1)}"))
    return errs


@check("PF06", "interfaces")
def pf06_interfaces(ctx: LintContext) -> Iterator[Hit]:
    try:
        data = yaml.safe_load(ctx.source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        yield Hit(f"not valid YAML: {str(exc).splitlines()[0]}", (mark.line + 1) if mark else 0)
        return
    lines = _line_index(ctx.source)
    spec = ctx.op.spec if ctx.op is not None else None
    for path, message in validate_interfaces(data, spec):
        line = next((lines[path[:n]] for n in range(len(path), -1, -1) if path[:n] in lines), 1)
        yield Hit(message, line, 1)
