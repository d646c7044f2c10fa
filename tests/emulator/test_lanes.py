"""Lanes (`device/_lanes.py`): a loop whose body holds nested loops and guards runs its iterations side by side,
bit-identical to the per-iteration interpreter (``record=True`` turns every batching off) - results, errors,
warnings, counters - and gives up, with the same results, wherever the lanes are not independent."""

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from _emucorpus import chain_kernel
from hypothesis import given, settings
from hypothesis import strategies as st
from test_batch_carried import _both, _capture, _exec_both
from test_batch_property import STEPS

import runtime.emulator as emu
from runtime.emulator.device import _lanes, execute
from runtime.emulator.device._types import Limits

pypto = emu.install()
F32 = np.float32
H, S, D, T = 6, 32, 16, 8  # heads, rows per head, head width, tile rows


@contextlib.contextmanager
def _passes() -> Iterator[list[bool]]:
    """The lane passes run inside the block: True for each pass that completed, False for each abandoned."""
    seen: list[bool] = []
    real = _lanes._one_pass

    def spy(*a: Any) -> bool:
        ok = real(*a)
        seen.append(ok)
        return ok

    _lanes._one_pass = spy
    try:
        yield seen
    finally:
        _lanes._one_pass = real


@pypto.frontend.jit
def heads(q: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), k: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), n_heads: int):
    """flash_attention_score_grad's shape: heads outside, query blocks, key blocks with a begin/end accumulator."""
    pypto.set_vec_tile_shapes(T, D)
    pypto.set_cube_tile_shapes([T, T], [D, D], [16, 16])  # nL0 a multiple of 16 (FC4001)
    s = q.shape[0] // n_heads
    for h in pypto.loop(n_heads, name="LOOP_h"):
        base = h * s
        for i in pypto.loop(s // T, name="LOOP_i"):
            qi = pypto.view(q, [T, D], [base + i * T, 0], valid_shape=[T, D])
            mq = pypto.amax(qi, -1, keepdim=True)
            acc = pypto.tensor([T, D], pypto.DT_FP32, "acc")
            for j in pypto.loop(s // T, name="LOOP_j"):
                kj = pypto.view(k, [T, D], [base + j * T, 0], valid_shape=[T, D])
                p = pypto.exp(pypto.matmul(qi, kj, pypto.DT_FP32, b_trans=True) * 0.25 - 1.0)
                c = pypto.cast(pypto.cast(pypto.matmul(p, kj, pypto.DT_FP32), pypto.DT_BF16), pypto.DT_FP32)
                if pypto.is_loop_begin(j):
                    acc[:] = c
                else:
                    acc[:] = acc + c
                if pypto.is_loop_end(j):
                    out[base + i * T:, 0:] = acc / (mq + 2.0)


def _heads_args(n_heads: int = H, s: int = S, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_heads * s, D)).astype(F32)
    k = rng.standard_normal((n_heads * s, D)).astype(F32)
    return [q, k, np.zeros_like(q)]


@pytest.mark.parametrize("n_heads,s", [(H, S), (4, 16), (9, 24), (40, 8)])
def test_heads_run_as_lanes_bit_identical(n_heads: int, s: int) -> None:
    args = _heads_args(n_heads, s)
    with _passes() as seen:
        fast, slow = _both(lambda *a: heads(*a, n_heads), args)
    assert seen and all(seen), seen
    assert fast == slow
    assert np.isfinite(np.frombuffer(fast[0][2], dtype=F32)).all()


def test_lanes_off_by_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_lanes, "ENABLED", False)
    with _passes() as seen:
        fast, slow = _both(lambda *a: heads(*a, H), _heads_args())
    assert seen == [] and fast == slow


