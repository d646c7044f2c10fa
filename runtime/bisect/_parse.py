"""Parsing for bisection: `runtime.pyast.parse` (one lock for every parse of the project, and the retry of
CPython gh-106905 - ``bisect()`` is called from thread pools)."""

from __future__ import annotations

import ast

from runtime import pyast


def parse_source(source: str) -> ast.Module:
    """Parse ``source`` like ``ast.parse``, serialised across threads (`runtime.pyast`)."""
    tree: ast.Module = pyast.parse(source)
    return tree


def is_jit_def(fn: ast.FunctionDef) -> bool:
    """Whether ``fn`` is decorated as a jit kernel: ``@pypto.frontend.jit``, ``@jit``, or with options
    (``@pypto.frontend.jit(runtime_options=...)``)."""
    return any(ast.unparse(d.func if isinstance(d, ast.Call) else d).endswith("jit") for d in fn.decorator_list)
