"""Results written over a dead operand (`device._k_math.scratch`): the same bits as a fresh result, and never over
an operand that is still read, viewed, held under another key or a kernel argument.

Why these cases: an elementwise op may write its result over its operand only when nothing can observe the
operand any more - the liveness drop says no later op reads its key, and the reference count says no view,
no other storage key and no record holds the array. Each way of still observing it is one test here; the bits
are compared with the plain ufunc on specials, subnormals and broadcasts."""

from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

import runtime.emulator as emu
import runtime.emulator.device._prepare  # noqa: F401 - registers the op kinds
from runtime.emulator._enums import DataType
from runtime.emulator._numerics import cast_array
from runtime.emulator.device import _k_math
from runtime.emulator.device._env import Env
from runtime.emulator.device._k_math import BINARY, BINARY_OUT, UNARY, UNARY_OUT
from runtime.emulator.device._kreg import KINDS
from runtime.emulator.device._types import ExecOptions

F32 = np.float32


def _specials(dt: type, n: int = 2048) -> np.ndarray:
    info = np.finfo(dt)
    vals = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, info.max, -info.max, info.tiny, -info.tiny,
            info.smallest_subnormal, -info.smallest_subnormal, 88.7, -88.7, 0.5, 2.0, 1e-30, 3.0]
    rng = np.random.default_rng(3)
    return np.concatenate([np.array(vals, dtype=dt), (rng.standard_normal(n - len(vals)) * 20).astype(dt)])


def _env(free: tuple[int, ...], params: frozenset[int] = frozenset()) -> Env:
    env = Env(ExecOptions())
    env.node = SimpleNamespace(free=free, file=None, line=None, name="op")
    env.param_keys = params
    return env


def _binary(fn: str, *, scalar=None, b: int | None = 2, odt: str = "float32"):
    p = {"a": 1, "b": b, "out": 3, "fn": fn, "alpha": None, "scalar": scalar, "pad_a": 0, "pad_b": 0, "odt": odt}
    return KINDS["binary"].build(p, SimpleNamespace(types=(("float32", 2),)), None)


