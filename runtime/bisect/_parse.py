"""Parsing for bisection: `runtime.pyast.parse` (one lock for every parse of the project, and the retry of
CPython gh-106905 - ``bisect()`` is called from thread pools)."""

from __future__ import annotations

import ast

from runtime import pyast


def parse_source(source: str) -> ast.Module:
    """Parse ``source`` like ``ast.parse``, serialised across threads (`runtime.pyast`)."""
    tree: ast.Module = pyast.parse(source)
    return tree
