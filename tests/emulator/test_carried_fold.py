"""A running fold run as one ``ufunc.accumulate`` (`device/_carry.Fold`): ``acc[:] = f(acc, y_t)`` over the
iterations of a loop gives the bits, counters and diagnostics of the same kernel traced unrolled (one op per
iteration, the reference) - on data chosen to expose any reassociation (magnitudes 1e-8 .. 1e8, so that a pairwise
or blocked sum differs from the sequential one), NaN and poison payloads, signed zeros and infinities."""

from typing import Any

import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator import Options
from runtime.emulator._errors import EmulatorError
from runtime.emulator.device import _carry

pypto = emu.install()
F32 = np.float32
W = 32


@pypto.frontend.jit
def running(x: pypto.Tensor([8, pypto.DYNAMIC], pypto.DT_FP32), out: pypto.Tensor([8, 1], pypto.DT_FP32),
            n: int, op: int):
    """acc = f(acc, y_t) for t in 1..n-1 (acc = y_0 first), y_t a row sum of tile t - or, for maximum / minimum,
    a row max (NaN payloads and signed zeros decide which operand wins)."""
    pypto.set_vec_tile_shapes(8, W)
    acc = pypto.tensor([8, 1], pypto.DT_FP32, "acc")
    for t in range(n):
        tile = pypto.view(x, [8, W], [0, t * W])
        if op >= 3:
            s = pypto.amax(tile, -1, keepdim=True)
        else:
            s = pypto.sum(tile, -1, keepdim=True)
        if t == 0:
            acc[:] = s
        elif op == 0:
            acc[:] = pypto.add(acc, s)
        elif op == 1:
            acc[:] = pypto.sub(acc, s)
        elif op == 2:
            acc[:] = pypto.mul(acc, s)
        elif op == 3:
            acc[:] = pypto.maximum(acc, s)
        else:
            acc[:] = pypto.minimum(acc, s)
    pypto.assemble(acc, [0, 0], out)


@pypto.frontend.jit
def running_flat(x: pypto.Tensor([1, pypto.DYNAMIC], pypto.DT_FP32), out: pypto.Tensor([1], pypto.DT_FP32), n: int):
    """attn_softmax's form: a [1] accumulator against a [1, 1] tile maximum (rank padding)."""
    pypto.set_vec_tile_shapes(1, W)
    acc = pypto.tensor([1], pypto.DT_FP32, "acc")
    for t in range(n):
        tm = pypto.amax(pypto.view(x, [1, W], [0, t * W]), dim=-1, keepdim=True)
        if t == 0:
            acc[:] = tm
        else:
            acc[:] = pypto.add(acc, tm)
    out[:] = acc


def _data(kind: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((8, n * W)).astype(F32)
    if kind == "magnitudes":  # a sequential sum and any reassociated one differ
        x *= (10.0 ** rng.integers(-8, 9, size=x.shape)).astype(F32)
    elif kind == "specials":
        flat = x.reshape(-1)
        idx = rng.choice(flat.size, size=flat.size // 10, replace=False)
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=F32)
        flat[idx] = specials[rng.integers(0, len(specials), size=idx.size)]
        poison = np.array([0x7FE50000, 0xFFE50000, 0x7FC00001], dtype=np.uint32).view(F32)
        flat[idx[: idx.size // 3]] = poison[rng.integers(0, 3, size=idx.size // 3)]
    elif kind == "ones":  # products stay finite; a running product of ~1s
        x = (1.0 + x * 1e-3).astype(F32)
    return x


def _run(kernel: Any, x: np.ndarray, out_shape: tuple, extra: tuple, roll: bool) -> tuple:
    kernel._cache.clear()
    out = np.zeros(out_shape, F32)
    err = None
    with emu.session(Options(roll=roll)) as s:
        try:
            kernel(x.copy(), out, *extra)
        except EmulatorError as e:
            err = (e.code, e.line)
    counters = s.counters.model_dump()
    counters.pop("batched_iterations")
    return out.tobytes(), counters, [(d.severity, d.code, d.line) for d in s.diagnostics], err


@pytest.fixture
def folds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many iterations each fold ran (the reference, unrolled, has none)."""
    seen: list[int] = []
    orig = _carry.Prefixed.fold_rest

    def counting(self: Any, *a: Any) -> int:
        done = orig(self, *a)
        seen.append(done)
        return done

    monkeypatch.setattr(_carry.Prefixed, "fold_rest", counting)
    return seen


@pytest.mark.parametrize("op", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("kind,n", [("magnitudes", 64), ("specials", 40), ("ones", 33), ("magnitudes", 5)])
def test_a_running_fold_is_the_unrolled_sequence_bit_for_bit(op: int, kind: str, n: int, folds: list[int]) -> None:
    x = _data("ones" if op == 2 and kind == "magnitudes" else kind, n, seed=op * 100 + n)
    rolled = _run(running, x, (8, 1), (n, op), True)
    assert folds and folds[-1] == n - 2  # iterations 1..n-1 are the loop; its first ran op by op
    assert rolled == _run(running, x, (8, 1), (n, op), False)


@pytest.mark.parametrize("n", [5, 17, 300])
def test_the_rank_padded_form_of_attn_softmax_folds_too(n: int, folds: list[int]) -> None:
    x = _data("magnitudes", n, seed=n)[:1]
    rolled = _run(running_flat, x, (1,), (n,), True)
    assert folds and folds[-1] == n - 2
    assert rolled == _run(running_flat, x, (1,), (n,), False)


def test_a_sequential_sum_is_what_the_data_tells_apart() -> None:
    """The magnitudes data do separate a sequential float32 sum from numpy's pairwise one (else the tests above
    could not see a fold computed by ``reduce`` instead of ``accumulate``)."""
    x = _data("magnitudes", 64, seed=64)
    y = x.reshape(8, 64, W).sum(-1, dtype=F32).T  # [64, 8]: one row sum per iteration
    assert np.add.accumulate(y, axis=0)[-1].tobytes() != np.add.reduce(y, axis=0).tobytes()
