"""Session 48: less host-side work in a kernel's first call, with the same answers.

* `_roll.range_sites` answers from the statements and the source text (`_roll._by_text`) when the text proves what
  the walk of every node would find: the two agree on every function of our kernel sources and the real gym
  operators, and the text path is not a path that merely gives up;
* `_trace_walk.walkable` counts nodes instead of tracking depths: it agrees with the depth-tracking walk (`_exact`)
  on every expression there and on the edge cases (41 / 42 nodes, deep nesting, starred items, ``**kw``);
* `_location.user_location` passes over emulator frames with one lookup: its memo of them holds only emulator code.
"""

from __future__ import annotations

import ast
import functools
import os
import textwrap
from pathlib import Path

import pytest

from runtime import pyast
from runtime.emulator import _location, _roll, _trace_cache, _trace_walk
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator._trace import LoopInfo

ROOT = Path(__file__).resolve().parents[2]
GYM = (Path(os.environ.get("FORGE_SHARED") or ROOT.parent / "shared") / "gym").resolve()


def _our_sources() -> list[Path]:
    files = sorted((ROOT / "tests" / "emulator" / "corpus").glob("*.py"))
    files += sorted((ROOT / "tests" / "gym" / "corpus_data").rglob("*.py"))
    files += sorted(p for p in (ROOT / "workspace").rglob("*.py") if "import pypto" in p.read_text(encoding="utf-8"))
    return files


def _gym_sources() -> list[Path]:
    if not (GYM / "ops").is_dir():
        return []
    return sorted(p for p in (GYM / "ops").rglob("*.py") if "pypto" in p.read_text(encoding="utf-8"))


@functools.cache
def _blocks(path: Path) -> list[tuple[ast.FunctionDef, str]]:
    """Each function of ``path`` parsed from its own block (decorators included), with that block's text - what
    `_trace_interp._Parsed` hands `range_sites`."""
    text = path.read_text(encoding="utf-8")
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = text.splitlines(keepends=True)
    out = []
    for node in ast.walk(tree):
        if type(node) is not ast.FunctionDef:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        block = "".join(lines[first - 1:node.end_lineno])
        try:
            sub = pyast.parse(textwrap.dedent(block))
        except (SyntaxError, ValueError):
            continue
        fdef = sub.body[0]
        if type(fdef) is ast.FunctionDef:
            out.append((fdef, block))
    return out


def _compare_sites(files: list[Path]) -> tuple[int, int, int]:
    """(functions the text answered for, functions with a site, of which the text answered); asserts that the
    text's answer is the walk's on each function."""
    answered = with_sites = by_text = 0
    for path in files:
        for fdef, block in _blocks(path):
            params = [a.arg for a in fdef.args.args]
            walked = _roll.range_sites(fdef, params, {})
            told = _roll._by_text(fdef, set(params), {}, block)
            assert told is None or told == walked, f"{path}:{fdef.lineno} {fdef.name}"
            assert _roll.range_sites(fdef, params, {}, block) == walked, f"{path}:{fdef.lineno} {fdef.name}"
            answered += told is not None
            if walked:
                with_sites += 1
                by_text += told is not None
    return answered, with_sites, by_text


def test_range_sites_from_the_text_are_the_walks_on_our_sources() -> None:
    answered, _, _ = _compare_sites(_our_sources())
    assert answered >= 50, answered


@pytest.mark.skipif(not (GYM / "ops").is_dir(), reason=f"the gym operators are not here ({GYM}; set FORGE_SHARED)")
def test_range_sites_from_the_text_are_the_walks_on_the_gym() -> None:
    _, with_sites, by_text = _compare_sites(_gym_sources())
    assert with_sites >= 1 and by_text >= 1, (with_sites, by_text)  # attn_softmax's n_s_tiles, from its text


_BASE = """
def k(x, ntiles):
    for t in range(ntiles):
        y = pypto.exp(x)
        if t == 0:
            z = y
"""


