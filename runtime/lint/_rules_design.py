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

from runtime import pyast
from runtime.interfaces import validate_interfaces
from runtime.lint._opdir import front_matter
from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._rules_api import unknown_api_names
from runtime.lint._rules_crossfile import design_code_blocks
from runtime.lint._rules_loops import multi_value_unrolls, unroll_verdict
from runtime.lint._source import dotted
from runtime.lint._util import at, kernel_pf
from runtime.yamlio import load_yaml

__all__ = ["REQUIRED_SECTIONS"]

REQUIRED_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Computation graph / API mapping", ("computation graph", "compute graph", "api mapping")),
    ("Tiling", ("tiling", "data partitioning")),
    ("Decomposition", ("decomposition",)),
    ("Verification plan", ("verification plan",)),
)
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_API_RE = re.compile(r"\bpypto\.([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?")
_UNROLL_RE = re.compile(r"pypto\.loop\([^)]*unroll_list\s*=\s*\[([^\]]*)\]")


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
            tree = pyast.parse(code)
        except (SyntaxError, ValueError, RecursionError):
            for offset, row in enumerate(code.splitlines()):
                m = _UNROLL_RE.search(row)
                if m and len(re.findall(r"-?\d+", m.group(1))) >= 2:
                    status, why = unroll_verdict(ctx, 2)
                    yield Hit(f"DESIGN.md code: `unroll_list` with several values: {why}", start + offset,
                              m.start() + 1, status=status)
            continue
        for call, n in multi_value_unrolls(tree):
            status, why = unroll_verdict(ctx, n)
            yield Hit(f"DESIGN.md code: `unroll_list` with {n} values: {why}", start + call.lineno - 1,
                      call.col_offset + 1, status=status)


@check("OL15", "golden")
def ol15_golden_pure(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for node in pf.nodes(ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "pypto":
                yield at(node, "golden.py imports pypto; the golden must not depend on the kernel API")
    for node in pf.nodes(ast.ImportFrom):
        if (node.module or "").split(".")[0] == "pypto":
            yield at(node, "golden.py imports from pypto; the golden must not depend on the kernel API")
    for node in pf.nodes(ast.Attribute):
        if node.attr == "T" and isinstance(node.ctx, ast.Load):
            yield at(node, f"`{ast.unparse(node)}` reverses all axes; transpose with explicit axes", status="WARN")
    for call in pf.nodes(ast.Call):
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr == "t" and not call.args and not call.keywords:
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


@check("PF06", "interfaces")
def pf06_interfaces(ctx: LintContext) -> Iterator[Hit]:
    try:
        data = load_yaml(ctx.source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        yield Hit(f"not valid YAML: {str(exc).splitlines()[0]}", (mark.line + 1) if mark else 0)
        return
    lines = _line_index(ctx.source)
    spec = ctx.op.spec if ctx.op is not None else None
    for path, message in validate_interfaces(data, spec):
        line = next((lines[path[:n]] for n in range(len(path), -1, -1) if path[:n] in lines), 1)
        yield Hit(message, line, 1)
