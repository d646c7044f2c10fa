"""Lint false refusals of honest kernels (round 25, s38, ``tests/redteam/fixture_s38acc/``), and the forms that
stay findings:

- OL48 read a tile size as "not a compile-time int" when it was one: a conditional between two int constants
  (``t = 32 if dtype_name == "bfloat16" else 16``), an entry of a module table of ints (``_TILES[dtype_name]``) and a
  constant bound in the factory around a nested ``@jit`` (``t = 2 * TILE``). Each is a Python int when the kernel is
  traced, as the real frontend reads it;
- OL45 said a wrapper calling ``_kernel_for(x.dtype)(x, y)`` never called its kernel (and PF10 saw no kernel call in
  it, so a host write after that call went unseen);
- OL62 refused ``np.prod(x.shape[:-1])``, the row count of a tensor from its shape (``math.prod`` passed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.lint import lint_source

CANDS = Path(__file__).resolve().parents[1] / "redteam" / "fixture_s38acc" / "candidates"


def _rule(text: str, rule: str, name: str = "silu_impl.py") -> list[str]:
    return [f.message for f in lint_source(text, name, stage="final") if f.rule_id == rule and f.status == "FAIL"]


def _src(name: str) -> str:
    return (CANDS / f"{name}.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["silu_h_tile_ifexp", "silu_h_tile_dict", "silu_h_tile_closure"])
def test_ol48_tile_sizes_that_are_ints_at_trace_time_pass(name: str) -> None:
    assert _rule(_src(name), "OL48") == []


def test_ol48_a_conditional_with_a_runtime_branch_is_still_a_finding() -> None:
    src = _src("silu_h_tile_ifexp").replace('t = 32 if dtype_name == "bfloat16" else TILE',
                                            't = 32 if dtype_name == "bfloat16" else x.shape[0]')
    assert src != _src("silu_h_tile_ifexp")
    # x is not a parameter of the factory: the branch is not a compile-time int
    assert _rule(src, "OL48")


@pytest.mark.parametrize(("old", "new"), [
    # a table some code fills at run time
    ("def silu_wrapper(x):\n", "def silu_wrapper(x):\n    _TILES[x.dtype.name] = x.shape[0]\n"),
    # a table handed to code that may change it
    ("def silu_wrapper(x):\n", "def silu_wrapper(x):\n    _fill(_TILES)\n"),
    # a table bound twice
    ("_KERNELS = {}\n", "_KERNELS = {}\n_TILES = {}\n"),
    # a table with a value that is not an int constant
    ('_TILES = {"float32": 16, "bfloat16": 32}', '_TILES = {"float32": 16, "bfloat16": ROWS}'),
])
def test_ol48_a_table_that_is_not_constant_is_still_a_finding(old: str, new: str) -> None:
    base = _src("silu_h_tile_dict")
    src = base.replace(old, new, 1)
    assert src != base
    assert _rule(src, "OL48")


@pytest.mark.parametrize(("old", "new"), [
    # a parameter of the factory given a size of the input (the first call's size baked into the cached kernel)
    ("def _silu_kernel_for(dtype_name):", "def _silu_kernel_for(dtype_name, t=32):"),
    # bound twice in the factory
    ("    t = 2 * TILE\n", "    t = 2 * TILE\n    t = t + 1\n"),
])
def test_ol48_a_factory_name_that_is_not_one_constant_is_still_a_finding(old: str, new: str) -> None:
    base = _src("silu_h_tile_closure")
    src = base.replace(old, new, 1)
    if old.startswith("def"):
        src = src.replace("    t = 2 * TILE\n", "")
        assert _rule(src, "OL48") == []  # the default, 32, in every call: a constant
        src = src.replace("_silu_kernel_for(x.dtype.name)", "_silu_kernel_for(x.dtype.name, x.shape[0])")
    assert src != base
    assert _rule(src, "OL48")


def test_ol45_a_kernel_called_through_its_factory_is_a_kernel_call() -> None:
    src = _src("silu_h_torch_two_kernels")
    assert "_kernel(x.dtype)(x, y)" in src
    assert _rule(src, "OL45") == []
    twice = src.replace("_kernel(x.dtype)(x, y)", "_kernel(x.dtype)(x, y)\n    _kernel(x.dtype)(x, y)")
    assert any("calls the JIT kernel 2 times" in m for m in _rule(twice, "OL45"))


def test_pf10_sees_a_host_write_after_a_kernel_called_through_its_factory() -> None:
    src = _src("silu_h_torch_two_kernels").replace("_kernel(x.dtype)(x, y)\n", "_kernel(x.dtype)(x, y)\n    y[0] = 0.0\n")
    assert any("after the kernel call" in m for m in _rule(src, "PF10"))


def test_ol62_the_row_count_from_a_shape_passes() -> None:
    src = _src("rms_h_numpy_host_shapes")
    assert "np.prod(x.shape[:-1])" in src
    assert _rule(src, "OL62", "rms_norm_impl.py") == []


@pytest.mark.parametrize("expr", ["np.prod(x)", "np.prod(x[0])", "np.prod(x.shape, dtype=x.dtype)",
                                  "np.prod(x.reshape(-1))", "np.sum(x.shape[:-1])"])
def test_ol62_a_product_of_values_is_still_host_math(expr: str) -> None:
    src = _src("rms_h_numpy_host_shapes").replace("np.prod(x.shape[:-1])", expr)
    assert _rule(src, "OL62", "rms_norm_impl.py")


def test_a_decode_branch_calling_its_own_kernel_once_passes_ol45_and_ol48() -> None:
    """Each branch calls the kernel once and returns; the factory's tile parameter gets int constants only."""
    src = _src("rms_h_decode_branch")
    assert _rule(src, "OL45", "rms_norm_impl.py") == []
    assert _rule(src, "OL48", "rms_norm_impl.py") == []


@pytest.mark.parametrize(("old", "new", "rule"), [
    # the factory called with a size of the input: the first call's size baked into the cached kernel
    ("_kernel_for(TILE)(x, gamma.reshape(1, D), y)", "_kernel_for(x.shape[0])(x, gamma.reshape(1, D), y)", "OL48"),
    # the factory handed around instead of called
    ("    y = np.zeros_like(x)\n", "    y = np.zeros_like(x)\n    make = _kernel_for\n", "OL48"),
    # two calls on one path
    ("        return y\n    _kernel_for(TILE)", "    _kernel_for(TILE)", "OL45"),
])
def test_a_decode_branch_that_is_not_one_call_of_constants_is_still_a_finding(old: str, new: str, rule: str) -> None:
    base = _src("rms_h_decode_branch")
    src = base.replace(old, new, 1)
    assert src != base
    assert _rule(src, rule, "rms_norm_impl.py")