@pytest.mark.parametrize("src,answers", [
    (_BASE, True),
    (_BASE + "    # ntiles tiles\n", False),                          # mentioned in a comment: the walk decides
    (_BASE + "    f = lambda ntiles: ntiles\n", False),               # another binding of the name
    (_BASE + "    m = ntiles_other\n", False),                        # a longer name containing it
    (_BASE + "    w = locals()\n", False),                            # introspection
    (_BASE + "    s = 'é'\n", False),                                 # not ASCII
    (_BASE + "    def g():\n        return 1\n", False),            # a nested def
    (_BASE.replace("range(ntiles)", "range(ntiles, 4)"), True),       # no site at all: {}
    (_BASE + "    for u in range(ntiles):\n        y = pypto.exp(x)\n", True),  # two loops over range(ntiles)
])
def test_the_text_answers_only_when_it_proves_the_walks_answer(src: str, answers: bool) -> None:
    fdef = ast.parse(src).body[0]
    assert isinstance(fdef, ast.FunctionDef)
    walked = _roll.range_sites(fdef, ["x", "ntiles"], {})
    told = _roll._by_text(fdef, {"x", "ntiles"}, {}, src)
    assert (told is not None) is answers
    if told is not None:
        assert told == walked
    assert _roll.range_sites(fdef, ["x", "ntiles"], {}, src) == walked


def _every_expression(files: list[Path]) -> list[ast.expr]:
    out: list[ast.expr] = []
    for path in files:
        try:
            tree = pyast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, ValueError):
            continue
        out += [n for n in ast.walk(tree) if isinstance(n, ast.expr)]
    return out


def test_walkable_is_the_depth_tracking_walk_on_every_expression() -> None:
    exprs = _every_expression(_our_sources() + _gym_sources())
    assert len(exprs) > 20_000
    assert sum(_trace_walk.walkable(e) for e in exprs) > 10_000
    for e in exprs:
        assert _trace_walk.walkable(e) == _trace_walk._exact(e), ast.unparse(e)[:120]


@pytest.mark.parametrize("src", [
    " + ".join(["a"] * 20),        # 39 nodes, flat
    " + ".join(["a"] * 21),        # 41 nodes
    " + ".join(["a"] * 22),        # 43 nodes: the exact walk decides
    "-" * 40 + "a",                # depth 40
    "-" * 41 + "a",                # depth 41: refused
    "-" * 60 + "a",
    "f(*a)", "f(**k)", "[*a, b]", "{**d, 'a': 1}", "x[*a]", "f(" + ", ".join(["a"] * 25) + ")",
    "a if b else (c and d or e < f <= g)", "x[1:2, ::3]", "{'a': [1, (2, 3)]}", "(lambda: 1)()",
    "[i for i in a]", "f'{a}'", "(a := 1)", "a.b.c(d)[e].f",
])
def test_walkable_edge_cases(src: str) -> None:
    node = pyast.parse(src, mode="eval").body
    assert _trace_walk.walkable(node) == _trace_walk._exact(node)


def test_the_inner_frame_memo_holds_only_emulator_code() -> None:
    def where() -> tuple[str | None, int | None]:
        return _location.user_location()

    assert where() == (__file__, where.__code__.co_firstlineno + 1)
    assert where() == (__file__, where.__code__.co_firstlineno + 1)  # the memo's path
    assert all(_location._KINDS.get(k, (None, -1))[0] is code and _location._KINDS[k][1] == _location._INNER
               for k, code in _location._INNER_CODES.items())


