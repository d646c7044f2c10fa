"""The trace cache's key leaves out what the body binds itself before it reads it (`_trace_cache.bound_reads`).

Why: every name a kernel mentioned was fingerprinted, so a kernel whose loop variable is also a module-level variable
that changes between calls (``for i in range(5): add(x, out)`` at the top of a script or in a notebook, over a kernel
with ``for i in pypto.loop(...)``) was traced again on every call. What must not change: a name the trace *can* read
from the environment (read before it is bound, unbound after a loop, unbound by a helper that shares the kernel's
namespace) is still in the key - a cached program must never outlive the global it read.
"""

import ast
from typing import Any

import numpy as np
import pytest
from test_corpus import CASES, _run_case

import runtime.emulator as emu
from runtime.emulator import _frontend
from runtime.emulator._trace_cache import body_reads, bound_reads

pypto = emu.install()


def _reads(src: str, params: frozenset[str] = frozenset({"x", "n", "c"})) -> tuple[set[str], set[tuple[str, ...]]]:
    fdef = ast.parse(src).body[0]
    assert isinstance(fdef, ast.FunctionDef)
    r = bound_reads(fdef, params)
    return set(r.bare), set(r.chains)


@pytest.mark.parametrize("src, read, not_read", [
    # a loop variable and what the body binds before reading it
    ("def k(x, n):\n for i in pypto.loop(n):\n  v = i * 2\n  t = f(v)\n  u = t + i\n", {"f"}, {"i", "v", "t", "u"}),
    # read before it is bound: the environment's value
    ("def k(x):\n a = b + 1\n b = 2\n", {"b"}, {"a"}),
    # both branches bind it / one branch does
    ("def k(x, c):\n if c:\n  z = 1\n else:\n  z = 2\n w = z\n", set(), {"z", "w"}),
    ("def k(x, c):\n if c:\n  q = 1\n w = q\n", {"q"}, {"w"}),
    # a loop unbinds what it binds (a rolled range loop pops it; a zero-trip loop never binds it)
    ("def k(x):\n acc = x\n for r in range(4):\n  acc = acc + 1\n y = acc\n", {"acc"}, {"r", "y"}),
    ("def k(x):\n for r in range(4):\n  t = r\n y = t + r\n", {"t", "r"}, {"y"}),
    # del, also in a loop body (the next iteration starts without the name) and in a nested loop
    ("def k(x):\n t = 1\n del t\n u = t\n", {"t"}, {"u"}),
    ("def k(x):\n t = 1\n for r in range(3):\n  u = t\n  del t\n", {"t"}, {"u", "r"}),
    ("def k(x):\n t = 1\n for r in range(3):\n  u = t\n  for s in range(2):\n   t = 2\n", {"t"}, {"u", "r", "s"}),
    # own scopes read the environment: lambdas, comprehensions, nested functions
    ("def k(x):\n t = 1\n u = [t for _ in x]\n", {"t"}, {"u"}),
    ("def k(x):\n t = 1\n f = lambda: t\n", {"t"}, {"f"}),
    ("def k(x):\n t = 1\n def g():\n  return t\n u = g\n", {"t", "g"}, {"u"}),
    # `k += 1` reads k
    ("def k(x):\n m += 1\n", {"m"}, set()),
    ("def k(x):\n m = 0\n m += 1\n", set(), {"m"}),
    # subscript targets read their value and key in order; tuple targets bind in order
    ("def k(x):\n a, b = x\n out[a] = b\n", {"out"}, {"a", "b"}),
    # a parameter deleted and read again
    ("def k(x):\n del x\n y = x\n", {"x"}, {"y"}),
    # statements the interpreter refuses count nothing as bound
    ("def k(x):\n t = 1\n while t:\n  t = 0\n u = t\n", {"t"}, {"u"}),
])
def test_what_a_body_can_read_from_its_environment(src: str, read: set[str], not_read: set[str]) -> None:
    bare, _ = _reads(src)
    assert read <= bare, (read - bare)
    assert not (not_read & bare), not_read & bare


def test_attribute_chains_of_bound_names_are_not_read() -> None:
    _, chains = _reads("def k(x):\n t = x\n s = t.shape\n r = cfg.a.b\n")
    assert chains == {("cfg", "a", "b")}


# ---- end to end ----------------------------------------------------------------------------------------------


i = 0  # module-level names the kernels below also bind (the `traces` fixture is conftest's)
t = 0
G = 2.0


@pypto.frontend.jit  # the example kernel of docs/emulator.md, here under this module's `i` and `t`
def add_rows(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 16)):
        v = (n - i * 16).min(16)
        t = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[v, 64])
        pypto.assemble(t + 1.0, [i * 16, 0], out)


