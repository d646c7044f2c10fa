"""A batched run in passes (`_batch.PASS_BYTES`): the same bits, counters and errors as one pass and as the
per-iteration interpreter, whatever the pass size - including a pass that falls back after earlier passes ran."""

import os
from types import SimpleNamespace

import numpy as np
import pytest
from _emucorpus import chain_kernel
from hypothesis import given, settings
from hypothesis import strategies as st
from test_batch_property import STEPS, TEMPLATE

import runtime.emulator as emu
from runtime.emulator.device import _batch

pypto = emu.install()
F32 = np.float32
T, C = 8, 32
TILE = T * C * 4  # one view tile as float32: PASS_BYTES = n * TILE gives passes of max(4, n) iterations


def _run(kernel, args, *, record=False, pass_bytes=0, monkeypatch):
    monkeypatch.setattr(_batch, "PASS_BYTES", pass_bytes)
    args = [a.copy() for a in args]
    err = None
    with emu.session(emu.Options(record=record)) as s:
        try:
            kernel(*args)
        except emu.EmulatorError as e:
            err = (e.code, e.message)
    return [a.tobytes() for a in args], s.counters, err


def _same(a, b):
    """Outputs, error and counters equal (the batch counter aside)."""
    assert a[0] == b[0] and a[2] == b[2]
    assert a[1].model_dump(exclude={"batched_iterations"}) == b[1].model_dump(exclude={"batched_iterations"})


def test_pass_sizes(monkeypatch):
    plan = _batch.BatchPlan(items=[], produced=set(), invariant_reads=set())
    assert _batch._pass_iterations(plan, 13) == 13  # no view: one pass
    if "PTO_FORGE_BATCH_PASS" not in os.environ:
        assert _batch.PASS_BYTES == 1 << 20
    view = SimpleNamespace(kind="view", params={"shape": [T, C]})
    wide = SimpleNamespace(kind="view", params={"shape": [T, 4 * C]})
    plan.items = [view, SimpleNamespace(kind="unary", params={})]
    monkeypatch.setattr(_batch, "PASS_BYTES", 8 * TILE)
    assert _batch._pass_iterations(plan, 100) == 8
    plan.items.append(wide)  # the largest view tile decides
    assert _batch._pass_iterations(plan, 100) == _batch._MIN_BATCH
    monkeypatch.setattr(_batch, "PASS_BYTES", 0)
    assert _batch._pass_iterations(plan, 100) == 100


@settings(max_examples=20, deadline=None, derandomize=True)
@given(steps=st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=4),
       rows=st.sampled_from([96, 104, 125]), per=st.sampled_from([1, 5]))
def test_passes_equal_one_pass_and_the_interpreter(tmp_path_factory, steps, rows, per):
    k = chain_kernel(tmp_path_factory.mktemp("k"), TEMPLATE, [STEPS[s] for s in steps], 8,
                     f"k_{'_'.join(map(str, steps))}")
    r = np.random.default_rng(rows + per)
    x = r.standard_normal((rows, 32)).astype(F32)
    w = (r.standard_normal((32, 32)) * 0.2).astype(F32)
    args = [x, w, np.zeros_like(x)]
    with pytest.MonkeyPatch.context() as mp:
        passes = _run(k, args, pass_bytes=per * TILE, monkeypatch=mp)
        one = _run(k, args, pass_bytes=0, monkeypatch=mp)
        slow = _run(k, args, record=True, monkeypatch=mp)
    _same(passes, one)
    _same(passes, slow)
    assert passes[2] is None and passes[1].batched_iterations == one[1].batched_iterations == rows // 8


@pypto.frontend.jit
def overflows(x: pypto.Tensor([96, C], pypto.DT_FP32), out: pypto.Tensor([72, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    for i in pypto.loop(12):
        pypto.assemble(pypto.exp(pypto.view(x, [T, C], [i * T, 0])) + 1.0, [i * T, 0], out)


def test_a_pass_that_falls_back_after_others_ran(monkeypatch):
    """Iteration 9 writes past the output: passes 0-3 and 4-7 run batched, the pass of 8-11 falls back and the
    per-iteration run reports iteration 9 - with the outputs and counters of a run without passes."""
    x = np.random.default_rng(0).standard_normal((96, C)).astype(F32)
    args = [x, np.zeros((72, C), F32)]
    passes = _run(overflows, args, pass_bytes=TILE, monkeypatch=monkeypatch)
    one = _run(overflows, args, pass_bytes=0, monkeypatch=monkeypatch)
    slow = _run(overflows, args, record=True, monkeypatch=monkeypatch)
    assert passes[2][0] == "EMU_ASSEMBLE_OOB" and "loop_1=9" in passes[2][1]
    _same(passes, one)
    _same(passes, slow)
    assert (passes[1].batched_iterations, one[1].batched_iterations) == (8, 0)
    out = np.frombuffer(passes[0][1], F32).reshape(72, C)
    np.testing.assert_array_equal(out, (np.exp(x[:72]) + 1.0).astype(F32))


@pypto.frontend.jit
def used_after(x: pypto.Tensor([104, C], pypto.DT_FP16), out: pypto.Tensor([104, C], pypto.DT_FP16),
               last: pypto.Tensor([T, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    for i in pypto.loop(13):
        t = pypto.cast(pypto.view(x, [T, C], [i * T, 0]), pypto.DT_FP32)
        s = pypto.sigmoid(t * 0.5) + pypto.sum(t, -1, keepdim=True)
        pypto.assemble(pypto.cast(s, pypto.DT_FP16), [i * T, 0], out)
    last[:] = s * 2.0  # the last iteration's tile, after the loop


def test_the_last_pass_leaves_the_loops_values(monkeypatch):
    x = np.random.default_rng(1).standard_normal((104, C)).astype(np.float16)
    args = [x, np.zeros_like(x), np.zeros((T, C), F32)]
    passes = _run(used_after, args, pass_bytes=TILE, monkeypatch=monkeypatch)  # passes of 4, 4 and 5
    one = _run(used_after, args, pass_bytes=0, monkeypatch=monkeypatch)
    slow = _run(used_after, args, record=True, monkeypatch=monkeypatch)
    _same(passes, one)
    _same(passes, slow)
    assert passes[2] is None and passes[1].batched_iterations == 13
    t = x[96:].astype(F32)
    want = (1.0 / (1.0 + np.exp(-(t * F32(0.5)))) + t.sum(-1, keepdims=True, dtype=F32)) * F32(2.0)
    np.testing.assert_allclose(np.frombuffer(passes[0][2], F32).reshape(T, C), want, rtol=1e-5, atol=1e-5)
