"""`_trace_walk`: a kernel expression evaluated by walking its tree is its compiled form's - value, order of
operations, errors, and the location every traced op records.

Why: the interpreter walks an expression's first evaluations instead of compiling it (a ``compile`` was ~1.6 ms of
attn_softmax's first call). The location is the subtle part: an op records the line of the innermost kernel frame,
which for compiled code is the line CPython put on the instruction running (a method call spanning lines is at
its attribute's end line). So every walkable expression of every kernel source we have - the emulator corpus, the
gym-style corpus, the workspace, and the real gym operators when ``../shared/gym`` is here - is evaluated both
ways over probe values that record each operation and its `user_location`, and the records must be equal.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import runtime.emulator as emu
from runtime import pyast
from runtime.emulator import _location, _trace_walk
from runtime.emulator._ir import OpNode
from runtime.emulator._trace_walk import walk, walkable

pypto = emu.install()
ROOT = Path(__file__).resolve().parents[2]
GYM = (Path(os.environ.get("FORGE_SHARED") or ROOT.parent / "shared") / "gym").resolve()
KERNEL_FILE = "/kernels/k.py"

# the locations checked are CPython 3.11's: elsewhere (or with PTO_FORGE_WALK=0) the interpreter never walks
pytestmark = pytest.mark.skipif(
    not _trace_walk.ENABLED,
    reason="the expression walker is off: PTO_FORGE_WALK=0" if sys.version_info[:2] == (3, 11) else
    f"the expression walker is on for CPython 3.11 only, this is {sys.version_info[0]}.{sys.version_info[1]}")

# The probe's frames must count as the emulator's own (as an op's do): its code is compiled with a file name in the
# package, so `user_location` walks past it to the kernel expression, as it walks past an op.
_PROBE_SRC = '''
class Probe:
    """Every operation on it is recorded with the kernel location `user_location` gives at that moment."""

    def __init__(self, log, tag="p"):
        object.__setattr__(self, "_log", log)
        object.__setattr__(self, "_tag", tag)

    def _rec(self, what):
        self._log.append((what, user_location()))
        return Probe(self._log, what)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._rec("." + name)

    def __call__(self, *a, **k):
        return self._rec("call%d/%s" % (len(a), ",".join(sorted(k))))

    def __getitem__(self, k):
        return self._rec("[%s]" % type(k).__name__)

    def __bool__(self):
        self._log.append(("bool", user_location()))
        return len(self._log) % 3 != 0  # both branches of and/or/if/chains get taken somewhere

    def __contains__(self, x):
        self._log.append(("in", user_location()))
        return True

    def __hash__(self):
        return id(self)

    def __iter__(self):
        return iter(())

    def __index__(self):
        return 1


def _binary(name):
    def f(self, other):
        return self._rec(name)
    return f


for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "or", "xor",
           "matmul", "lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Probe, "__%s__" % _n, _binary(_n))
    setattr(Probe, "__r%s__" % _n, _binary("r" + _n))
for _n in ("neg", "pos", "invert"):
    setattr(Probe, "__%s__" % _n, lambda self, _n=_n: self._rec(_n))
'''
_ns: dict[str, Any] = {"user_location": _location.user_location}
exec(compile(_PROBE_SRC, os.path.join(_location.PKG_DIR, "_probe_for_tests.py"), "exec"), _ns)  # noqa: S102
Probe = _ns["Probe"]


def _both(node: ast.expr) -> tuple[Any, Any]:
    """(compiled, walked): each the list of recorded operations and the result kind, or the error."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    out = []
    for mode in ("compiled", "walked"):
        log: list = []
        ns = {n: Probe(log, n) for n in names}
        g: dict[str, Any] = {}
        try:
            if mode == "compiled":
                code = pyast.compile_tree(ast.fix_missing_locations(ast.Expression(node)), KERNEL_FILE, "eval")
                v = eval(code, g, ns)  # noqa: S307 - the test's own expressions
            else:
                v = walk(node, g, ns, KERNEL_FILE)
            res = ("value", type(v).__name__ if isinstance(v, Probe) or not _plain(v) else v)
        except Exception as e:  # noqa: BLE001 - the error is part of what must match
            res = ("error", type(e).__name__, str(e))
        out.append((log, res))
    return out[0], out[1]


def _plain(v: Any) -> bool:
    return isinstance(v, int | float | str | bool | type(None)) or \
        isinstance(v, tuple | list) and all(_plain(x) for x in v)


TRICKY = [
    "pypto.view(\n    scores, [1, S_TILE], [m_idx, s_off], valid_shape=[1, S_TILE]\n)",
    "(ns\n .f(\n 1))", "(ns.o\n.f)(2)", "(\n ns\n .o\n .f\n (6))", "ns.f(1) + \\\n ns.f(2)", "(ns.f(1)\n +\n ns.f(2))",
    "f(\n  1,\n  f(2),\n  h(\n    f(3)),\n  f(\n   4)\n)",
    "a.b.c(d.e, k=f.g(\n h))[\n 1:x.y\n , ::2]", "x if\n c.d else\n y.z", "a < b <\n c <= d", "a and\n b.c or\n d",
    "{a: b,\n c.d: e}", "not\n a.b", "-a.b ** 2", "a in b", "a not in\n b", "a is not b", "[a,\n (b, c.d)]",
    "x[\n i,\n j]", "x.shape[0] // 16 * (n + 3) % 7", "pypto.matmul(a, b, pypto.DT_FP32, b_trans=True).view(\n 1)",
    "min(a, b).c", "obj.m(1)(2)(\n3)", "(a\n)[1]", "a @ b", "~a", "+a", "a.b(**c)", "a(*b)", "[*a]",
    "(lambda: 1)()", "f'{a}'", "[x for x in a]", "1 / 0", "undefined_name_here.x",
]