def test_bound_reads_records_the_walkable_answer_of_each_expression_it_walks() -> None:
    """`_trace_cache.bound_reads` decides `walkable` for each expression it walks whole (the trace then does not):
    every answer it records is `walkable`'s, on every function of our sources and the gym, and it answers for most
    of their expressions."""
    recorded = 0
    for path in _our_sources() + _gym_sources():
        for fdef, _ in _blocks(path):
            walks: dict = {}
            _trace_cache.bound_reads(fdef, frozenset(a.arg for a in fdef.args.args), walks)
            for node, v in walks.items():
                assert v in (0, -1)
                assert (v == 0) == _trace_walk.walkable(node), f"{path}:{node.lineno}: {ast.unparse(node)[:120]}"
            recorded += len(walks)
    assert recorded > 5_000, recorded


@pytest.mark.parametrize("src", [
    "f(*a)", "f(**k)", "{**d, 'a': 1}", "[i for i in a]", "f(lambda: 1)", "f(" + ", ".join(["a"] * 25) + ")",
    " + ".join(["a"] * 20), " + ".join(["a"] * 21), " + ".join(["a"] * 22), "a.b.c.d(e.f, g)[h]", "(x + 1).y.z",
    "-" * 41 + "a", "f'{a}'", "a if b else c",
])
def test_bound_reads_walkable_edge_cases(src: str) -> None:
    fdef = ast.parse(f"def k(x):\n    y = {src}\n").body[0]
    assert isinstance(fdef, ast.FunctionDef)
    walks: dict = {}
    _trace_cache.bound_reads(fdef, frozenset({"x"}), walks)
    value = fdef.body[0].value  # type: ignore[attr-defined]
    if value in walks:
        assert (walks[value] == 0) == _trace_walk.walkable(value)
    else:  # only a large expression that walkable may refuse for its depth is left to walkable
        assert len([n for n in ast.walk(value) if isinstance(n, ast.expr)]) > _trace_walk.MAX_NODES


def _reference_fold(test: object, loop: object, values: range) -> bool | None:
    """`_roll.fold` evaluated at every value (its general path)."""
    seen = {bool(_roll._value_at(test, loop, v)) for v in values}
    return seen.pop() if len(seen) == 1 else None


def test_a_comparison_of_the_index_folds_in_closed_form_as_evaluated() -> None:
    info, other = LoopInfo("<rolled t>", "t"), LoopInfo("<rolled u>", "u")
    i = info.index
    ranges = [range(1, 2), range(1, 3), range(1, 16), range(0, 10, 3), range(9, -1, -2), range(5, 6), range(-4, 4)]
    n = 0
    for c in (-5, -1, 0, 1, 2, 3, 5, 9, 15, 16, 40):
        for op in ("==", "!=", "<", "<=", ">", ">="):
            for test in (i._bin(op, c), i._bin(op, c, True), i._bin(op, SymbolicScalar(c))):  # i OP c, c OP i
                for r in ranges:
                    got = _roll._fold_closed(test, info, r)
                    assert got is not _roll._OPEN, (repr(test), r)
                    assert got == _reference_fold(test, info, r), (repr(test), r)
                    assert _roll.fold(test, info, r) == got
                    n += 1
                assert _roll._fold_closed(test, other, ranges[2]) is _roll._OPEN  # another loop's index
    assert n > 1000
    assert _roll._fold_closed(i + 1 == 3, info, range(1, 4)) is _roll._OPEN  # not the bare index: evaluated
    assert _roll.fold(i + 1 == 3, info, range(1, 4)) is None
    assert _roll.fold(i == 0, info, range(1, 1)) is None  # no iteration



def test_an_identity_part_is_equal_only_for_the_same_object() -> None:
    a, b = [1, 2], [1, 2]  # equal, unhashable, two objects
    assert _trace_cache._Id(a) == _trace_cache._Id(a) and hash(_trace_cache._Id(a)) == hash(_trace_cache._Id(a))
    assert _trace_cache._Id(a) != _trace_cache._Id(b)
    assert _trace_cache._Id(a) != (id(a),) and _trace_cache._Id(a) != ("missing",)
    assert _trace_cache._Id(a).obj is a
    assert {(_trace_cache._Id(a), 1): "k"}.get((_trace_cache._Id(a), 1)) == "k"
