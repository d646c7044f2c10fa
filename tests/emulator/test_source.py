"""`_source.quick_block` finds a kernel's source without the tokenizer: the parsed tree must be exactly the one
``inspect.getsourcelines`` gives (line and column numbers included), or the fast path must step aside.

Why: ``inspect.getsourcelines`` tokenizes the function (~1.5 ms for a 60-line kernel) and every kernel and helper
is parsed once per process - a quarter of a small gym kernel's first call.
"""

import ast
import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import runtime.emulator as emu
from runtime.emulator import _frontend
from runtime.emulator._trace_interp import _quick_tree

pypto = emu.install()

CORPUS = Path(__file__).parent / "corpus"

AWKWARD = '''\
import pypto


@pypto.frontend.jit(
    runtime_options={"run_mode": 1},
)
def deco_args(x: pypto.Tensor([8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8)
    x.move(x + 1.0)
# a comment at column 0 after the kernel


@pypto.frontend.jit
def long_signature(
    x: pypto.Tensor([8], pypto.DT_FP32),
    y: pypto.Tensor([8], pypto.DT_FP32),
):
    """A docstring."""
    pypto.set_vec_tile_shapes(8)
    y.move(x * 2.0)


@pypto.frontend.jit
def docstring_at_column_0(x: pypto.Tensor([8], pypto.DT_FP32)):
    """A docstring
with a line at column 0 (inside the string: not the end of the block)."""
    pypto.set_vec_tile_shapes(8)
    x.move(x * 2.0)


@pypto.frontend.jit
def continued(x: pypto.Tensor([8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8)
    t = x + \\
1.0
# a comment at column 0 inside the body
    x.move(t)


@pypto.frontend.jit
def bracket_at_column_0(x: pypto.Tensor([8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8)
    t = pypto.add(x,
x)
    x.move(t)


def outer():
    @pypto.frontend.function
    def nested_helper(x: pypto.Tensor([8], pypto.DT_FP32)):
        x.move(x * 3.0)

    @pypto.frontend.jit
    @staticmethod_like
    def nested(x: pypto.Tensor([8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        nested_helper(x)
    return nested, nested_helper


def staticmethod_like(f):
    return f


NESTED, NESTED_HELPER = outer()


@pypto.frontend.jit
def one_line(x: pypto.Tensor([8], pypto.DT_FP32)): x.move(x + 1.0)
@pypto.frontend.jit
def at_eof(x: pypto.Tensor([8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8)
    x.move(x - 1.0)'''


def _inspect_tree(func: Any) -> ast.Module:
    lines, start = inspect.getsourcelines(func)
    return ast.parse("\n" * (start - 1) + textwrap.dedent("".join(lines)))


def _kernels(module: Any) -> list[Any]:
    out = []
    for v in vars(module).values():
        if isinstance(v, _frontend.JitFunction | _frontend.FunctionMarker):
            out.append(v.func)
    return out


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_awkward_layouts_parse_as_inspect_parses_them(tmp_path: Path) -> None:
    path = tmp_path / "awkward_kernels.py"
    path.write_text(AWKWARD, encoding="utf-8")
    mod = _load(path, "emu_awkward_kernels")
    funcs = {f.__name__: f for f in _kernels(mod)}
    assert set(funcs) == {"deco_args", "long_signature", "docstring_at_column_0", "continued", "bracket_at_column_0", "nested", "nested_helper",
                          "one_line", "at_eof"}
    fast = set()
    for name, f in funcs.items():
        got = _quick_tree(f)
        if got is not None:
            fast.add(name)
            assert ast.dump(got, include_attributes=True) == ast.dump(_inspect_tree(f), include_attributes=True), name
    # a line at column 0 inside a string, a continuation or a bracket: the fast path's block does not parse (or is
    # not one function): it steps aside
    assert fast == {"deco_args", "long_signature", "nested", "nested_helper", "one_line", "at_eof"}


