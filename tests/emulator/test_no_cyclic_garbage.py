"""A kernel call leaves no cyclic garbage (`device._prepare._liveness`, `device._promote.declared_dtypes`).

Why: the cyclic collector is paused during a call (`_gcpause`) and switched on when it ends; its next young
collection then walks every container object the call left in a reference cycle. A recursive closure in the
liveness analysis kept a list per storage key in such a cycle: ~1000 objects on attn_softmax's 16-tile call,
~2 ms of collection per traced call. Everything a call frees must be freed by reference counting."""

import gc

import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator._session import Options

pypto = emu.install()


@pypto.frontend.jit
def nested(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_BF16), y: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(8, 16)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 8)):
        for j in range(2):
            t = pypto.view(x, [4, 16], [i * 8 + j * 4, 0], valid_shape=[4, 16])
            r = pypto.cast(pypto.exp(pypto.cast(t, pypto.DT_FP32)), pypto.DT_BF16)
            pypto.assemble(r, [i * 8 + j * 4, 0], y)


@pytest.mark.parametrize("npuarch", ["DAV_2201", "DAV_3510"])
def test_a_traced_call_leaves_no_cycles(npuarch: str) -> None:
    import ml_dtypes

    x = (np.arange(32 * 16, dtype=np.float32).reshape(32, 16) / 100).astype(ml_dtypes.bfloat16)
    y = np.zeros_like(x)
    with emu.session(Options(npuarch=npuarch)):
        nested(x, y)  # warm: imports, tables
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        nested._cache.clear()
        with emu.session(Options(npuarch=npuarch)):
            nested(x, y)  # traced, lowered, prepared and run
        gc.collect()
        found = sorted({type(o).__name__ for o in gc.garbage})
        n = len(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    # a traced loop and its index symbol refer to each other (two small objects per loop of a dropped graph)
    assert found in ([], ["LoopInfo", "SymbolicScalar"]) and n <= 4
    assert np.array_equal(y.astype(np.float32), np.exp(x.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32))
