"""Programs derived for another trip count (`_roll.range_sites`, `_trace_cache.retrip`): a kernel whose int
parameter ``n`` is read only as ``range(n)`` bounds is traced once, and the program of another ``n`` is that
program with the rolled loops' trip counts changed. Every call is compared with the cache switched off (a fresh
trace of that very call): outputs bit for bit, counters, diagnostics and errors; and real traces are counted."""

import ast
import textwrap
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from test_roll import (
    three_pass_softmax,  # attn_softmax's kernel shape: the tile count is an int read by `range`
)

import runtime.emulator as emu
from runtime.emulator import _executor, _trace_cache
from runtime.emulator._errors import EmulatorError
from runtime.emulator._roll import range_sites
from runtime.emulator.device import _exec

pypto = emu.install()
F32 = np.float32


@pypto.frontend.jit
def first_four(x: pypto.Tensor([16, 512], pypto.DT_FP32), out: pypto.Tensor([16, 512], pypto.DT_FP32), n: int):
    """A branch on the index decided at trace time for small counts (`t < 4` in every rolled iteration of n <= 4)
    and per iteration for larger ones: a program traced at n = 3 must not serve n = 8."""
    pypto.set_vec_tile_shapes(16, 64)
    for t in range(n):
        tile = pypto.view(x, [16, 64], [0, t * 64])
        if t < 4:
            pypto.assemble(pypto.exp(tile), [0, t * 64], out)
        else:
            pypto.assemble(tile * 3.0, [0, t * 64], out)


@pypto.frontend.jit
def reads_n_elsewhere(x: pypto.Tensor([16, 512], pypto.DT_FP32), out: pypto.Tensor([16, 512], pypto.DT_FP32),
                      n: int):
    """``n`` is also a scale factor: every value is its own program."""
    pypto.set_vec_tile_shapes(16, 64)
    for t in range(n):
        tile = pypto.view(x, [16, 64], [0, t * 64])
        pypto.assemble(tile * float(n), [0, t * 64], out)


def _bf16(a: np.ndarray) -> np.ndarray:
    return a.astype(ml_dtypes.bfloat16)


def _call(kernel: Any, args: list[np.ndarray], extra: tuple, monkeypatch: pytest.MonkeyPatch, cache: bool) -> tuple:
    if cache:
        monkeypatch.delenv("PTO_FORGE_TRACE_CACHE", raising=False)
    else:
        monkeypatch.setenv("PTO_FORGE_TRACE_CACHE", "0")
    arrays = [a.copy() for a in args]
    err = None
    with emu.session() as s:
        try:
            kernel(*arrays, *extra)
        except EmulatorError as e:
            err = (e.code, e.line)
    counters = s.counters.model_dump()
    counters.pop("batched_iterations")
    return ([a.tobytes() for a in arrays], counters, [(d.severity, d.code, d.line) for d in s.diagnostics], err,
            s.kernel_args)


def _same_as_a_fresh_trace(kernel: Any, args: list[np.ndarray], extra: tuple,
                           monkeypatch: pytest.MonkeyPatch) -> tuple:
    cached = _call(kernel, args, extra, monkeypatch, True)
    fresh = _call(kernel, args, extra, monkeypatch, False)
    monkeypatch.delenv("PTO_FORGE_TRACE_CACHE", raising=False)
    assert cached == fresh
    return cached


