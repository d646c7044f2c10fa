"""Sizes a kernel file names itself: the integers its comparisons, floor divisions and remainders use (red team 36).

Why: the unseen cases sample sizes, and a path the wrapper picks for a window of sizes and some tails is drawn in a
share of runs only (round 35's ``if 77 < n < 160 and n % TILE == 11`` passed 85% of version 22's runs; round 36's
accidental ``(n + 60) // 64`` from 128 rows 49%). The file states the window, the tile, the block and the residue it
is written for, so a verification can run sizes at them: each side of every bound, each residue compared in every
interval between the bounds, and one past whole blocks of every divisor (:func:`runtime.opdir._unseen.hint_plan`).
Readable code - what an accident and a careless cheat look like - is reached whatever the seed; a file hiding its
constants (a hash of the size) is back to sampling.

Only plain syntax is read (``ast``, nothing runs): integer literals, names bound to integer expressions anywhere in
the file (``TILE = 16``), and ``+ - * // % <<`` of those.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from runtime import pyast

__all__ = ["MAX_HINT_INT", "SizeHints", "source_hints"]

MAX_HINT_INT = 1 << 20
"""Integers above this are no size a verification runs (a hash multiplier, a byte count)."""


@dataclass(frozen=True)
class SizeHints:
    """What :func:`source_hints` read: ``bounds`` (integers a value is compared with), ``moduli`` (right operands of
    ``//`` and ``%``) and ``residues`` (``(m, r)``: a remainder to ``m`` compared with ``r``, or used as a truth value:
    ``r`` 0)."""

    bounds: tuple[int, ...] = ()
    moduli: tuple[int, ...] = ()
    residues: tuple[tuple[int, int], ...] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return bool(self.bounds or self.moduli or self.residues)


def _names(tree: ast.AST) -> dict[str, int]:
    """Names bound once to an integer expression (``TILE = 16``, ``BLK = 4 * TILE``), in two passes."""
    env: dict[str, int] = {}
    bound: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound[node.targets[0].id] = bound.get(node.targets[0].id, 0) + 1
    for _ in range(2):
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and bound.get(node.targets[0].id) == 1):
                v = _fold(node.value, env)
                if v is not None:
                    env[node.targets[0].id] = v
    return env


def _fold(node: ast.AST, env: dict[str, int]) -> int | None:
    """The integer value of a constant expression, or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _fold(node.operand, env)
        return -v if v is not None else None
    if isinstance(node, ast.BinOp):
        a, b = _fold(node.left, env), _fold(node.right, env)
        if a is None or b is None or abs(a) > MAX_HINT_INT or abs(b) > MAX_HINT_INT:
            return None
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.FloorDiv) and b:
            return a // b
        if isinstance(node.op, ast.Mod) and b:
            return a % b
        if isinstance(node.op, ast.LShift) and 0 <= b < 32:
            return a << b
    return None


def _ints(node: ast.AST, env: dict[str, int]) -> list[int]:
    """The integers of a comparator: one constant, or the constants of a tuple, list or set literal (``in``)."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [v for v in (_fold(e, env) for e in node.elts) if v is not None]
    v = _fold(node, env)
    return [] if v is None else [v]


def _offset(node: ast.AST, env: dict[str, int]) -> int | None:
    """``c`` when ``node`` is one unknown plus or minus constants (``n + TILE - 1``: ``TILE - 1``); 0 for the
    unknown alone; None otherwise (two unknowns, a product)."""
    if _fold(node, env) is not None:
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        right = _fold(node.right, env)
        if right is not None:
            inner = _offset(node.left, env)
            return None if inner is None else inner + (right if isinstance(node.op, ast.Add) else -right)
        left = _fold(node.left, env)
        if left is not None and isinstance(node.op, ast.Add):
            inner = _offset(node.right, env)
            return None if inner is None else inner + left
        return None
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
        return 0
    return None


def _modulus(node: ast.AST, env: dict[str, int]) -> int | None:
    """``m`` when ``node`` is ``<anything> % m`` with ``m`` constant."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _fold(node.right, env)
    return None


def source_hints(text: str) -> SizeHints:
    """The :class:`SizeHints` of a kernel file's text (empty when it does not parse, or nests too deeply to read).

    The file is the candidate's: it may be built to break its reader. A chain of 1,500 ``+`` parses, and the
    recursive fold over it raised RecursionError out of verification (review, s46); such a file gets no hints
    (its sizes are sampled, as before version 23), never an error."""
    try:
        tree = pyast.parse(text)
        return _hints_of(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return SizeHints()


def _hints_of(tree: ast.AST) -> SizeHints:
    env = _names(tree)
    bounds: set[int] = set()
    moduli: set[int] = set()
    residues: set[tuple[int, int]] = set()

    def ok(v: int) -> bool:
        return 1 <= v <= MAX_HINT_INT

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for i, side in enumerate(sides):
                m = _modulus(side, env)
                others = [s for j, s in enumerate(sides) if j != i]
                for other in others:
                    for v in _ints(other, env):
                        if ok(v):
                            bounds.add(v)
                        if m is not None and 2 <= m <= MAX_HINT_INT:
                            residues.add((m, v % m))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv | ast.Mod):
            m = _fold(node.right, env)
            if m is not None and 2 <= m <= MAX_HINT_INT and _fold(node.left, env) is None:
                moduli.add(m)
                c = _offset(node.left, env)  # (n + c) // m is short exactly for n % m in 1..m-1-c
                if c is not None and c % m not in (0, m - 1):  # not a floor or a ceiling: its edge residues
                    residues.update({(m, (-c) % m), (m, (-c - 1) % m)})
        elif isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert):
            test = node.test
            tests = [test, *(test.values if isinstance(test, ast.BoolOp) else [])]
            for t in tests:
                t = t.operand if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) else t
                m = _modulus(t, env)
                if m is not None and 2 <= m <= MAX_HINT_INT:  # `if n % 64:` - a remainder as a truth value
                    residues.update({(m, 0), (m, 1)})
    return SizeHints(tuple(sorted(bounds)), tuple(sorted(moduli)), tuple(sorted(residues)))
