"""What a kernel call leaves alive (`_trace_cache.Entry`, `JitFunction._call`).

Why: the cyclic collector is paused during a call (`_gcpause`); everything the call leaves alive is walked by the
young collection that runs when it ends, and again when it is promoted. A traced call used to keep its traced
graph (op nodes, trace tensors) and its prepared form (an `XOp`, a closure and several cells per op): ~11k objects
after attn_softmax's 16-tile call, most of the collector's work per call. Now a miss keeps only the program; the
prepared form is made and kept on the first cache hit, so repeated calls still skip preparation."""

import gc
from collections import Counter
from typing import Any

import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator import _executor
from runtime.emulator._session import Options

pypto = emu.install()


@pypto.frontend.jit
def tiles(x: pypto.Tensor([1, pypto.DYNAMIC], pypto.DT_FP32), y: pypto.Tensor([1, pypto.DYNAMIC], pypto.DT_FP32),
          n: int):
    for m in pypto.loop(1, name="M"):
        for t in range(n):
            pypto.set_vec_tile_shapes(1, 16)
            r = pypto.view(x, [1, 16], [m, t * 16], valid_shape=[1, 16])
            r = pypto.exp(pypto.mul(r, 0.5))
            pypto.assemble(r, [m, t * 16], y)


def _left_alive(call: Any) -> Counter:
    """Types of the container objects created by ``call()`` that are still alive after it."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        before = {id(o) for o in gc.get_objects(0)}
        call()
        return Counter(type(o).__name__ for o in gc.get_objects(0) if id(o) not in before)
    finally:
        if was:
            gc.enable()


def test_a_miss_keeps_the_program_only() -> None:
    x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(1, 128)
    y = np.zeros_like(x)
    with emu.session(Options(roll=False)):  # 8 unrolled tiles (rolled, the program would hold 2 copies of the body)
        tiles(x, y, 8)  # warm: imports, memo tables
        tiles._cache.clear()
        left = _left_alive(lambda: tiles(x, y, 8))
    assert left["Op"] == 8 * 4  # the cached program: view, mul, exp, assemble per tile
    for kind in ("OpNode", "Tensor", "XOp", "XRegion", "cell"):
        assert left[kind] == 0, (kind, left)
    assert left["function"] <= 2, left  # no run closure per op (a memo may hold a function or two)
    assert np.array_equal(y, np.exp(x * np.float32(0.5)))


def test_the_first_hit_prepares_once_and_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(1, 64)
    prepared: list[Any] = []
    orig = _executor.prepared_for

    def counting(program: Any, npuarch: str = "DAV_2201") -> Any:
        got = orig(program, npuarch)
        prepared.append(got)
        return got

    monkeypatch.setattr(_executor, "prepared_for", counting)
    monkeypatch.delenv("PTO_FORGE_TRACE_CACHE", raising=False)
    tiles._cache.clear()
    outs = []
    with emu.session(Options()):
        for _ in range(4):
            y = np.zeros_like(x)
            tiles(x, y, 4)
            outs.append(y)
    assert len(prepared) == 1 and prepared[0] is not None  # the miss ran without keeping one; hits share one
    e = tiles._last_entry
    assert e is not None and e.hit and e.prepared is prepared[0]
    assert all(np.array_equal(o, outs[0]) for o in outs) and np.array_equal(outs[0], np.exp(x * np.float32(0.5)))