def test_every_corpus_kernel_parses_as_inspect_parses_it() -> None:
    n = 0
    for i, path in enumerate(sorted(CORPUS.glob("*.py"))):
        try:
            mod = _load(path, f"emu_source_corpus_{i}")
        except Exception:  # noqa: BLE001 - a corpus module that needs its fixture: its kernels are checked elsewhere
            continue
        for f in _kernels(mod):
            got = _quick_tree(f)
            assert got is not None, (path.name, f.__name__)
            assert ast.dump(got, include_attributes=True) == ast.dump(_inspect_tree(f), include_attributes=True)
            n += 1
    assert n >= 40, n


@pytest.mark.parametrize(("name", "delta"), [("deco_args", 1.0), ("at_eof", -1.0)])
def test_the_kernels_run(tmp_path: Path, name: str, delta: float) -> None:
    import numpy as np

    path = tmp_path / "awkward_kernels2.py"
    path.write_text(AWKWARD, encoding="utf-8")
    mod = _load(path, f"emu_awkward_run_{name}")
    x = np.arange(8, dtype=np.float32)
    with emu.session():
        getattr(mod, name)(x)
    assert x.tobytes() == (np.arange(8, dtype=np.float32) + np.float32(delta)).tobytes()


def test_split_params_follows_replaced_defaults_and_annotations() -> None:
    """`_Parsed.split_params` is kept between calls, but not past a change of the function's defaults/annotations."""
    from runtime.emulator._trace_interp import _Parsed

    def k(x: pypto.Tensor([8], pypto.DT_FP32), n: int = 2):
        pass

    p = _Parsed(k, "jit")
    t1, o1 = p.split_params()
    assert [n for n, _ in t1] == ["x"] and [(o.name, o.default) for o in o1] == [("n", 2)]
    assert p.split_params() == (t1, o1)
    k.__defaults__ = (5,)
    assert [(o.name, o.default) for o in p.split_params()[1]] == [("n", 5)]
    k.__annotations__["n"] = pypto.Tensor([8], pypto.DT_FP32)
    with pytest.raises(emu.EmulatorError, match="Default values are only allowed"):
        p.split_params()
    k.__defaults__ = None
    t3, o3 = p.split_params()
    assert [n for n, _ in t3] == ["x", "n"] and o3 == []


def test_findsource_is_inspects(tmp_path: Path) -> None:
    """`_source.findsource` answers as ``inspect.findsource`` for every corpus kernel, every kernel of the awkward
    layouts and plain functions; a function whose first line does not start its block is left to inspect."""
    from runtime.emulator._source import findsource

    path = tmp_path / "awkward_kernels3.py"
    path.write_text(AWKWARD, encoding="utf-8")
    funcs = _kernels(_load(path, "emu_awkward_findsource"))
    for i, p in enumerate(sorted(CORPUS.glob("*.py"))):
        try:
            funcs += _kernels(_load(p, f"emu_findsource_corpus_{i}"))
        except Exception:  # noqa: BLE001 - a corpus module that needs its fixture
            continue
    funcs += [_load(path, "emu_awkward_findsource2").staticmethod_like, _inspect_tree]  # plain functions
    assert len(funcs) >= 50
    for f in funcs:
        got, want = findsource(f), inspect.findsource(f)
        assert got[1] == want[1] and got[0] == want[0], f.__name__


def test_findsource_steps_aside_when_the_first_line_is_not_the_block(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from runtime.emulator import _source

    path = tmp_path / "lam.py"
    path.write_text("x = 1\nf = (\n    lambda a: a + 1)\n\n\ndef g():\n    return 2\n", encoding="utf-8")
    mod = _load(path, "emu_findsource_lambda")
    calls = []
    real = inspect.findsource

    def spy(obj: Any) -> Any:
        calls.append(obj)
        return real(obj)

    monkeypatch.setattr(_source.inspect, "findsource", spy)
    assert _source.findsource(mod.f) == real(mod.f)  # first line `f = (`: not a def/decorator line -> inspect
    assert calls == [mod.f]
    assert _source.findsource(mod.g) == real(mod.g) and calls == [mod.f]  # a def line: answered here