def test_one_trace_serves_every_tile_count_bit_for_bit(traces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    n_fresh = 0
    for m, n in [(1, 1), (1, 2), (1, 8), (1, 16), (2, 3), (1, 5), (1, 16)]:
        scores = _bf16(rng.standard_normal((m, n * 64)).astype(F32) * 3)
        out = _bf16(np.zeros((m, n * 64), F32))
        _same_as_a_fresh_trace(three_pass_softmax, [scores, out], (0.0625, n), monkeypatch)
        n_fresh += 1  # the fresh trace of the comparison
        # the first call (1 tile) traces its loops rolled, and that program serves every other count
        assert len(traces) - n_fresh == 1


def test_a_derived_program_keeps_a_kernel_error(traces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The tile count runs past the scores: the device check of the rolled loop reports it, as in a fresh trace."""
    scores = _bf16(np.ones((1, 256), F32))
    out = _bf16(np.zeros((1, 256), F32))
    _call(three_pass_softmax, [scores, out], (1.0, 4), monkeypatch, True)
    got = _same_as_a_fresh_trace(three_pass_softmax, [scores, out], (1.0, 6), monkeypatch)
    assert got[3] is not None and got[3][0].startswith("EMU_")
    assert traces == ["three_pass_softmax", "three_pass_softmax"]  # the template, and the fresh comparison trace


def test_a_branch_decided_for_some_counts_only_is_traced_again(traces: list[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(3).standard_normal((16, 512)).astype(F32)
    for n in (3, 4, 8, 2):
        _same_as_a_fresh_trace(first_four, [x, np.zeros_like(x)], (n,), monkeypatch)
    # n = 3 traced; 4 derived (t < 4 in its rolled iterations 1..3); 8 traced (t < 4 differs there), and 2 derived
    # from a program whose folded branches hold for it
    own = len(traces) - 4
    assert own == 2


def test_a_parameter_read_elsewhere_is_traced_per_value(traces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(4).standard_normal((16, 512)).astype(F32)
    for n in (3, 5, 3):
        _call(reads_n_elsewhere, [x, np.zeros_like(x)], (n,), monkeypatch, True)
    assert traces == ["reads_n_elsewhere"] * 2
    y3 = _call(reads_n_elsewhere, [x, np.zeros_like(x)], (3,), monkeypatch, True)[0][1]
    y5 = _call(reads_n_elsewhere, [x, np.zeros_like(x)], (5,), monkeypatch, True)[0][1]
    assert y3 != y5


def test_counts_past_the_limit_or_not_positive_ints_are_not_derived(traces: list[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(5).standard_normal((16, 512)).astype(F32)
    monkeypatch.setattr(_trace_cache, "RETRIP_MAX", 4)
    _call(first_four, [x, np.zeros_like(x)], (3,), monkeypatch, True)
    _call(first_four, [x, np.zeros_like(x)], (2,), monkeypatch, True)  # derived
    _call(first_four, [x, np.zeros_like(x)], (6,), monkeypatch, True)  # over the limit: traced
    assert len(traces) == 2
    _call(first_four, [x, np.zeros_like(x)], (0,), monkeypatch, True)  # range(0): no iteration, its own trace
    _call(first_four, [x, np.zeros_like(x)], (True,), monkeypatch, True)  # a bool is not a count
    assert len(traces) == 4


def _sites(src: str) -> dict[str, str]:
    fdef = ast.parse(textwrap.dedent(src)).body[0]
    assert isinstance(fdef, ast.FunctionDef)
    params = [a.arg for a in fdef.args.args]
    return {ast.unparse(f.iter): p for f, p in range_sites(fdef, params, {}).items()}


@pytest.mark.parametrize("src,want", [
    ("""
     def k(x, n):
         for t in range(n):
             y = pypto.exp(x)
     """, {"range(n)": "n"}),
    ("""
     def k(x, n, m):
         for t in range(n):
             y = pypto.exp(x)
         for t in range(m):
             y = pypto.exp(x) * m
     """, {"range(n)": "n"}),
    ("""
     def k(x, n):
         n = n + 1
         for t in range(n):
             y = pypto.exp(x)
     """, {}),
    ("""
     def k(x, n):
         for t in range(n):
             y = pypto.exp(x)
         z = [i for i in range(n)]
     """, {}),
    ("""
     def k(x, n):
         for t in range(0, n):
             y = pypto.exp(x)
     """, {}),
    ("""
     def k(x, n):
         for t in range(n):
             y = helper(x, t)
     """, {}),
    ("""
     def k(x, n):
         for t in range(n):
             y = pypto.exp(x)
         print(locals())
     """, {}),
    ("""
     def k(x, n):
         for t in range(n):
             y = pypto.exp(x)
         f = sys._getframe()
     """, {}),
    ("""
     def k(x, n):
         for t in range(n):
             y = pypto.exp(x)
         g = lambda n: n
     """, {}),
])
def test_which_parameters_only_bound_range_loops(src: str, want: dict[str, str]) -> None:
    assert _sites(src) == want


def test_derived_programs_run_on_the_template_s_prepared_form(traces: list[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Preparing a program (and its loops' batch plans) is done once for every tile count, not once per count."""
    prepared: list[int] = []
    orig = _exec.prepare

    def counting(program: Any, *a: Any) -> Any:
        prepared.append(program.count_ops())
        return orig(program, *a)

    monkeypatch.setattr(_exec, "prepare", counting)
    monkeypatch.setattr(_executor, "prepare", counting)
    rng = np.random.default_rng(11)
    outs = []
    for n in (1, 4, 8, 16, 4):
        scores = _bf16(rng.standard_normal((1, n * 64)).astype(F32))
        out = _bf16(np.zeros((1, n * 64), F32))
        with emu.session():
            three_pass_softmax(scores, out, 0.5, n)
        outs.append((scores, out))
    assert traces == ["three_pass_softmax"]  # 1 tile, rolled: the program of the others
    # the template's prepared form, made on its first run and kept, is what every derived count runs on (the
    # fifth call, 4 tiles again, is a hit of a derived entry)
    assert len(prepared) == 1
    for scores, out in outs:  # and each is what a fresh trace computes
        again = _bf16(np.zeros(out.shape, F32))
        monkeypatch.setenv("PTO_FORGE_TRACE_CACHE", "0")
        with emu.session():
            three_pass_softmax(scores, again, 0.5, scores.shape[1] // 64)
        assert again.tobytes() == out.tobytes()
