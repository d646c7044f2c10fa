"""Session 40's first-call savings keep their meaning: a kernel's source block is dedented without
``textwrap.dedent`` when that would give it back unchanged (and exactly as ``textwrap.dedent`` otherwise), and
`_Parsed.check_body` meets the statements of a body in the order, and with the "in an if" flag, of the walk it
replaced (so the first unsupported statement reported is the same)."""

import ast
import textwrap
from pathlib import Path

import pytest

from runtime.emulator import _source
from runtime.emulator._trace_interp import _PLAIN_STMTS, _Parsed

CORPUS = Path(__file__).parent / "corpus"
SOURCES = sorted(CORPUS.glob("*.py")) + [Path(ast.__file__), Path(textwrap.__file__)]

AWKWARD_BLOCKS = [
    "def f():\n    x = 1\n",
    "    def f():\n        x = 1\n",  # a method / nested def: the common margin goes
    "\tdef f():\n\t\tx = 1\n",
    "def f():\n    s = '''a\n    \n  b'''\n",  # a whitespace-only line inside a string: textwrap empties it
    "def f():\n    x = 1\n   \t\n",
    "def f():\n    x = 1\n  ",  # the last line spaces only, no newline
    "def f():\n    x = 1\n\n\n",
    "\ndef f():\n    pass\n",
    "",
    "@deco\ndef f():\n  pass\r\n",
    "\x0cdef f():\n    pass\n",
    " \n def f():\n  pass\n",
]


def _blocks(path: Path) -> list[list[str]]:
    """Every function's lines in ``path`` as `quick_block` cuts them (from its first decorator to its last line)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    tree = ast.parse("".join(lines))
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([n.lineno] + [d.lineno for d in n.decorator_list])
            out.append(lines[start - 1:n.end_lineno])
    return out


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_dedent_is_textwrap_dedent_on_every_function_block(path: Path) -> None:
    blocks = _blocks(path)
    assert blocks
    for lines in blocks:
        assert _source.dedent(lines) == textwrap.dedent("".join(lines))


@pytest.mark.parametrize("text", AWKWARD_BLOCKS)
def test_dedent_is_textwrap_dedent_on_awkward_blocks(text: str) -> None:
    lines = text.splitlines(keepends=True)
    assert _source.dedent(lines) == textwrap.dedent(text)


def test_a_module_level_block_is_not_handed_to_textwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = textwrap.dedent
    monkeypatch.setattr(_source.textwrap, "dedent", lambda t: calls.append(t) or real(t))
    kernel = next(b for b in _blocks(CORPUS / "elementwise.py") if b[0].startswith("@"))
    assert _source.dedent(kernel) == "".join(kernel)
    assert calls == []
    _source.dedent(["    def f():\n", "        pass\n"])
    assert len(calls) == 1, "an indented block still goes through textwrap"


def _reference_walk(fdef: ast.FunctionDef) -> list[tuple[ast.AST, bool]]:
    """The walk `check_body` replaced in session 40 (every non-expression child of every node queued), as
    ``(statement, in an if)`` in the order `_check_node` saw them."""
    out = []
    for stmt in fdef.body:
        queue: list[tuple[ast.AST, bool]] = [(stmt, False)]
        i = 0
        while i < len(queue):
            node, in_if = queue[i]
            i += 1
            if isinstance(node, ast.stmt):
                out.append((node, in_if))
            branches = type(node) is ast.If
            for f in node._fields:
                v = getattr(node, f, None)
                inner = in_if or (branches and f in ("body", "orelse"))
                if type(v) is list:
                    queue.extend((x, inner) for x in v if isinstance(x, ast.AST) and not isinstance(x, ast.expr))
                elif isinstance(v, ast.AST) and not isinstance(v, ast.expr):
                    queue.append((v, inner))
    return out


def _walked(fdef: ast.FunctionDef, monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[ast.AST, bool]], int]:
    """The statements `check_body` hands `_check_node` (which here only records them), and how many nodes it
    scanned field by field."""
    p = _Parsed.__new__(_Parsed)
    p.fdef = fdef
    seen: list[tuple[ast.AST, bool]] = []
    generic = [0]
    real_queue = _Parsed._queue_children

    def queue_children(node: ast.AST, in_if: bool, queue: list) -> None:
        generic[0] += 1
        real_queue(node, in_if, queue)

    monkeypatch.setattr(p, "_check_node", lambda node, in_if: seen.append((node, in_if)), raising=False)
    monkeypatch.setattr(_Parsed, "_queue_children", staticmethod(queue_children))
    p.check_body()
    return [(n, f) for n, f in seen if isinstance(n, ast.stmt)], generic[0]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_check_body_meets_the_statements_of_the_full_walk_in_order(path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    fdefs = [n for n in ast.walk(tree) if type(n) is ast.FunctionDef]
    assert fdefs
    for fdef in fdefs:
        got, _ = _walked(fdef, monkeypatch)
        want = _reference_walk(fdef)
        # session 48: the statements no check is about are passed over (`_PLAIN_STMTS`, and an assignment of
        # anything but a lambda) - the real `_check_node` has nothing to say about any of them
        checked = [(n, f) for n, f in want if not _passed_over(n)]
        assert [(id(n), f) for n, f in got] == [(id(n), f) for n, f in checked], fdef.name
        real = _Parsed.__new__(_Parsed)
        real.fdef, real.file = fdef, str(path)
        for n, f in want:
            if _passed_over(n):
                assert real._check_node(n, f) is None


def _passed_over(n: ast.AST) -> bool:
    return type(n) in _PLAIN_STMTS or type(n) is ast.Assign and type(n.value) is not ast.Lambda


def test_check_body_scans_no_supported_statement_field_by_field(monkeypatch: pytest.MonkeyPatch) -> None:
    src = textwrap.dedent("""\
        def k(x, n):
            a = 1
            a += 2
            b: int = 3
            for i in range(n):
                if i == 0:
                    assert a, "a"
                    del b
                else:
                    pass
                    def h(y):
                        y = y + 1
            x.move(x)
        """)
    fdef = ast.parse(src).body[0]
    got, generic = _walked(fdef, monkeypatch)  # type: ignore[arg-type]
    assert len(got) == 3 and generic == 0  # the for, the if, the def (the rest are passed over: `_PLAIN_STMTS`)
    flags = {type(n).__name__ + str(n.lineno): f for n, f in got}
    assert flags["FunctionDef11"] and not flags["If6"] and not flags["For5"]
    with_try = ast.parse("def k():\n    try:\n        pass\n    except E:\n        pass\n").body[0]
    got, generic = _walked(with_try, monkeypatch)  # type: ignore[arg-type]
    assert generic >= 1 and len(got) == 1  # an unsupported statement: scanned as before (it raises first anyway)


def test_check_body_reports_the_first_unsupported_statement_as_before() -> None:
    src = textwrap.dedent("""\
        def k(x):
            if x:
                while True:
                    pass
            with x:
                pass
        """)
    p = _Parsed.__new__(_Parsed)
    p.fdef = ast.parse(src).body[0]  # type: ignore[assignment]
    p.file = "k.py"
    with pytest.raises(Exception, match="While is not supported") as e:
        p.check_body()
    assert (e.value.file, e.value.line) == ("k.py", 3)  # type: ignore[attr-defined]