@pypto.frontend.jit
def carried(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
            n_heads: int):
    """A running value across the heads: lane h reads what lane h - 1 wrote - not lanes."""
    pypto.set_vec_tile_shapes(T, D)
    s = x.shape[0] // n_heads
    run = pypto.tensor([T, D], pypto.DT_FP32, "run")
    run[:] = pypto.view(x, [T, D], [0, 0]) * 0.0
    for h in pypto.loop(n_heads):
        for i in pypto.loop(s // T):
            t = pypto.view(x, [T, D], [h * s + i * T, 0])
            if pypto.is_loop_begin(i):
                run[:] = run + t
            out[h * s + i * T:, 0:] = t + run


@pypto.frontend.jit
def overlapping(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
                n_heads: int):
    """Each head writes two blocks, the second over the next head's first: the write order decides the result."""
    pypto.set_vec_tile_shapes(T, D)
    for h in pypto.loop(n_heads):
        for i in pypto.loop(2):
            t = pypto.view(x, [T, D], [h * T + i * T, 0])
            if pypto.is_loop_begin(i):
                out[h * T + i * T:, 0:] = t * 2.0
            else:
                out[h * T + i * T:, 0:] = t * 3.0


@pypto.frontend.jit
def tails(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
          n_heads: int):
    """Blocks of a head that end in a partial tile: not lanes (the tile's padding is the interpreter's)."""
    pypto.set_vec_tile_shapes(T, D)
    s = x.shape[0] // n_heads
    for h in pypto.loop(n_heads):
        for i in pypto.loop(pypto.ceildiv(s, T)):
            v = (s - i * T).min(T)
            t = pypto.view(x, [T, D], [h * s + i * T, 0], valid_shape=[v, D])
            if pypto.is_loop_begin(i):  # two paths: the batch executor does not take this loop whole
                out[h * s + i * T:, 0:] = pypto.exp(t * 0.5)
            else:
                out[h * s + i * T:, 0:] = pypto.exp(t * 0.25)


def _rows(n: int, seed: int = 1) -> list[np.ndarray]:
    x = np.random.default_rng(seed).standard_normal((n, D)).astype(F32)
    return [x, np.zeros_like(x)]


@pytest.mark.parametrize("name,kernel,args,n_heads", [
    ("carried", carried, _rows(H * S), H),
    ("overlapping", overlapping, [_rows((H + 1) * T)[0], np.zeros(((H + 1) * T, D), F32)], H),
    ("tails", tails, _rows(H * 20), H),
])
def test_dependent_lanes_give_up_with_the_same_results(name: str, kernel: Any, args: list, n_heads: int) -> None:
    with _passes() as seen:
        fast, slow = _both(lambda *a: kernel(*a, n_heads), args)
    assert seen and not any(seen), (name, seen)  # tried, and abandoned
    assert fast == slow
    assert fast[2] is None


def test_tails_whole_tiles_run_as_lanes() -> None:
    """The same kernel on sizes with no partial tile runs as lanes."""
    with _passes() as seen:
        fast, slow = _both(lambda *a: tails(*a, H), _rows(H * 16))
    assert seen and all(seen)
    assert fast == slow


def test_error_in_a_later_lane_is_the_interpreters() -> None:
    """The last head's key blocks run past k: the lane pass gives up, the per-iteration run reports the error at
    its iteration, exactly as without lanes."""
    q, k, out = _heads_args()
    with _passes() as seen:
        fast, slow = _both(lambda *a: heads(*a, H), [q, k[: (H - 1) * S + T], out])
    assert seen and not any(seen)
    assert fast[2] is not None and fast[2][0] == "EMU_VIEW_OOB"
    assert fast == slow


def test_step_limits_write_masks_and_poison_checks_are_the_interpreters() -> None:
    """At the device: whichever op or iteration a step limit falls on, the error, warnings, counters, written
    arguments and write masks are the per-iteration run's; with write tracking and per-iteration poison checks."""
    [(program, args, options)] = _capture(lambda *a: heads(*a, H), _heads_args())
    full = execute(program, [a.copy() for a in args], options)
    assert full.error is None
    total = full.counters["loop_trips"]["LOOP_h"] + 400
    stops = set()
    with _passes() as seen:
        for limit in [*range(0, 40), *range(40, total, 37)]:
            o = dataclasses.replace(options, limits=Limits(max_steps=limit), track_writes=True)
            fast, slow = _exec_both(program, args, o)
            assert fast == slow, limit
            if fast[1] is not None:
                stops.add((fast[1].line, fast[1].message))
        for o in (dataclasses.replace(options, track_writes=True),
                  dataclasses.replace(options, track_writes=True, poison_check="iteration")):
            fast, slow = _exec_both(program, args, o)
            assert fast == slow and fast[1] is None
    assert len(stops) > 10 and any(seen)


def test_abandoned_pass_leaves_the_outputs_as_the_interpreter_does() -> None:
    """The last head's second block runs past ``out``: the pass has written every head's first block when it gives
    up; those writes are undone, and the per-iteration run stops at the error with exactly its own writes."""
    q, k, out = _heads_args()
    short = np.full(((H - 1) * S + T, D), 7.0, F32)
    with _passes() as seen:
        fast, slow = _both(lambda *a: heads(*a, H), [q, k, short])
    assert seen and not any(seen)
    assert fast[2] is not None and fast[2][0] == "EMU_ASSEMBLE_OOB"
    assert fast == slow
    assert out is not None


def test_a_nested_loop_the_batch_takes_whole_is_left_to_it() -> None:
    """sigmoid's shape - rows outside, a row's tiles inside, no carry: the batch executor runs each row's tiles at
    once (32 tiles in one numpy op), which beats walking the tiles for a few rows of lanes."""

    @pypto.frontend.jit
    def rows(x: pypto.Tensor([pypto.DYNAMIC, 4 * D], pypto.DT_FP32),
             out: pypto.Tensor([pypto.DYNAMIC, 4 * D], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(T, D)
        for r in pypto.loop(x.shape[0] // T):
            for c in pypto.loop(4):
                out[r * T:, c * D:] = pypto.sigmoid(pypto.view(x, [T, D], [r * T, c * D]))

    x = np.random.default_rng(5).standard_normal((6 * T, 4 * D)).astype(F32)
    with _passes() as seen:
        fast, slow = _both(rows, [x, np.zeros_like(x)])
    assert seen == [] and fast == slow


# ---- property: random bodies under a head loop with an accumulating inner loop ------------------------------

TEMPLATE = '''
import pypto

@pypto.frontend.jit
def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), w: pypto.Tensor([32, 32], pypto.DT_FP32),
      out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), n_heads: int):
    pypto.set_vec_tile_shapes(8, 32)
    pypto.set_cube_tile_shapes([8, 8], [32, 32], [32, 32])
    s = x.shape[0] // n_heads
    for h in pypto.loop(n_heads):
        acc = pypto.tensor([8, 32], pypto.DT_FP32, "acc")
        for i in pypto.loop(s // 8):
            t = pypto.view(x, [8, 32], [h * s + i * 8, 0])
{body}
            if pypto.is_loop_begin(i):
                acc[:] = t
            else:
                acc[:] = acc + t
            if pypto.is_loop_end(i):
                out[h * 8:, 0:] = acc * 0.5
'''


def _random_kernel(tmp_path: Any, steps: list[int]) -> Any:
    return chain_kernel(tmp_path, TEMPLATE, [STEPS[s] for s in steps], 12,
                        f"lanes_{'_'.join(map(str, steps)) or 'id'}")


@settings(max_examples=25, deadline=None, derandomize=True)
@given(steps=st.lists(st.integers(0, len(STEPS) - 1), min_size=0, max_size=4),
       n_heads=st.sampled_from([4, 5, 7]), s=st.sampled_from([8, 16, 32]))
def test_random_bodies_as_lanes_equal_the_interpreter(tmp_path_factory: Any, steps: list[int], n_heads: int,
                                                       s: int) -> None:
    k = _random_kernel(tmp_path_factory.mktemp("k"), steps)
    r = np.random.default_rng(len(steps) * 100 + n_heads * 10 + s)
    x = r.standard_normal((n_heads * s, 32)).astype(F32)
    w = (r.standard_normal((32, 32)) * 0.2).astype(F32)
    fast, slow = _both(lambda *a: k(*a, n_heads), [x, w, np.zeros((n_heads * 8, 32), F32)])
    assert fast == slow, steps


def test_the_random_template_runs_as_lanes(tmp_path: Any) -> None:
    """The property's template is one lanes take (so the property compares lanes, not two interpreter runs)."""
    k = _random_kernel(tmp_path, [0, 1])
    x = np.random.default_rng(0).standard_normal((5 * 16, 32)).astype(F32)
    with _passes() as seen:
        fast, slow = _both(lambda *a: k(*a, 5), [x, np.eye(32, dtype=F32), np.zeros((40, 32), F32)])
    assert seen and all(seen) and fast == slow


@pypto.frontend.jit
def state_per_head(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
                   last: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), n_heads: int):
    """gated_delta_rule's shape: a state made per head with `full` (the same for every lane, no batched run),
    updated in place by each block of the head, then stored."""
    pypto.set_vec_tile_shapes(T, D)
    s = x.shape[0] // n_heads
    for h in pypto.loop(n_heads):
        state = pypto.full([T, D], 0.5, dtype=pypto.DT_FP32)
        for i in pypto.loop(s // T):
            t = pypto.view(x, [T, D], [h * s + i * T, 0])
            state[:] = state * 0.75 + pypto.exp(t * 0.125)
        pypto.assemble(state, [h * T, 0], last)


def test_a_state_made_with_full_runs_as_lanes() -> None:
    x = np.random.default_rng(6).standard_normal((H * S, D)).astype(F32)
    with _passes() as seen:
        fast, slow = _both(lambda *a: state_per_head(*a, H), [x, np.zeros((H * T, D), F32)])
    assert seen and all(seen) and fast == slow


def test_large_tiles_are_left_per_iteration() -> None:
    """Views of 512 x 1024 float32 (2 MB): each op's arithmetic outweighs its Python - no lanes."""

    @pypto.frontend.jit
    def big(x: pypto.Tensor([pypto.DYNAMIC, 1024], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 1024], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 1024)
        for h in pypto.loop(x.shape[0] // 1024):
            for i in pypto.loop(2):
                t = pypto.view(x, [512, 1024], [h * 1024 + i * 512, 0])
                if pypto.is_loop_begin(i):
                    out[h * 1024 + i * 512:, 0:] = t * 2.0
                else:
                    out[h * 1024 + i * 512:, 0:] = t * 3.0

    x = np.random.default_rng(7).standard_normal((4 * 1024, 1024)).astype(F32)
    with _passes() as seen:
        fast, slow = _both(big, [x, np.zeros_like(x)])
    assert seen == [] and fast == slow
