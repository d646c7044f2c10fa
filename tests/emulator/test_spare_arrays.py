"""Dead arrays kept for a later result of their shape (`device._env.Env.release` / `take_spare`): the same bits as
fresh arrays, and never an array something still holds.

The pattern is rms_norm's (``x * x`` dies in the sum, then ``x / rms`` makes an array of its shape); the hazard is
a dead storage key whose array a live view still shows."""

import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator.device import _env

R, C = 256, 1024  # 1 MB float32 tensors: above SPARE_MIN


def _kernels():
    pypto = emu.install()

    @pypto.frontend.jit
    def norm(x: pypto.Tensor([R, C], pypto.DT_FP32), out: pypto.Tensor([R, C], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 256)
        sq = x * x
        s = pypto.sum(sq, dim=1, keepdim=True)
        out[:] = x / pypto.sqrt(s / C + 1e-5)

    @pypto.frontend.jit
    def held(x: pypto.Tensor([R, C], pypto.DT_FP32), o1: pypto.Tensor([R, C], pypto.DT_FP32),
             o2: pypto.Tensor([R // 2, C], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 256)
        sq = x * x
        top = pypto.view(sq, [R // 2, C], [0, 0])  # a view of sq's array outlives sq's storage key
        s = pypto.sum(sq, dim=1, keepdim=True)
        o1[:] = x / s  # a result of sq's shape, made after sq died
        o2[:] = top + 1.0

    return norm, held


def _run(kernel, outs, monkeypatch, keep: bool) -> tuple[list[bytes], int]:
    monkeypatch.setattr(_env, "SPARE_MIN", _env.SPARE_MIN if keep else 1 << 62)
    taken = [0]
    orig = _env.Env.take_spare

    def counting(self, shape, dt):
        a = orig(self, shape, dt)
        taken[0] += a is not None
        return a
    monkeypatch.setattr(_env.Env, "take_spare", counting)
    x = (np.random.default_rng(0).standard_normal((R, C)) * 3).astype(np.float32)
    arrays = [np.zeros(s, np.float32) for s in outs]
    with emu.session() as s:
        kernel(x, *arrays)
    assert not [d for d in s.diagnostics if d.severity == "error"], s.diagnostics
    monkeypatch.undo()
    return [a.tobytes() for a in arrays], taken[0]


def test_a_result_is_computed_into_an_array_that_died_before(monkeypatch):
    norm, _ = _kernels()
    kept, taken = _run(norm, [(R, C)], monkeypatch, keep=True)
    fresh, none = _run(norm, [(R, C)], monkeypatch, keep=False)
    assert kept == fresh
    assert (taken, none) == (1, 0)


def test_an_array_a_live_view_shows_is_not_reused(monkeypatch):
    _, held = _kernels()
    kept, _ = _run(held, [(R, C), (R // 2, C)], monkeypatch, keep=True)
    fresh, _ = _run(held, [(R, C), (R // 2, C)], monkeypatch, keep=False)
    assert kept == fresh
    x = (np.random.default_rng(0).standard_normal((R, C)) * 3).astype(np.float32)
    assert np.frombuffer(kept[1], np.float32).reshape(R // 2, C).tobytes() == ((x * x)[: R // 2] + 1).tobytes()


@pytest.mark.parametrize("entries", [1, 3])
def test_few_arrays_within_the_arguments_bytes(entries, monkeypatch):
    monkeypatch.setattr(_env, "SPARE_ENTRIES", entries)
    env = _env.Env.__new__(_env.Env)
    env.buf, env.param_keys, env.spare, env.spare_bytes, env._arg_bytes = {}, frozenset({0}), [], 0, None
    env.buf[0] = (np.zeros(5 << 18, np.uint8), None)  # the arguments: 1.25 MB
    for k in range(1, 6):
        env.buf[k] = (np.zeros(1 << 16, np.float32), None)  # 256 KB each
    env.release([1, 2, 3, 4, 5, 99])
    assert len(env.spare) == entries and env.spare_bytes == entries << 18 <= env.arg_bytes()
    assert env.take_spare((1 << 16,), np.dtype(np.float32)) is not None
    assert env.take_spare((1 << 16,), np.dtype(np.float64)) is None and len(env.spare) == entries - 1
