"""Loops that carry state: their leading write-free ops run batched (`device/_carry.py`), bit-identical to the
per-iteration interpreter (``record=True`` turns every batching off) - results, errors, warnings, counters."""

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from _emucorpus import chain_kernel
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime.emulator as emu
from runtime.emulator import _executor
from runtime.emulator.device import ExecOptions, execute
from runtime.emulator.device import _exec as dexec
from runtime.emulator.device._types import Limits

pypto = emu.install()
F32 = np.float32
T, C = 8, 32


@contextlib.contextmanager
def _spy() -> Iterator[list[int]]:
    """The loop runs that took the batched prefix inside the block (one entry per run: its iteration count)."""
    seen: list[int] = []
    real = dexec.start_prefix

    def spy(*a: Any) -> Any:
        got = real(*a)
        if got is not None:
            seen.append(got.kcount)
        return got

    dexec.start_prefix = spy
    try:
        yield seen
    finally:
        dexec.start_prefix = real


@pytest.fixture
def prefixes() -> Iterator[list[int]]:
    with _spy() as seen:
        yield seen


def _both(kernel: Any, args: list[np.ndarray], **kw: Any) -> list[tuple]:
    """(argument bytes, counters but batched_iterations, error, warnings) of the fast run (batch, carried prefix,
    lanes) and of the per-iteration run (``record=True``)."""
    got = []
    for record in (False, True):
        a = [x.copy() for x in args]
        err = None
        with emu.session(emu.Options(record=record)) as s:
            try:
                kernel(*a, **kw)
            except emu.EmulatorError as exc:
                err = (exc.code, exc.message, exc.line)
            warns = [(d.code, d.message, d.line) for d in s.diagnostics if d.severity == "warning"]
        got.append(([x.tobytes() for x in a], s.counters.model_dump(exclude={"batched_iterations"}), err, warns))
    return got


# ---- kernels ------------------------------------------------------------------------------------------------

@pypto.frontend.jit
def run_max_sum(x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32), mx: pypto.Tensor([T, C], pypto.DT_FP32),
                sm: pypto.Tensor([T, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, C)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, T)):
        v = (n - i * T).min(T)
        a = pypto.view(x, [T, C], [i * T, 0], valid_shape=[v, C])
        e = pypto.exp(a * 0.5)
        s = pypto.sum(e, -1, keepdim=True)
        mx[:] = pypto.maximum(mx, e)
        sm[:] = sm + s


@pypto.frontend.jit
def tiles_softmax(scores: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_BF16),
                  out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_BF16), scale: float, n_tiles: int):
    """Three passes over 64-wide tiles with a running max and a running sum in Python ``range`` loops (rolled
    into device loops): the shape of the gym's attention softmax."""
    rows = scores.shape[0]
    for m in pypto.loop(rows, name="M"):
        gmax = pypto.tensor([1], pypto.DT_FP32, "gmax")
        for t in range(n_tiles):
            pypto.set_vec_tile_shapes(1, 64)
            r = pypto.mul(pypto.cast(pypto.view(scores, [1, 64], [m, t * 64], valid_shape=[1, 64]),
                                     pypto.DT_FP32), scale)
            tm = pypto.amax(r, dim=-1, keepdim=True)
            if t == 0:
                gmax[:] = tm
            else:
                gmax[:] = pypto.maximum(gmax, tm)
        tsum = pypto.tensor([1], pypto.DT_FP32, "tsum")
        for t in range(n_tiles):
            pypto.set_vec_tile_shapes(1, 64)
            r = pypto.mul(pypto.cast(pypto.view(scores, [1, 64], [m, t * 64], valid_shape=[1, 64]),
                                     pypto.DT_FP32), scale)
            ts = pypto.sum(pypto.exp(pypto.sub(r, gmax)), dim=-1, keepdim=True)
            if t == 0:
                tsum[:] = ts
            else:
                tsum[:] = pypto.add(tsum, ts)
        for t in range(n_tiles):
            pypto.set_vec_tile_shapes(1, 64)
            r = pypto.mul(pypto.cast(pypto.view(scores, [1, 64], [m, t * 64], valid_shape=[1, 64]),
                                     pypto.DT_FP32), scale)
            r = pypto.div(pypto.exp(pypto.sub(r, gmax)), tsum)
            pypto.assemble(pypto.cast(r, pypto.DT_BF16), [m, t * 64], out)


