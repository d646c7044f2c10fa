"""Lint reads what Python runs, cannot be made to hang, and sees banned names and host math wherever they hide
(issue #24 item 5). Each test names the hole it closes; ``tests/redteam`` runs the matching candidates end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.lint import _engine, lint_paths, lint_source
from runtime.lint._registry import CHECKS, Check

BASE = (Path(__file__).parent / "fixtures" / "ops" / "silu" / "silu_impl.py").read_text(encoding="utf-8")
WRAPPER = "def silu_wrapper(x):\n    y = np.empty_like(x)\n    silu_kernel(x, y)\n    return y\n"


def _blocking(source: str, rule: str | None = None) -> list[str]:
    found = lint_source(source, "silu_impl.py", stage="final")
    return [f"{f.rule_id}: {f.message}" for f in found if f.is_blocking and (rule is None or f.rule_id == rule)]


def _with_wrapper(body: str) -> str:
    assert WRAPPER in BASE
    return BASE.replace(WRAPPER, body)


# ------------------------------------------------------------------------------ the exact bytes Python runs


@pytest.mark.parametrize("cookie", ["# -*- coding: rot13 -*-\n", "# coding=latin-1\n",
                                    "#!/usr/bin/env python\n# vim: set fileencoding=utf-7 :\n",
                                    "\ufeff# coding: cp1252\n"])
def test_a_coding_cookie_other_than_utf8_is_refused(cookie: str) -> None:
    found = _blocking(cookie + BASE, "PF00")
    assert found and "coding declaration" in found[0]


@pytest.mark.parametrize("cookie", ["# -*- coding: utf-8 -*-\n", "\ufeff", "# coding: UTF_8\n"])
def test_utf8_cookies_and_the_utf8_bom_are_fine(cookie: str) -> None:
    assert _blocking(cookie + BASE) == []


def test_a_cookie_after_code_is_just_a_comment() -> None:
    assert _blocking(BASE.replace("import numpy as np\n", "import numpy as np\n# coding: rot13\n", 1)) == []


def test_a_utf16_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "silu_impl.py"
    path.write_bytes(b"\xff\xfe" + BASE.encode("utf-16-le"))
    found = [f for f in lint_paths([path], stage="final") if f.is_blocking]
    assert found and found[0].rule_id == "PF00" and "UTF-16" in found[0].message


def test_the_sandbox_runs_the_utf8_text_lint_read_not_the_cookie(tmp_path: Path) -> None:
    """Defence in depth: even unlinted, a rot13 cookie cannot make the runner execute other code."""
    from runtime.sandbox._runner import compile_candidate

    hidden = b"# -*- coding: utf-7 -*-\nf = 1\n#+AAo-f = 2\n"  # UTF-7 "+AAo-" is a newline: `f = 2` runs
    as_python_reads_bytes: dict = {}
    exec(compile(hidden, "c.py", "exec"), as_python_reads_bytes)  # noqa: S102 - the test's own literal
    assert as_python_reads_bytes["f"] == 2
    ns: dict = {}
    exec(compile_candidate(hidden, "c.py"), ns)  # noqa: S102 - the test's own literal
    assert ns["f"] == 1  # what lint reads: the second assignment is a comment
    assert _blocking(hidden.decode() + BASE, "PF00")


# ------------------------------------------------------------------------------ bounded time


def test_lint_stops_at_its_time_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    def spin(ctx):  # a rule that never ends (what an exponential walk looks like from outside)
        while True:
            pass
        yield

    monkeypatch.setattr(_engine, "CHECKS", [*CHECKS, Check("PF02", ("kernel",), spin)])
    found = lint_source(BASE, "silu_impl.py", stage="final", budget_s=0.5)
    assert [f.rule_id for f in found] == ["PF00"] and "time budget" in found[0].message and found[0].is_blocking


def test_chained_names_resolve_in_linear_time() -> None:
    """OL48 resolved ``A{i} = A{i-1} + A{i-1}`` twice per level: 2**n lookups. Now each name once."""
    chain = "".join(f"A{i} = A{i - 1} + A{i - 1}\n" for i in range(1, 40))
    src = BASE.replace("ROW_TILE = 16\n", "ROW_TILE = 16\nA0 = 1\n" + chain).replace(
        "pypto.set_vec_tile_shapes(ROW_TILE, 64)", "pypto.set_vec_tile_shapes(A39, 64)")
    found = lint_source(src, "silu_impl.py", stage="final", budget_s=20.0)
    assert not any(f.rule_id == "PF00" for f in found), [f.message for f in found if f.rule_id == "PF00"]



def test_huge_int_literals_are_not_computed_with() -> None:
    """Held-out attack A6: ``(H * H) // H`` on a 600,000-hex-digit literal in a tile size is one quadratic C call
    (about 30 s here, minutes at 3 MB) that the time budget cannot interrupt. The resolver refuses ints over 64
    bits, so lint answers at once (and the tile size is "not a compile-time int constant")."""
    import time

    big = "0x" + "f" * 600_000
    src = BASE.replace("ROW_TILE = 16\n", f"ROW_TILE = 16\nH = {big}\nBIG = (H * H) // H\n").replace(
        "pypto.set_vec_tile_shapes(ROW_TILE, 64)", "pypto.set_vec_tile_shapes(ROW_TILE + 0 * BIG, 64)")
    t0 = time.perf_counter()
    found = lint_source(src, "silu_impl.py", stage="final", budget_s=5.0)
    assert time.perf_counter() - t0 < 10.0
    assert any(f.rule_id == "OL48" and f.is_blocking for f in found), [f.rule_id for f in found]

# ------------------------------------------------------------------------------ banned names on any use


@pytest.mark.parametrize("line", [
    "    f = eval\n",                                   # aliased
    "    list(map(exec, ['pass']))\n",                  # passed on
    "    g = getattr\n",                                # reflection as a value
    "    functools.partial(setattr, np)\n",             # functools indirection
    "    functools.reduce(getattr, ['ctypeslib'], np)\n",
    "    h = [compile][0]\n",                           # in a container
    "    t = __file__.startswith('/tmp/tmp')\n",         # where the file runs from tells verification (A9e)
])
def test_banned_builtins_are_banned_on_any_use(line: str) -> None:
    src = _with_wrapper(WRAPPER.replace("    return y\n", line + "    return y\n"))
    if "functools" in line:
        src = "import functools\n" + src
    assert _blocking(src, "PF02"), line


@pytest.mark.parametrize("stmt", ["eval = print\n", "def open(p):\n    return p\n", "from numpy import compile\n"])
def test_rebinding_a_banned_name_is_refused(stmt: str) -> None:
    assert _blocking(BASE.replace("ROW_TILE = 16\n", stmt + "ROW_TILE = 16\n"), "PF02")


def test_a_parameter_named_like_a_builtin_is_fine() -> None:
    src = BASE.replace("def silu_wrapper(x):\n    y = np.empty_like(x)\n    silu_kernel(x, y)",
                       "def silu_wrapper(input):\n    y = np.empty_like(input)\n    silu_kernel(input, y)")
    assert "input" in src and _blocking(src) == []


# ------------------------------------------------------------------------------ host math wherever it hides


@pytest.mark.parametrize("code", [
    # a module-level lambda the wrapper calls
    ("_fix = lambda a: a * 2.0\n\n\n" + WRAPPER.replace("    return y\n", "    return _fix(y)\n")),
    # a lambda inside the wrapper
    WRAPPER.replace("    return y\n", "    f = lambda a: a + 1.0\n    return f(y)\n"),
    # a method of a helper class
    ("class _Fix:\n    def apply(self, a):\n        return a * 2.0\n\n\n"
     + WRAPPER.replace("    return y\n", "    return _Fix().apply(y)\n")),
    # numpy math in a class body
    ("class _T:\n    TABLE = np.exp(np.arange(4.0))\n\n\n" + WRAPPER),
    # numpy math in a static method
    ("class _S:\n    @staticmethod\n    def f(a):\n        return np.tanh(a)\n\n\n"
     + WRAPPER.replace("    return y\n", "    return _S.f(y)\n")),
])
def test_host_math_in_lambdas_classes_and_methods(code: str) -> None:
    assert _blocking(_with_wrapper(code), "OL62"), code


def test_a_write_through_a_helper_of_a_helper_is_found_not_a_crash() -> None:
    """PF10's recursion into a helper's helper passed its arguments in the wrong order and failed closed with
    "could not be checked" on honest-looking code; it must find the write (and say where)."""
    src = _with_wrapper(
        "def _inner(b):\n    b[0] = 1.0\n\n\ndef _outer(a):\n    _inner(a)\n\n\n"
        + WRAPPER.replace("    return y\n", "    _outer(y)\n    return y\n"))
    found = _blocking(src, "PF10")
    assert found and "could not be checked" not in found[0] and "_outer` -> `_inner`" in found[0], found
