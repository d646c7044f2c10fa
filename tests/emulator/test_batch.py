"""The batched fast path gives bit-identical results and counters to the per-iteration interpreter."""

import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()
F32 = np.float32
T, C = 8, 32


@pypto.frontend.jit
def ew(x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, T)):
        v = (n - i * T).min(T)
        a = pypto.view(x, [T, C], [i * T, 0], valid_shape=[v, C])
        ms = pypto.sum(a * a, -1, keepdim=True)
        pypto.assemble(pypto.exp(a) / (ms + 1.0), [i * T, 0], out)


@pypto.frontend.jit
def mm(a: pypto.Tensor([64, 32], pypto.DT_FP32), b: pypto.Tensor([32, 64], pypto.DT_FP32),
       c: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
    pypto.set_vec_tile_shapes(16, 16)
    for i in pypto.loop(4):
        at = pypto.view(a, [16, 32], [i * 16, 0])
        for j in pypto.loop(4):
            bt = pypto.view(b, [32, 16], [0, j * 16])
            pypto.assemble(pypto.matmul(at, bt, pypto.DT_FP32) * 2.0, [i * 16, j * 16], c)


@pypto.frontend.jit
def carried(x: pypto.Tensor([64, C], pypto.DT_FP32), out: pypto.Tensor([T, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    for i in pypto.loop(8):
        out[:] = out + pypto.view(x, [T, C], [i * T, 0])


def _run(kernel, args, record):
    args = [a.copy() for a in args]
    with emu.session(emu.Options(record=record)) as s:
        kernel(*args)
    return args, s.counters


@pytest.mark.parametrize("rows", [64, 61, 3])
def test_batched_elementwise_matches_per_iteration_bitwise(rows):
    x = np.random.default_rng(rows).standard_normal((rows, C)).astype(F32)
    fast, cf = _run(ew, [x, np.zeros_like(x)], record=False)
    slow, cs = _run(ew, [x, np.zeros_like(x)], record=True)  # recording disables batching
    assert fast[1].tobytes() == slow[1].tobytes()
    assert cs.batched_iterations == 0
    expect_batched = (rows // T) if rows // T >= 4 else 0
    assert cf.batched_iterations == expect_batched
    assert cf.model_dump(exclude={"batched_iterations"}) == cs.model_dump(exclude={"batched_iterations"})


def test_batched_nested_matmul_matches():
    r = np.random.default_rng(1)
    a, b = r.standard_normal((64, 32)).astype(F32), r.standard_normal((32, 64)).astype(F32)
    fast, cf = _run(mm, [a, b, np.zeros((64, 64), F32)], record=False)
    slow, cs = _run(mm, [a, b, np.zeros((64, 64), F32)], record=True)
    assert fast[2].tobytes() == slow[2].tobytes()
    np.testing.assert_allclose(fast[2], 2 * a @ b, rtol=1e-5, atol=1e-4)
    assert cf.batched_iterations == 16 and cf.matmul_flops == cs.matmul_flops


def test_loop_carried_state_is_never_batched():
    x = np.random.default_rng(2).standard_normal((64, C)).astype(F32)
    fast, cf = _run(carried, [x, np.zeros((T, C), F32)], record=False)
    assert cf.batched_iterations == 0
    np.testing.assert_allclose(fast[1], x.reshape(8, T, C).sum(0), rtol=1e-5)


def test_errors_inside_a_batch_are_reported_per_iteration():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([64, C], pypto.DT_FP32), out: pypto.Tensor([40, C], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(T, C)
        for i in pypto.loop(8):
            pypto.assemble(pypto.view(x, [T, C], [i * T, 0]) + 1.0, [i * T, 0], out)

    with pytest.raises(emu.EmulatorError) as info:
        k(np.zeros((64, C), F32), np.zeros((40, C), F32))
    assert info.value.code == "EMU_ASSEMBLE_OOB" and "loop_1=5" in info.value.message


@pypto.frontend.jit
def into_local(x: pypto.Tensor([64, C], pypto.DT_FP32), out: pypto.Tensor([64, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    t = pypto.tensor([64, C], pypto.DT_FP32, "t")
    for i in pypto.loop(8):
        pypto.assemble(pypto.view(x, [T, C], [i * T, 0]) + 1.0, [i * T, 0], t)
    pypto.set_vec_tile_shapes(64, C)
    out[:] = t * 2.0


def test_batched_assemble_into_a_fresh_local():
    x = np.random.default_rng(3).standard_normal((64, C)).astype(F32)
    fast, cf = _run(into_local, [x, np.zeros_like(x)], record=False)
    slow, cs = _run(into_local, [x, np.zeros_like(x)], record=True)
    assert fast[1].tobytes() == slow[1].tobytes()
    np.testing.assert_array_equal(fast[1], (x + 1) * 2)
    assert cf.batched_iterations == 8
    assert cf.model_dump(exclude={"batched_iterations"}) == cs.model_dump(exclude={"batched_iterations"})


@pypto.frontend.jit
def poisoned(x: pypto.Tensor([64, C], pypto.DT_FP32), out: pypto.Tensor([64, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    t = pypto.tensor([64, C], pypto.DT_FP32, "t")
    pypto.assemble(pypto.view(x, [32, C], [0, 0]), [0, 0], t)  # rows 32.. stay uninitialized
    for i in pypto.loop(8):
        pypto.assemble(pypto.view(t, [T, C], [i * T, 0]) * 1.0, [i * T, 0], out)


def test_batch_fallback_keeps_counters_exact_and_reports_the_first_bad_iteration():
    with emu.session() as s, pytest.raises(emu.EmulatorError) as info:
        poisoned(np.zeros((64, C), F32), np.zeros((64, C), F32))
    assert info.value.code == "EMU_POISON" and "loop_1=4" in info.value.message
    assert s.counters.batched_iterations == 0
    # no double counting from the abandoned batch: the per-iteration run does all 8 (poison is checked on the
    # final contents, then reported at its first write-back, iteration 4)
    assert s.counters.ops["assemble"] == 1 + 8


@pypto.frontend.jit
def padded(x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, T)):
        v = (n - i * T).min(T)
        a = pypto.view(x, [T, C], [i * T, 0], valid_shape=[v, C])
        pypto.assemble(pypto.fillpad(a * 2.0, "constant", 0.5), [i * T, 0], out)


@pytest.mark.parametrize("rows", [64, 61])
def test_batched_fillpad_matches_per_iteration(rows):
    """fillpad runs batched on full tiles; a tail tile (valid rows < 8) runs per iteration - and here makes the
    assemble leave the output, the same error both ways."""
    x = np.random.default_rng(rows).standard_normal((rows, C)).astype(F32)
    got = []
    for record in (False, True):
        out = np.zeros_like(x)
        try:
            with emu.session(emu.Options(record=record)) as s:
                padded(x, out)
            got.append((out.tobytes(), s.counters.model_dump(exclude={"batched_iterations"}), None))
        except emu.EmulatorError as e:
            got.append((None, None, (e.code, e.message)))
    assert got[0] == got[1]
    assert (got[0][2] is None) == (rows % T == 0)


@pypto.frontend.jit
def invariant_in_loop(x: pypto.Tensor([64, C], pypto.DT_FP32), w: pypto.Tensor([T, C], pypto.DT_FP32),
                      out: pypto.Tensor([64, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    for i in pypto.loop(8):
        w2 = w * 2.0  # loop-invariant: computed once by the batch, once per iteration by the interpreter
        pypto.assemble(pypto.view(x, [T, C], [i * T, 0]) + w2, [i * T, 0], out)


def test_a_loop_invariant_op_in_a_batched_loop_is_counted_every_iteration():
    x = np.random.default_rng(4).standard_normal((64, C)).astype(F32)
    w = np.random.default_rng(5).standard_normal((T, C)).astype(F32)
    fast, cf = _run(invariant_in_loop, [x, w, np.zeros_like(x)], record=False)
    slow, cs = _run(invariant_in_loop, [x, w, np.zeros_like(x)], record=True)
    assert fast[2].tobytes() == slow[2].tobytes() and cf.batched_iterations == 8
    assert cf.model_dump(exclude={"batched_iterations"}) == cs.model_dump(exclude={"batched_iterations"})


@pypto.frontend.jit
def broadcast_rows(x: pypto.Tensor([1, C], pypto.DT_FP32), out: pypto.Tensor([T, C], pypto.DT_FP32)):
    """llada2_gate_select's bias tile: one row from before the loop assembled into every row."""
    pypto.set_vec_tile_shapes(T, C)
    row = x * 2.0
    tile = pypto.tensor([T, C], pypto.DT_FP32, "tile")
    for r in range(T):
        pypto.assemble(row, [r, 0], tile)
    out[:] = tile + 1.0


@pypto.frontend.jit
def broadcast_device_loop(x: pypto.Tensor([1, C], pypto.DT_FP32), out: pypto.Tensor([T, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    for r in pypto.loop(T):
        pypto.assemble(x, [r, 0], out)


@pypto.frontend.jit
def stored_then_updated(x: pypto.Tensor([64, C], pypto.DT_FP32), acc: pypto.Tensor([T, C], pypto.DT_FP32),
                        out: pypto.Tensor([64, C], pypto.DT_FP32)):
    """The assembled value is the one an earlier iteration left in acc: not a value from before the loop."""
    pypto.set_vec_tile_shapes(T, C)
    for i in pypto.loop(8):
        pypto.assemble(acc, [i * T, 0], out)
        acc[:] = acc + pypto.view(x, [T, C], [i * T, 0])


@pytest.mark.parametrize("kernel", [broadcast_rows, broadcast_device_loop])
def test_a_value_from_before_the_loop_assembled_in_every_iteration_is_batched(kernel):
    x = np.random.default_rng(12).standard_normal((1, C)).astype(F32)
    fast, cf = _run(kernel, [x, np.zeros((T, C), F32)], record=False)
    slow, cs = _run(kernel, [x, np.zeros((T, C), F32)], record=True)
    assert fast[1].tobytes() == slow[1].tobytes()
    assert cf.batched_iterations >= T - 1  # a rolled range loop runs its first iteration unrolled
    # record=True also turns the rolling of range loops off: the rolled loop's trips are only in the fast run
    skip = {"batched_iterations", "loop_trips"} if kernel is broadcast_rows else {"batched_iterations"}
    assert cf.model_dump(exclude=skip) == cs.model_dump(exclude=skip)
    want = x * 2.0 + 1.0 if kernel is broadcast_rows else x
    np.testing.assert_array_equal(fast[1], np.broadcast_to(want, (T, C)))


def test_an_assembled_value_carried_from_the_previous_iteration_is_not_batched():
    x = np.random.default_rng(13).standard_normal((64, C)).astype(F32)
    fast, cf = _run(stored_then_updated, [x, np.zeros((T, C), F32), np.zeros((64, C), F32)], record=False)
    slow, cs = _run(stored_then_updated, [x, np.zeros((T, C), F32), np.zeros((64, C), F32)], record=True)
    assert fast[2].tobytes() == slow[2].tobytes() and cf.batched_iterations == 0
    np.testing.assert_allclose(fast[2][8:16], x[:8], rtol=1e-6)


@pypto.frontend.jit
def shifted(x: pypto.Tensor([80, C], pypto.DT_FP32), out: pypto.Tensor([80, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    for i in pypto.loop(8):
        pypto.assemble(pypto.view(x, [T, C], [i * T, 0]) * 0.5 + 1.0, [i * T + T, 0], out)


def test_an_input_that_is_also_the_output_is_not_read_ahead_of_the_writes():
    """The same array passed as x and out: each iteration reads the rows the one before wrote. The batch read
    every window first (different bits, found in session 9); it now runs per iteration."""
    x = np.random.default_rng(14).standard_normal((80, C)).astype(F32)
    got = []
    for record in (False, True):
        a = x.copy()
        with emu.session(emu.Options(record=record)) as s:
            shifted(a, a)
        got.append((a.tobytes(), s.counters))
    assert got[0][0] == got[1][0] and got[0][1].batched_iterations == 0
    want = x.copy()
    for i in range(8):
        want[i * T + T:i * T + 2 * T] = want[i * T:i * T + T] * F32(0.5) + F32(1.0)
    assert got[0][0] == want.tobytes()
    apart, cf = _run(shifted, [x, np.zeros_like(x)], record=False)  # distinct arrays: batched
    assert cf.batched_iterations == 8


@pypto.frontend.jit
def ew_sizes(x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
             out: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, T)):
        v = (n - i * T).min(T)
        a = pypto.view(x, [T, C], [i * T, 0], valid_shape=[v, C])
        pypto.assemble(pypto.exp(a) / (pypto.sum(a * a, -1, keepdim=True) + 1.0), [i * T, 0], out)


def test_remembered_windows_follow_each_calls_sizes(monkeypatch):
    """`_batch._views_full` is remembered per plan by the call's symbols, loop range and source shapes: one program
    (a DYNAMIC row count) called at sizes in a shuffled order, sizes seen before included - each call must get its own
    run and windows (a stale one would batch a tail tile or write past the rows), bit for bit the per-iteration run."""
    from runtime.emulator.device import _batch

    computed = []
    real = _batch._views_full_of
    monkeypatch.setattr(_batch, "_views_full_of", lambda *a: computed.append(a[3]) or real(*a))
    rng = np.random.default_rng(7)
    sizes = [64, 61, 33, 64, 61, 40, 33, 64]
    for rows in sizes:
        x = rng.standard_normal((rows, C)).astype(F32)
        fast, cf = _run(ew_sizes, [x, np.zeros_like(x)], record=False)
        slow, cs = _run(ew_sizes, [x, np.zeros_like(x)], record=True)
        assert fast[1].tobytes() == slow[1].tobytes(), rows
        assert cf.batched_iterations == rows // T
        assert cf.model_dump(exclude={"batched_iterations"}) == cs.model_dump(exclude={"batched_iterations"})
    # computed once per call signature the prepared form has seen: 64 (the miss's prepared form is dropped, see
    # `_trace_cache.Entry`), 61, 33, 64 again (the first hit's form is kept from here on), 40 - the later 61, 33
    # and 64 are remembered
    assert computed == [range(0, 8), range(0, 8), range(0, 5), range(0, 8), range(0, 5)]


@pypto.frontend.jit
def ew_limit(x: pypto.Tensor([64, C], pypto.DT_FP32), lim: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
             out: pypto.Tensor([64, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    n = lim.shape[0]
    for i in pypto.loop(8):
        a = pypto.view(x, [T, C], [i * T, 0], valid_shape=[(n - i * T).max(1).min(T), C])
        pypto.assemble(pypto.exp(a), [i * T, 0], out)


def test_remembered_windows_follow_a_symbol_of_another_argument():
    """The same loop range and the same source shape, but a valid extent read from another argument's size: the
    remembered windows are keyed by the call's symbols too."""
    x = np.random.default_rng(3).standard_normal((64, C)).astype(F32)
    for n in (64, 40, 64, 40, 13):
        lim = np.zeros((n, 1), F32)
        fast, cf = _run(ew_limit, [x, lim, np.zeros_like(x)], record=False)
        slow, cs = _run(ew_limit, [x, lim, np.zeros_like(x)], record=True)
        assert fast[2].tobytes() == slow[2].tobytes(), n
        assert cf.model_dump(exclude={"batched_iterations"}) == cs.model_dump(exclude={"batched_iterations"})
        assert cf.batched_iterations == (n // T if n // T >= 4 else 0), n