@pytest.mark.parametrize("src", TRICKY)
def test_a_walked_expression_is_its_compiled_form(src: str) -> None:
    node = pyast.parse(f"({src})", mode="eval").body
    if not walkable(node):
        assert any(isinstance(n, ast.Starred | ast.Lambda | ast.JoinedStr | ast.ListComp) or
                   (isinstance(n, ast.keyword) and n.arg is None) for n in ast.walk(node)), src
        return
    compiled, walked = _both(node)
    assert walked == compiled, src


def test_a_name_nowhere_is_the_same_name_error() -> None:
    node = pyast.parse("f(nope)", mode="eval").body
    ns = {"f": print}
    with pytest.raises(NameError, match="name 'nope' is not defined") as walked:
        walk(node, {}, ns, KERNEL_FILE)
    assert walked.value.name == "nope"
    with pytest.raises(NameError, match="name 'nope' is not defined"):
        eval(compile("f(nope)", KERNEL_FILE, "eval"), {}, ns)  # noqa: S307


def test_a_deeply_nested_expression_is_compiled() -> None:
    """Each level of a walk is a Python frame: a sum of 2000 terms walked would need ~2000 of them."""
    deep = pyast.parse(" + ".join(["a"] * 2000), mode="eval").body
    assert not walkable(deep)
    assert walkable(pyast.parse(" + ".join(["a"] * 30), mode="eval").body)


def test_builtins_globals_and_locals_resolve_in_compiled_order() -> None:
    g = {"__builtins__": {"len": lambda x: "builtin"}, "shadow": "global"}
    ns = {"shadow": "local"}
    for src in ("shadow", "len(1)", "(shadow, len(2))"):
        node = pyast.parse(src, mode="eval").body
        assert walk(node, dict(g), dict(ns), KERNEL_FILE) == eval(src, dict(g), dict(ns)), src  # noqa: S307


def _kernel_sources() -> list[Path]:
    files = sorted((ROOT / "tests" / "emulator" / "corpus").glob("*.py"))
    files += sorted((ROOT / "tests" / "gym" / "corpus_data").rglob("*.py"))
    files += sorted(p for p in (ROOT / "workspace").rglob("*.py") if "import pypto" in p.read_text(encoding="utf-8"))
    return files


def _check_file(path: Path) -> int:
    try:
        tree = pyast.parse(path.read_text(encoding="utf-8"), str(path))
    except (SyntaxError, ValueError):
        return 0
    n = 0
    todo: list[ast.AST] = [tree]
    while todo:  # top down: a walkable expression is checked whole (its parts' records are a part of its records)
        node = todo.pop()
        if isinstance(node, ast.expr) and isinstance(getattr(node, "ctx", ast.Load()), ast.Load) and walkable(node):
            if not isinstance(node, ast.Name | ast.Constant):
                compiled, walked = _both(node)
                assert walked == compiled, f"{path}:{node.lineno}: {ast.unparse(node)[:120]}"
                n += 1
            continue
        todo.extend(ast.iter_child_nodes(node))
    return n


def test_every_expression_of_our_kernel_sources_walks_as_compiled() -> None:
    files = _kernel_sources()
    assert len(files) > 40, files
    assert sum(_check_file(p) for p in files) > 2000


@pytest.mark.skipif(not (GYM / "ops").is_dir(), reason=f"the gym operators are not here ({GYM}; set FORGE_SHARED)")
def test_every_expression_of_the_real_gym_operators_walks_as_compiled() -> None:
    files = sorted(p for p in (GYM / "ops").rglob("*.py") if "pypto" in p.read_text(encoding="utf-8"))
    assert len(files) >= 15, files
    assert sum(_check_file(p) for p in files) > 1000


def test_a_traced_op_records_the_line_its_compiled_expression_would(tmp_path: Path) -> None:
    """End to end: a kernel whose multi-line expressions put the op lines away from the statement line records the
    same op lines (and the same error line) walked and compiled."""
    src = (
        "import pypto\n\n\n"
        "@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(8, 16)\n"
        "    t = pypto.add(\n"
        "        pypto.mul(x,\n"
        "                  2.0),\n"
        "        x\n"
        "        .exp())\n"
        "    y.move((t\n"
        "            + x))\n"
    )
    (tmp_path / "wk.py").write_text(src, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        import importlib

        import numpy as np
        lines = {}
        for on in (False, True):
            sys.modules.pop("wk", None)
            mod = importlib.import_module("wk")
            old = _trace_walk.ENABLED
            _trace_walk.ENABLED = on
            try:
                region = mod.k.trace(np.ones((8, 16), np.float32), np.zeros((8, 16), np.float32))
            finally:
                _trace_walk.ENABLED = old
            lines[on] = [(it.name, it.line) for path in region.paths for it in path.items if isinstance(it, OpNode)]
        assert lines[True] == lines[False]
        assert [ln for _, ln in lines[True]] == [8, 11, 7, 12, 12], lines[True]  # mul, exp, add, add (t + x), move
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("wk", None)