@pypto.frontend.jit
def acc_then_store(x: pypto.Tensor([64, C], pypto.DT_FP32), acc: pypto.Tensor([T, C], pypto.DT_FP32),
                   out: pypto.Tensor([40, C], pypto.DT_FP32)):
    """The running sum is stored every iteration: the store of iteration 5 leaves ``out`` (EMU_ASSEMBLE_OOB)."""
    pypto.set_vec_tile_shapes(T, C)
    for i in pypto.loop(8):
        e = pypto.exp(pypto.view(x, [T, C], [i * T, 0]) * 0.25)
        acc[:] = acc + e
        pypto.assemble(acc * 1.0, [i * T, 0], out)


@pypto.frontend.jit
def guarded(x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32), out: pypto.Tensor([T, C], pypto.DT_FP32)):
    """is_loop_begin / is_loop_end guards after the prefix (several control paths)."""
    pypto.set_vec_tile_shapes(T, C)
    acc = pypto.tensor([T, C], pypto.DT_FP32, "acc")
    n = x.shape[0]
    for i in pypto.loop(n // T, name="g", idx_name="i"):
        e = pypto.exp(pypto.view(x, [T, C], [i * T, 0]) * 0.5) + 1.0
        if pypto.is_loop_begin(i):
            acc[:] = e
        else:
            acc[:] = pypto.maximum(acc, e) - e * 0.125
        if pypto.is_loop_end(i):
            out[:] = acc


@pypto.frontend.jit
def nested_suffix(x: pypto.Tensor([64, C], pypto.DT_FP32), acc: pypto.Tensor([T, C], pypto.DT_FP32),
                  out: pypto.Tensor([64, C], pypto.DT_FP32)):
    """A nested loop after the carried op (it runs per iteration, reading the prefix's value)."""
    pypto.set_vec_tile_shapes(T, C)
    for i in pypto.loop(8):
        e = pypto.sqrt(pypto.abs(pypto.view(x, [T, C], [i * T, 0])))
        acc[:] = acc * 0.5 + e
        for j in pypto.loop(2):
            pypto.assemble(pypto.view(e, [4, C], [j * 4, 0]) + acc[j * 4:j * 4 + 4, :], [i * T + j * 4, 0], out)


@pypto.frontend.jit
def self_feeding(x: pypto.Tensor([80, C], pypto.DT_FP32), acc: pypto.Tensor([T, C], pypto.DT_FP32)):
    """The body writes the tensor its leading ops read (x): nothing may run ahead of the writes."""
    pypto.set_vec_tile_shapes(T, C)
    for i in pypto.loop(8):
        e = pypto.view(x, [T, C], [i * T, 0]) * 0.5
        acc[:] = acc + e
        pypto.assemble(acc * 1.0, [i * T + T, 0], x)


# ---- tests --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rows", [64, 61, 40])
def test_running_max_and_sum_match_the_per_iteration_run(rows: int, prefixes: list[int]) -> None:
    r = np.random.default_rng(rows)
    x = r.standard_normal((rows, C)).astype(F32)
    fast, slow = _both(run_max_sum, [x, np.full((T, C), -1e30, F32), np.zeros((T, 1), F32)])
    assert fast == slow
    assert fast[2] is None
    assert prefixes == [rows // T]  # the full tiles; a tail tile (61 rows) runs per iteration
    e = np.exp(x[: rows // T * T] * F32(0.5))
    if rows % T == 0:
        np.testing.assert_allclose(np.frombuffer(fast[0][1], F32).reshape(T, C),
                                   e.reshape(-1, T, C).max(0), rtol=1e-6)


def test_no_prefix_when_there_are_fewer_than_four_iterations(prefixes: list[int]) -> None:
    x = np.random.default_rng(3).standard_normal((24, C)).astype(F32)
    fast, slow = _both(run_max_sum, [x, np.zeros((T, C), F32), np.zeros((T, 1), F32)])
    assert fast == slow and prefixes == []


@pytest.mark.parametrize("width", [512, 1024, 64 * 5])
def test_rolled_tile_passes_match_the_per_iteration_run(width: int, prefixes: list[int]) -> None:
    import ml_dtypes

    r = np.random.default_rng(width)
    x = (r.standard_normal((3, width)) * 4).astype(ml_dtypes.bfloat16)
    fast, slow = _both(tiles_softmax, [x, np.zeros_like(x)], scale=0.7, n_tiles=width // 64)
    assert fast == slow and fast[2] is None
    # pass 1 (running max) and pass 2 (running sum) of every row; pass 3 is independent (the batch executor's)
    assert prefixes == [width // 64 - 1] * 6
    got = np.frombuffer(fast[0][1], ml_dtypes.bfloat16).reshape(3, width).astype(F32)
    s = x.astype(F32) * F32(0.7)
    want = np.exp(s - s.max(1, keepdims=True))
    np.testing.assert_allclose(got, want / want.sum(1, keepdims=True), rtol=2e-2, atol=1e-3)


def test_an_error_in_the_suffix_has_the_per_iteration_message_and_counters(prefixes: list[int]) -> None:
    x = np.random.default_rng(5).standard_normal((64, C)).astype(F32)
    fast, slow = _both(acc_then_store, [x, np.zeros((T, C), F32), np.zeros((40, C), F32)])
    assert fast == slow
    assert fast[2] is not None and fast[2][0] == "EMU_ASSEMBLE_OOB" and "loop_1=5" in fast[2][1]
    assert prefixes == [8]


def test_guards_after_the_prefix(prefixes: list[int]) -> None:
    x = np.random.default_rng(6).standard_normal((48, C)).astype(F32)
    fast, slow = _both(guarded, [x, np.zeros((T, C), F32)])
    assert fast == slow and fast[2] is None and prefixes == [6]


def test_a_nested_loop_in_the_suffix(prefixes: list[int]) -> None:
    x = np.random.default_rng(7).standard_normal((64, C)).astype(F32)
    fast, slow = _both(nested_suffix, [x, np.zeros((T, C), F32), np.zeros((64, C), F32)])
    assert fast == slow and fast[2] is None and prefixes == [8]


def test_a_body_that_writes_what_its_leading_ops_read_is_not_batched(prefixes: list[int]) -> None:
    x = np.random.default_rng(8).standard_normal((80, C)).astype(F32)
    fast, slow = _both(self_feeding, [x, np.zeros((T, C), F32)])
    assert fast == slow and prefixes == []
    # each iteration reads the rows the one before wrote
    xs = x.copy()
    acc = np.zeros((T, C), F32)
    for i in range(8):
        acc = acc + xs[i * T:i * T + T] * F32(0.5)
        xs[i * T + T:i * T + 2 * T] = acc
    assert np.frombuffer(fast[0][0], F32).reshape(80, C).tobytes() == xs.tobytes()


def _capture(kernel: Any, args: list[np.ndarray], **kw: Any) -> list[tuple[Any, list[np.ndarray], ExecOptions]]:
    """The device calls of one kernel call: (program, input arrays, options)."""
    calls = []

    def grab(program: Any, a: list[np.ndarray], options: ExecOptions, **k: Any) -> Any:
        calls.append((program, [x.copy() for x in a], options))
        return execute(program, a, options, **k)

    with _executor.use(grab), emu.session():
        try:
            kernel(*[x.copy() for x in args], **kw)
        except emu.EmulatorError:
            pass  # the calls are compared, each in both modes
    return calls


def _exec_both(program: Any, args: list[np.ndarray], options: ExecOptions) -> list[tuple]:
    out = []
    for record in (False, True):
        a = [x.copy() for x in args]
        res = execute(program, a, dataclasses.replace(options, record=record, on_record=None))
        c = dict(res.counters)
        c.pop("batched_iterations")
        out.append(([x.tobytes() for x in a], res.error, res.warnings, c, res.written,
                    None if res.write_masks is None else {k: m.tobytes() for k, m in res.write_masks.items()}))
    return out


def test_every_step_limit_stops_at_the_same_op_with_the_same_counters(prefixes: list[int]) -> None:
    """Steps are counted per iteration and per prefix op, as the per-iteration run counts them: whichever op the
    limit falls on, the error (message, line) and the counters are the same."""
    x = np.random.default_rng(9).standard_normal((64, C)).astype(F32)
    [(program, args, options)] = _capture(run_max_sum, [x, np.zeros((T, C), F32), np.zeros((T, 1), F32)])
    full = execute(program, [a.copy() for a in args], options)
    assert full.error is None
    total = 1 + 8 * (1 + 8)  # the loop, then per iteration: itself and its ops (view, mul, exp, sum, maximum ...)
    stops = set()
    for limit in range(0, total + 3):
        o = dataclasses.replace(options, limits=Limits(max_steps=limit))
        fast, slow = _exec_both(program, args, o)
        assert fast == slow, limit
        if fast[1] is not None:
            stops.add((fast[1].line, fast[1].message))
    assert len(stops) > 8  # the limit fell on many different ops and iterations
    assert prefixes  # and the prefix was batched in the runs that got far enough


def test_write_masks_and_poison_checks_are_the_per_iteration_ones(prefixes: list[int]) -> None:
    x = np.random.default_rng(10).standard_normal((64, C)).astype(F32)
    [(program, args, options)] = _capture(acc_then_store, [x, np.zeros((T, C), F32), np.zeros((40, C), F32)])
    for o in (dataclasses.replace(options, track_writes=True),
              dataclasses.replace(options, track_writes=True, poison_check="iteration")):
        fast, slow = _exec_both(program, args, o)
        assert fast == slow
    assert prefixes


# ---- property: random carried loops ---------------------------------------------------------------------------

STEPS = [
    "t = t * 1.5 + 0.25",
    "t = pypto.exp(t * 0.1)",
    "t = t - pypto.amax(t, -1, keepdim=True)",
    "t = pypto.cast(pypto.cast(t, pypto.DT_BF16), pypto.DT_FP32)",
    "t = pypto.where(t > 0.0, t, t * 0.5)",
    "t = pypto.sqrt(pypto.abs(t)) * pypto.rsqrt(pypto.abs(t) + 1.0)",
    "t = pypto.matmul(t, w, pypto.DT_FP32)",
    "t = t + pypto.sum(t, 0)",
    "t = t * acc",  # reads the carried value: the prefix ends here
    "acc[:] = pypto.maximum(acc, t)",  # a write mid-body: the prefix ends before it
    "t = pypto.softmax(t, -1)",
]

CARRIES = [
    "acc[:] = acc + t",
    "acc[:] = pypto.maximum(acc, t * 0.5)",
    "acc[:] = acc * 0.5 + pypto.exp(t * 0.01)",
]

TEMPLATE = '''
import pypto

@pypto.frontend.jit
def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), w: pypto.Tensor([32, 32], pypto.DT_FP32),
      acc: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    pypto.set_cube_tile_shapes([8, 8], [32, 32], [32, 32])
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 8)):
        v = (n - i * 8).min(8)
        t = pypto.view(x, [8, 32], [i * 8, 0], valid_shape=[v, 32])
{body}
'''


@settings(max_examples=30, deadline=None, derandomize=True)
@given(steps=st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=5),
       carry=st.integers(0, len(CARRIES) - 1), store=st.booleans(), rows=st.sampled_from([32, 40, 61, 96]))
def test_random_carried_loops_match_the_per_iteration_run(tmp_path_factory: Any, steps: list[int], carry: int,
                                                          store: bool, rows: int) -> None:
    lines = [STEPS[s] for s in steps] + [CARRIES[carry]]
    if store:
        lines.append("pypto.assemble(t + acc, [i * 8, 0], out)")
    k = chain_kernel(tmp_path_factory.mktemp("k"), TEMPLATE, lines, 8,
                     f"c_{'_'.join(map(str, steps))}_{carry}_{int(store)}")
    r = np.random.default_rng(len(steps) * 1000 + carry * 100 + rows)
    x = r.standard_normal((rows, 32)).astype(F32)
    w = (r.standard_normal((32, 32)) * 0.2).astype(F32)
    args = [x, w, (r.standard_normal((8, 32)) * 0.1).astype(F32), np.zeros_like(x)]
    for program, a, options in _capture(k, args):
        fast, slow = _exec_both(program, a, dataclasses.replace(options, track_writes=True))
        assert fast == slow, lines


# ---- every corpus kernel --------------------------------------------------------------------------------------

def test_every_corpus_kernel_runs_alike_with_and_without_batching(corpus_module: Any, prefixes: list[int]) -> None:
    """Every corpus kernel call (loops, carried accumulators, guards, tails, bf16/fp16, errors): the fast run
    (batch + carried prefixes) and the per-iteration run give the same bytes, error, warnings, counters, masks."""
    from test_corpus import CASES, _run_case

    seen = 0

    def both(program: Any, args: list[np.ndarray], options: ExecOptions, **kw: Any) -> Any:
        nonlocal seen
        fast, slow = _exec_both(program, args, dataclasses.replace(options, track_writes=True))
        assert fast == slow, program.kernel
        seen += 1
        return execute(program, args, options, **kw)

    for module, case_name in CASES:
        case = getattr(corpus_module(module), case_name)()
        with _executor.use(both), emu.session() as s:
            _run_case(case, s, emu)
    assert seen >= 40, seen
    assert len(prefixes) >= 2, prefixes  # the corpus has carried loops whose prefix is batched



@pypto.frontend.jit
def shifted_copy(x: pypto.Tensor([80, C], pypto.DT_FP32), acc: pypto.Tensor([T, C], pypto.DT_FP32),
                 out: pypto.Tensor([80, C], pypto.DT_FP32)):
    """Reads x, writes out: called with the same array for both, the body writes what its leading ops read."""
    pypto.set_vec_tile_shapes(T, C)
    for i in pypto.loop(8):
        e = pypto.view(x, [T, C], [i * T, 0]) * 0.5
        acc[:] = acc + e
        pypto.assemble(acc * 1.0, [i * T + T, 0], out)


def test_arguments_sharing_memory_are_not_batched_ahead_of_the_writes(prefixes: list[int]) -> None:
    x = np.random.default_rng(11).standard_normal((80, C)).astype(F32)
    got = []
    for record in (False, True):
        a, acc = x.copy(), np.zeros((T, C), F32)
        with emu.session(emu.Options(record=record)) as s:
            shifted_copy(a, acc, a)
        got.append((a.tobytes(), acc.tobytes(), s.counters.model_dump(exclude={"batched_iterations"})))
    assert got[0] == got[1]
    assert prefixes == []
    want, acc = x.copy(), np.zeros((T, C), F32)
    for i in range(8):  # each iteration reads the rows the one before wrote
        acc = acc + want[i * T:i * T + T] * F32(0.5)
        want[i * T + T:i * T + 2 * T] = acc
    assert got[0][0] == want.tobytes()
    # apart, the same kernel batches its prefix
    shifted_copy(x.copy(), np.zeros((T, C), F32), np.zeros_like(x))
    assert prefixes == [8]


@pypto.frontend.jit
def alias_outside(x: pypto.Tensor([80, C], pypto.DT_FP32), acc: pypto.Tensor([T, C], pypto.DT_FP32)):
    """The body writes x through a view made before the loop (another storage key, the same memory)."""
    pypto.set_vec_tile_shapes(T, C)
    xv = pypto.view(x, [80, C], [0, 0])
    for i in pypto.loop(8):
        e = pypto.view(x, [T, C], [i * T, 0]) * 0.5
        acc[:] = acc + e
        pypto.assemble(acc * 1.0, [i * T + T, 0], xv)


def test_a_body_that_writes_what_its_leading_ops_read_through_an_alias_is_not_batched(prefixes: list[int]) -> None:
    x = np.random.default_rng(11).standard_normal((80, C)).astype(F32)
    fast, slow = _both(alias_outside, [x, np.zeros((T, C), F32)])
    assert fast == slow
    assert prefixes == []
