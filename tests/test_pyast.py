"""`runtime.pyast`: every parse / compile of a syntax tree in the project, one thread at a time.

Why: CPython 3.11's syntax-tree conversion keeps its recursion depth in interpreter-wide state, and two threads
converting at once fail with ``SystemError: AST constructor recursion depth mismatch`` (seen once in ``make test``:
the held-out bisect tests run two bisections in a thread pool; verify and bisect also parse in a golden thread).
"""

from __future__ import annotations

import ast
import gc
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from runtime import pyast

ROOT = Path(__file__).resolve().parents[1]
SOURCE = (ROOT / "runtime" / "emulator" / "_trace_interp.py").read_text(encoding="utf-8")


def test_same_trees_and_code_as_the_stdlib() -> None:
    assert ast.dump(pyast.parse(SOURCE)) == ast.dump(ast.parse(SOURCE))
    assert ast.dump(pyast.parse("a + 1", mode="eval")) == ast.dump(ast.parse("a + 1", mode="eval"))
    tree = ast.parse("x * 2", mode="eval")
    assert eval(pyast.compile_tree(tree, "<t>", "eval"), {"x": 21}) == 42  # noqa: S307 - a constant expression
    with pytest.raises(SyntaxError):
        pyast.parse("def (:")


def test_the_interpreters_depth_mismatch_is_retried_and_no_other_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A library's own ``ast.parse`` in another thread does not take the lock: the mismatch it causes is retried."""
    real, calls = ast.parse, []

    def flaky(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        if len(calls) < 3:
            raise SystemError("AST constructor recursion depth mismatch (before=2, after=3)")
        return real(*args, **kwargs)

    monkeypatch.setattr(pyast.ast, "parse", flaky)
    assert ast.dump(pyast.parse("z = 2")) == ast.dump(real("z = 2")) and len(calls) == 3

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise SystemError("some other interpreter error")

    monkeypatch.setattr(pyast.ast, "parse", broken)
    with pytest.raises(SystemError, match="some other"):
        pyast.parse("z = 2")


def test_a_parse_waits_for_a_thread_that_holds_the_lock() -> None:
    done = threading.Event()

    def parse_now() -> None:
        pyast.parse("y = 1")
        done.set()

    with pyast._LOCK:
        t = threading.Thread(target=parse_now)
        t.start()
        assert not done.wait(0.2)  # blocked while another thread converts a tree
    assert done.wait(5)
    t.join()


def test_no_call_site_parses_or_compiles_a_tree_around_the_lock() -> None:
    """Every ``ast.parse`` of the project's packages goes through `runtime.pyast` (the lock only helps if all do)."""
    bad = []
    for top in ("runtime", "orchestrator", "agents"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.name == "pyast.py":
                continue
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"(?<![\w.])ast\.parse\(", line):
                    bad.append(f"{path.relative_to(ROOT)}:{i}")
    assert not bad, "use runtime.pyast.parse:\n" + "\n".join(bad)


class _Finaliser:
    def __del__(self) -> None:
        time.sleep(0)  # lets another thread run in the middle of a collection


@pytest.mark.slow  # a stress run (~3-6 s): three threads parsing with collections and finalisers all along
def test_threads_parsing_at_once_do_not_corrupt_each_other() -> None:
    errors: list[str] = []

    def work() -> None:
        for _ in range(150):
            junk = [_Finaliser() for _ in range(50)]
            for j in junk:
                j.cycle = j  # type: ignore[attr-defined]  # freed by the collector, not by reference counting
            del junk
            try:
                pyast.parse(SOURCE)
            except SystemError as exc:  # without the lock: "AST constructor recursion depth mismatch"
                errors.append(str(exc))
                return

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
        gc.collect()
    assert not errors, errors
