"""API-use rules: names that exist, views with consistent rank, legal casts, scalar operands.

A misspelled or invented ``pypto.<name>`` only fails at trace time on the real toolchain; here it fails in
milliseconds with a suggestion. Names are checked against the emulator's API surface (``_api_surface``).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from functools import lru_cache

from runtime.lint._api_surface import api_surface
from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._source import ParsedFile
from runtime.lint._util import at, infer_dtype, kernel_pf

__all__ = ["unknown_api_names"]

_REPLACEMENTS = {"empty": "zeros/ones/full", "empty_like": "zeros/ones/full", "silu": "x * pypto.sigmoid(x)",
                 "max": "pypto.amax (reduction) or pypto.maximum (elementwise)",
                 "mean": "pypto.sum(...) / n", "tanh": "an exp-based formula (tanh is HEAD-only)"}

LEGAL_CASTS: dict[str, set[str]] = {
    "FP16": {"FP32", "INT32", "INT16", "INT8", "UINT8", "INT4"},
    "BF16": {"FP32", "INT32"},
    "INT32": {"FP32", "INT16", "INT64", "FP16"},
    "FP32": {"BF16", "FP16", "INT16", "INT32", "INT64", "FP32"},
    "UINT8": {"FP16"}, "INT8": {"FP16"}, "INT4": {"FP16"},
    "INT16": {"FP32", "FP16"},
    "INT64": {"FP32", "INT32"},
}


def suggest(name: str, surface: frozenset[str]) -> str:
    if name in _REPLACEMENTS and _REPLACEMENTS[name].split("/")[0].split(" ")[0] in surface | {"x"}:
        return f"; use {_REPLACEMENTS[name]}"
    close = difflib.get_close_matches(name, sorted(surface), n=3, cutoff=0.7)
    return f"; did you mean {', '.join('pypto.' + c for c in close)}?" if close else ""


@lru_cache(maxsize=4)
def _heads(surface: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(names usable as ``pypto.<head>``, heads that have dotted sub-names such as ``frontend``)."""
    with_subs = frozenset(n.split(".")[0] for n in surface if "." in n)
    return frozenset(n for n in surface if "." not in n) | with_subs, with_subs


def unknown_api_names(names: list[str]) -> list[tuple[int, str]]:
    """Indices and messages for dotted ``pypto.a[.b]`` names not in the API surface."""
    surface, _src = api_surface()
    heads, with_subs = _heads(surface)
    out = []
    verdicts: dict[str, str] = {}
    for i, full in enumerate(names):
        if full not in verdicts:
            parts = full.split(".")
            verdict = ""
            if len(parts) >= 2 and parts[0] == "pypto":
                head = parts[1]
                if head not in heads:
                    verdict = f"`pypto.{head}` is not in the PyPTO API{suggest(head, surface)}"
                elif len(parts) > 2 and head in with_subs and f"{head}.{parts[2]}" not in surface:
                    verdict = f"`pypto.{head}.{parts[2]}` is not in the PyPTO API"
            verdicts[full] = verdict
        if verdicts[full]:
            out.append((i, verdicts[full]))
    return out


def _pypto_attr_chains(pf: ParsedFile) -> list[tuple[ast.Attribute, str]]:
    """Outermost ``pypto.x.y`` attribute chains (aliases resolved), each once."""
    chains = []
    for node in pf.nodes(ast.Attribute):
        parent = pf.parents.get(node)
        if isinstance(parent, ast.Attribute):
            continue  # only the outermost attribute of a chain
        full = pf.name(node)
        if full.startswith("pypto.") and not isinstance(node.value, ast.Call):
            inner: ast.AST = node
            while isinstance(inner, ast.Attribute):
                inner = inner.value
            if isinstance(inner, ast.Name):
                chains.append((node, full))
    return chains


@check("OL55")
def ol55_known_api(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    chains = _pypto_attr_chains(pf)
    for i, message in unknown_api_names([full for _n, full in chains]):
        yield at(chains[i][0], message)


def _view_lists(pf: ParsedFile, call: ast.Call) -> tuple[ast.AST | None, ast.AST | None, ast.AST | None] | None:
    name = pf.name(call.func)
    kw = {k.arg: k.value for k in call.keywords}
    if name == "pypto.view":
        pos = call.args[1:]
    elif isinstance(call.func, ast.Attribute) and call.func.attr == "view" and not name.startswith(("pypto.", "numpy.", "torch.")):
        pos = call.args
    else:
        return None
    shape = pos[0] if len(pos) > 0 else kw.get("shape")
    offsets = pos[1] if len(pos) > 1 else kw.get("offsets")
    return shape, offsets, kw.get("valid_shape")


@check("OL52")
def ol52_view_rank(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for call in pf.nodes(ast.Call):
        got = _view_lists(pf, call)
        if got is None:
            continue
        shape, offsets, valid = (n if isinstance(n, (ast.List, ast.Tuple)) else None for n in got)
        if shape is None:
            continue
        if offsets is not None and len(offsets.elts) != len(shape.elts):
            yield at(call, f"view shape has {len(shape.elts)} axes but offsets has {len(offsets.elts)}")
        if valid is not None and valid.elts and len(valid.elts) != len(shape.elts):
            yield at(call, f"view shape has {len(shape.elts)} axes but valid_shape has {len(valid.elts)}")


def _short_dt(name: str | None) -> str | None:
    return name[3:] if name and name.startswith("DT_") else None


@check("OL61")
def ol61_code_checks(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for fn in pf.graph_functions():
        for call in pf.nodes_in(fn, ast.Call):
            name = pf.name(call.func)  # type: ignore[attr-defined]
            short = name[len("pypto."):] if name.startswith("pypto.") else ""
            args = call.args  # type: ignore[attr-defined]
            if short in ("add", "sub", "mul", "div"):
                if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, (int, float)):
                    yield at(call, f"`pypto.{short}` with a number first; put the tensor first")
                for a in args:
                    if isinstance(a, ast.Call) and pf.name(a.func) == "pypto.Element":
                        yield at(a, f"`pypto.Element(...)` passed to `pypto.{short}`; pass the Python scalar")
            elif short in ("zeros", "ones"):
                for a in args:
                    if pf.name(a).startswith("pypto.DT_"):
                        yield at(a, f"dtype passed positionally to `pypto.{short}` is read as a size; "
                                 "write `dtype=...`")
            elif short == "cast" and len(args) >= 2:
                dst = _short_dt(pf.name(args[1]).split(".")[-1])
                src = _short_dt(infer_dtype(args[0], fn, pf, call.lineno))  # type: ignore[attr-defined]
                if src and dst and src != dst and dst not in LEGAL_CASTS.get(src, set()):
                    yield at(call, f"no direct cast {src} -> {dst} on A2/A3; cast in two steps "
                             "(e.g. via FP32 or FP16)")