def test_a_module_level_loop_variable_does_not_retrace(traces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.arange(77 * 64, dtype=np.float32).reshape(77, 64)
    for k in range(5):
        monkeypatch.setitem(globals(), "i", k)  # what `for i in range(5): add_rows(x, out)` does to the module
        monkeypatch.setitem(globals(), "t", np.zeros(k + 1))
        out = np.zeros_like(x)
        add_rows(x, out)
        np.testing.assert_array_equal(out, x + 1)
    assert traces == ["add_rows"]


@pypto.frontend.jit
def scaled_before_bound(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    y = pypto.view(x, [16, 64], [0, 0]) * G  # noqa: F823 - read before the body binds G: the module's G
    G = 3.0  # noqa: F841 - binds the name after its read
    pypto.assemble(y, [0, 0], out)


def test_a_name_read_before_the_body_binds_it_still_counts(traces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.ones((16, 64), dtype=np.float32)
    for g in (2.0, 2.0, 5.0):
        monkeypatch.setitem(globals(), "G", g)
        out = np.zeros_like(x)
        scaled_before_bound(x, out)
        np.testing.assert_array_equal(out, x * g)
    assert traces == ["scaled_before_bound"] * 2


@pypto.frontend.function
def unbind_s(t: pypto.Tensor()):
    del s  # noqa: F821 - the helper runs in the kernel's namespace: this unbinds the kernel's `s`


s = 2.0


@pypto.frontend.jit
def via_unbinding_helper(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    s = 7.0
    v = pypto.view(x, [16, 64], [0, 0])
    unbind_s(v)
    pypto.assemble(v * s, [0, 0], out)  # `s` was unbound by the helper: the module's s


def test_a_helper_that_unbinds_a_name_makes_the_key_read_it(traces: list[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the switch to every name, the second call would hit the first trace's program keyed without ``s``,
    and the third would compute with a stale ``s``."""
    x = np.ones((16, 64), dtype=np.float32)
    for value in (2.0, 2.0, 4.0, 4.0):
        monkeypatch.setitem(globals(), "s", value)
        out = np.zeros_like(x)
        via_unbinding_helper(x, out)
        np.testing.assert_array_equal(out, x * value)
    assert traces == ["via_unbinding_helper"] * 3  # the first (not kept), 2.0 again (kept), 4.0; then a hit


# ---- on the corpus: what the key leaves out is never read from the environment ---------------------------------

class _Poison:
    """A module-level value no kernel can use: any arithmetic, call, attribute, index or truth test raises."""

    def __getattr__(self, name: str) -> None:
        raise AssertionError(f"a kernel read the poisoned environment name (attribute {name!r})")

    def __call__(self, *a: object, **k: object) -> None:
        raise AssertionError("a kernel called the poisoned environment name")

    def __bool__(self) -> bool:
        raise AssertionError("a kernel tested the poisoned environment name")

    def __index__(self) -> int:
        raise AssertionError("a kernel indexed with the poisoned environment name")

    __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = __truediv__ = __floordiv__ = __call__
    __getitem__ = __iter__ = __lt__ = __le__ = __gt__ = __ge__ = __neg__ = __call__


def _left_out(fdef: ast.FunctionDef, params: frozenset[str]) -> set[str]:
    """Names the body mentions (loads) that `bound_reads` says are never read from the environment."""
    every = body_reads(fdef, frozenset())
    precise = bound_reads(fdef, params)
    mentioned = set(every.bare) | {c[0] for c in every.chains}
    return mentioned - set(precise.bare) - {c[0] for c in precise.chains} - params


def test_names_the_key_leaves_out_are_never_read_from_the_environment(corpus_module: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus case again, with each name the key leaves out (`bound_reads`) set to a poison value in its
    kernel's environment: a trace that read one from there would fail or compute something else (`_run_case` checks
    the results against the references). Cases whose trace calls a ``@pypto.frontend.function`` helper are keyed by
    every name (`JitFunction._program`) and not counted; neither are kernels with no name left out (no locals)."""
    names_of = _frontend._names_of
    left: dict[Any, set[str]] = {}

    def poisoned(func: Any, captured: dict[str, Any]) -> dict[str, Any]:
        g = names_of(func, captured)
        for name in left.get(func, ()):
            g[name] = _Poison()
        return g

    monkeypatch.setattr(_frontend, "_names_of", poisoned)
    checked = 0
    for module, case_name in CASES:
        case = getattr(corpus_module(module), case_name)()
        left.clear()
        for c in case.calls:
            if isinstance(c.kernel, _frontend.JitFunction):
                p = c.kernel._parse()
                tparams, others = p.split_params()
                left[c.kernel.func] = _left_out(p.fdef, frozenset(n for n, _ in tparams) | {o.name for o in others})
        if not any(left.values()):
            continue
        calls = _frontend.FunctionMarker.calls
        with emu.session() as s:
            try:
                _run_case(case, s, emu)
            except AssertionError as exc:
                if _frontend.FunctionMarker.calls == calls:
                    raise AssertionError(f"{module}::{case_name}: {exc}") from exc
        if _frontend.FunctionMarker.calls == calls:
            checked += 1
    assert checked >= 40, checked  # the corpus's kernels with locals, run with their left-out names poisoned