def _unary(fn: str, odt: str = "float32"):
    p = {"a": 1, "out": 3, "fn": fn, "arg": None, "compute_float": False, "odt": odt}
    return KINDS["unary"].build(p, SimpleNamespace(), None)


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _addr(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def test_the_interpreter_tells_a_sole_array_from_a_held_one() -> None:
    assert _k_math._SOLE is not None  # else no result is ever written over an operand (correct, but slow)


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("name", sorted(BINARY_OUT))
def test_binary_result_over_a_dead_operand_has_the_plain_bits(name: str, batched: bool) -> None:
    x = _specials(F32).reshape(32, 64)
    y = _specials(F32)[::-1].copy().reshape(32, 64)
    with np.errstate(all="ignore"):
        want = BINARY[name](x, y)
    env = _env(free=(1,))
    env.buf[1], env.buf[2] = (x.copy(), x.shape), (y, y.shape)  # only the buffer holds the operand
    addr = _addr(env.buf[1][0])
    run, brun = _binary(name)
    with np.errstate(all="ignore"):
        (brun if batched else run)(env)
    got = env.buf[3][0]
    assert _addr(got) == addr  # written over the dead operand
    assert got.dtype == want.dtype and _bits(got) == _bits(want)


@pytest.mark.parametrize("name", sorted(UNARY_OUT))
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_unary_result_over_a_dead_operand_has_the_plain_bits(name: str, dt: type) -> None:
    x = _specials(dt).reshape(16, 128)
    with np.errstate(all="ignore"):
        want = UNARY[name](x)
    env = _env(free=(1,))
    env.buf[1] = (x.copy(), x.shape)
    addr = _addr(env.buf[1][0])
    _, brun = _unary(name, odt=np.dtype(dt).name)
    brun(env)
    got = env.buf[3][0]
    assert _addr(got) == addr
    assert got.dtype == want.dtype and _bits(got) == _bits(want)


def _operand_kept(env: Env, run, a: np.ndarray, keep: bytes) -> None:
    run(env)
    assert not np.shares_memory(env.buf[3][0], a)
    assert a.tobytes() == keep


@pytest.mark.parametrize("case", ["live", "param", "viewed", "two_keys", "broadcast", "wider_result", "view"])
def test_an_operand_that_can_still_be_observed_is_never_written(case: str) -> None:
    x = np.arange(1, 65, dtype=F32).reshape(8, 8)
    a = x.copy()
    keep = a.tobytes()
    env = _env(free=(1,) if case != "live" else (), params=frozenset({1}) if case == "param" else frozenset())
    env.buf[1], env.buf[2] = (a, a.shape), (x, x.shape)
    run, _ = _binary("mul")
    held = None
    if case == "viewed":
        held = a[2:]  # a live view under another key: writing a would change it
        env.buf[4] = (held, held.shape)
    elif case == "two_keys":
        env.buf[4] = (a, a.shape)
    elif case == "broadcast":
        a = x[:1].copy()
        keep = a.tobytes()
        env.buf[1] = (a, a.shape)  # (1, 8) * (8, 8): the result does not fit the operand
    elif case == "wider_result":
        run, _ = _binary("mul", scalar=np.float64(3.0), b=None, odt="float32")  # f32 * f64 -> f64 in numpy 2
    elif case == "view":
        a = np.arange(1, 129, dtype=F32).reshape(16, 8)[::2]  # does not own its memory
        keep = a.tobytes()
        env.buf[1] = (a, a.shape)
    _operand_kept(env, run, a, keep)
    if held is not None:
        assert held.tobytes() == keep[2 * 8 * 4:]


def test_a_16_bit_operand_computes_in_its_own_float32_copy() -> None:
    with np.errstate(all="ignore"):
        x = _specials(F32).astype(np.float16).reshape(32, 64)
        y = _specials(F32)[::-1].astype(np.float16).reshape(32, 64)
    env = _env(free=())
    env.buf[1], env.buf[2] = (x, x.shape), (y, y.shape)
    _, brun = _binary("add", odt="float16")
    with np.errstate(all="ignore"):
        brun(env)
        want = (x.astype(F32) + y.astype(F32)).astype(np.float16)
    assert _bits(env.buf[3][0]) == _bits(want)
    _, ubrun = _unary("exp", odt="float16")
    with np.errstate(all="ignore"):
        ubrun(env)
        assert _bits(env.buf[3][0]) == _bits(np.exp(x.astype(F32)).astype(np.float16))


@pytest.mark.parametrize("src,dst", [(DataType.DT_FP16, DataType.DT_FP32), (DataType.DT_BF16, DataType.DT_FP32),
                                     (DataType.DT_FP32, DataType.DT_DOUBLE)])
def test_a_widening_cast_is_one_new_array(src: DataType, dst: DataType) -> None:
    np_src = {DataType.DT_FP16: np.float16, DataType.DT_BF16: ml_dtypes.bfloat16, DataType.DT_FP32: F32}[src]
    with np.errstate(all="ignore"):
        x = _specials(F32).astype(np_src)
    got = cast_array(x, src, dst)
    assert not np.shares_memory(got, x)
    assert _bits(got) == _bits(x.astype(np.float32).astype(got.dtype))


pypto = emu.install()
T, H = 4, 256


@pypto.frontend.jit
def chain(x: pypto.Tensor([64, H], pypto.DT_FP16), z: pypto.Tensor([64, H], pypto.DT_FP16),
          out: pypto.Tensor([64, H], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(T, H)
    for i in pypto.loop(16):
        a = pypto.cast(pypto.view(x, [T, H], [i * T, 0]), pypto.DT_FP32)
        b = pypto.cast(pypto.view(z, [T, H], [i * T, 0]), pypto.DT_FP32)
        s = pypto.sigmoid(pypto.add(a, pypto.mul(b, 0.1)))
        pypto.assemble(pypto.cast(pypto.exp(s) * s, pypto.DT_FP16), [i * T, 0], out)


@pytest.mark.parametrize("record", [False, True])
def test_a_kernel_chain_gives_the_bits_of_fresh_results(record: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    x, z = (rng.standard_normal((64, H)) * 4).astype(np.float16), (rng.standard_normal((64, H)) * 4).astype(np.float16)

    def run() -> bytes:
        out = np.zeros_like(x)
        with emu.session(emu.Options(record=record)):
            chain(x, z, out)
        return out.tobytes()

    fast = run()
    monkeypatch.setattr(_k_math, "_SOLE", None)  # never over an operand: every result a fresh array
    assert run() == fast


# ---- batched results computed into the window of the assemble that consumes them (`_batch._placement`) ----

from runtime.emulator.device import _batch  # noqa: E402

B, D = 16, 128


@pypto.frontend.jit
def tiles(x: pypto.Tensor([64, 4 * D], pypto.DT_FP32), out: pypto.Tensor([64, 4 * D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(B, D)
    for i in pypto.loop(4):
        for j in pypto.loop(4):
            t = pypto.view(x, [B, D], [i * B, j * D])
            pypto.assemble(pypto.sigmoid(t), [i * B, j * D], out)
            pypto.assemble(pypto.exp(t) * t, [i * B, j * D], out)


@pypto.frontend.jit
def tiles_local(x: pypto.Tensor([64, D], pypto.DT_FP32), out: pypto.Tensor([64, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(B // 4, D)
    acc = pypto.tensor([64, D], pypto.DT_FP32)
    for i in pypto.loop(16):
        t = pypto.view(x, [B // 4, D], [i * (B // 4), 0])
        pypto.assemble(pypto.sqrt(pypto.abs(t)) + t, [i * (B // 4), 0], acc)
    for i in pypto.loop(16):
        pypto.assemble(pypto.view(acc, [B // 4, D], [i * (B // 4), 0]) * 2.0, [i * (B // 4), 0], out)


def _run_kernel(kernel, x: np.ndarray, *, record: bool = False, **opts) -> tuple[bytes, object]:
    out = np.zeros_like(x)
    with emu.session(emu.Options(record=record, **opts)) as s:
        kernel(x, out)
    return out.tobytes(), s.counters


def _count_placed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    hits = [0]
    orig = _batch._same_window

    def counted(a: np.ndarray, b: np.ndarray) -> bool:
        same = orig(a, b)
        hits[0] += same
        return same

    monkeypatch.setattr(_batch, "_same_window", counted)
    return hits


@pytest.mark.parametrize("kernel", [tiles, tiles_local])
def test_a_result_computed_into_its_assemble_window_has_the_bits_of_the_copy(
        kernel, monkeypatch: pytest.MonkeyPatch) -> None:
    x = (np.random.default_rng(11).standard_normal((64, 4 * D if kernel is tiles else D)) * 30).astype(F32)
    x.reshape(-1)[:7] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-40, 88.8]
    slow, cs = _run_kernel(kernel, x, record=True)  # op by op: no batch, no placement
    hits = _count_placed(monkeypatch)
    fast, cf = _run_kernel(kernel, x)
    assert hits[0] > 0 and fast == slow
    assert cf.model_dump(exclude={"batched_iterations"}) == cs.model_dump(exclude={"batched_iterations"})
    monkeypatch.setattr(_batch, "_placement", lambda b, asm: lambda shape, dt: None)
    assert _run_kernel(kernel, x)[0] == fast  # batched, every result copied


def test_a_batch_that_falls_back_after_placing_leaves_the_per_iteration_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    x = (np.random.default_rng(12).standard_normal((64, 4 * D)) * 3).astype(F32)
    slow, _ = _run_kernel(tiles, x, record=True)
    calls = [0]

    def poisoned_once(a: np.ndarray) -> int:  # the first batched write-back "carries poison": fall back
        calls[0] += 1
        return 1 if calls[0] == 1 else 0

    monkeypatch.setattr(_batch, "is_poison", poisoned_once)
    hits = _count_placed(monkeypatch)
    fast, _ = _run_kernel(tiles, x)
    # the first batch placed its sigmoid in the output, then fell back: the per-iteration run rewrote it; the
    # later batches (outer iterations 1-3) placed and kept theirs
    assert calls[0] > 1 and hits[0] > 0 and fast == slow


def test_nothing_is_placed_when_the_first_poisoned_write_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    x = (np.random.default_rng(13).standard_normal((64, 4 * D))).astype(F32)
    hits = _count_placed(monkeypatch)
    fast, _ = _run_kernel(tiles, x, poison_check="iteration")
    assert hits[0] == 0 and fast == _run_kernel(tiles, x, record=True)[0]
