"""`_trace_cache.body_reads` in one walk gives exactly what the three-walk analysis it replaced gave.

Why: the names a body reads are half of every trace-cache key; a name missed there would let a cached program be
reused after the global it reads changed. The one-walk version (session 9, first-call cost) must agree with the
straightforward analysis kept here as the reference, on every function of the corpus, of the vendor gym kernels
(when ``FORGE_SHARED`` points at them) and of a large varied module (``ast.py`` itself).
"""

import ast
import os
from pathlib import Path

import pytest

from runtime.emulator._astutil import nodes
from runtime.emulator._trace_cache import Reads, body_reads, bound_reads

CORPUS = Path(__file__).parent / "corpus"


def reference_reads(fdef: ast.FunctionDef, params: frozenset[str]) -> Reads:
    """The analysis before session 9: every node once, then the attribute chains, then the bare names."""
    body = nodes(ast.Module(body=fdef.body, type_ignores=[]))[1:]
    deleted = {t.id for n in body if isinstance(n, ast.Delete) for t in n.targets if isinstance(t, ast.Name)}
    skip = params - deleted
    chain_roots: set[int] = set()
    chains: set[tuple[str, ...]] = set()
    bare: set[str] = set()
    for node in body:
        if isinstance(node, ast.Attribute) and id(node) not in chain_roots:
            parts: list[str] = []
            cur: ast.expr = node
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                chain_roots.add(id(cur))
                cur = cur.value
            if isinstance(cur, ast.Name):
                chain_roots.add(id(cur))
                if cur.id not in skip:
                    chains.add((cur.id, *reversed(parts)))
    for node in body:
        if isinstance(node, ast.Name) and id(node) not in chain_roots and node.id not in skip:
            bare.add(node.id)
    return Reads(tuple(sorted(bare)), tuple(sorted(chains)))


def _sources() -> list[Path]:
    got = sorted(CORPUS.glob("*.py")) + [Path(ast.__file__)]
    shared = os.environ.get("FORGE_SHARED")
    if shared and (Path(shared) / "gym" / "ops").is_dir():
        got += sorted((Path(shared) / "gym" / "ops").glob("*/src/**/*.py"))
    return got


def _functions(path: Path) -> list[ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.name)
def test_one_walk_matches_the_reference(path: Path) -> None:
    fdefs = _functions(path)
    for fdef in fdefs:
        a = fdef.args
        params = frozenset(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
        for ps in (params, frozenset(), params | {"pypto", "np"}):
            assert body_reads(fdef, ps) == reference_reads(fdef, ps), (path.name, fdef.name, fdef.lineno)


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.name)
def test_bound_reads_never_more_than_every_name(path: Path) -> None:
    """`bound_reads` (what a body can read without the names it binds itself, `test_trace_cache_bound.py`) is a
    subset of every name the body mentions (`body_reads` with no parameters: a parameter read inside a comprehension
    or lambda is the environment's - their own scopes do not see the kernel's namespace - so it is kept there)."""
    for fdef in _functions(path):
        a = fdef.args
        params = frozenset(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
        precise, every = bound_reads(fdef, params), body_reads(fdef, frozenset())
        assert set(precise.bare) <= set(every.bare), (path.name, fdef.name)
        assert set(precise.chains) <= set(every.chains), (path.name, fdef.name)


DELETES = '''
def k(x, y, cfg):
    z = cfg.tile.rows + x.shape[0]
    del y
    w = (x + 1).T.shape
    a.b[c.d].e = np.float32(q.r.s)
    del m.n
    f(lambda u: u.v + glob.attr)
    [t.k for t in items if t.ok]
'''


def test_deleted_params_chains_and_non_name_roots() -> None:
    fdef = ast.parse(DELETES).body[0]
    assert isinstance(fdef, ast.FunctionDef)
    got = body_reads(fdef, frozenset({"x", "y", "cfg"}))
    assert got == reference_reads(fdef, frozenset({"x", "y", "cfg"}))
    # `y` is deleted, so it may come from the environment after the del; `cfg` / `x` are params, never read
    assert "y" in got.bare and "x" not in got.bare and not any(c[0] == "cfg" for c in got.chains)
    assert ("a", "b") in got.chains and ("c", "d") in got.chains and ("q", "r", "s") in got.chains
    assert ("m", "n") in got.chains and ("glob", "attr") in got.chains and ("u", "v") in got.chains
    assert {"f", "items", "t", "z", "w"} <= set(got.bare) and "np" not in got.bare  # np.float32: a chain
