"""The trace cache (`runtime/emulator/_trace_cache.py`): a kernel called again with the same call signature
reuses its program, and only when a new trace could not differ - results, warnings and records stay those of
re-tracing. Every test counts real traces and compares against the cache switched off."""

import dataclasses
from typing import Any

import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()
F32 = np.float32

SCALE = 2.0
TILES = [8, 16]
OFFSET = {"v": 1.0}


@pypto.frontend.jit
def scaled(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32),
           bias: float = 0.0):
    pypto.set_vec_tile_shapes(TILES[0], TILES[1])
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 8)):
        t = pypto.view(x, [8, 16], [i * 8, 0], valid_shape=[(n - i * 8).min(8), 16])
        pypto.assemble(t * SCALE + OFFSET["v"] + bias, [i * 8, 0], y)


def _run(kernel: Any, rows: int = 16, **kw: Any) -> tuple[np.ndarray, list, dict, list]:
    x = np.arange(rows * 16, dtype=F32).reshape(rows, 16) / 7
    y = np.zeros_like(x)
    with emu.session() as s:
        kernel(x, y, **kw)
    return y, [d.model_dump() for d in s.diagnostics], s.counters.model_dump(), s.kernel_args


def test_same_signature_traces_once_and_gives_the_same_everything(traces: list[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    first = _run(scaled)
    again = _run(scaled)
    assert traces == ["scaled"]
    assert again[0].tobytes() == first[0].tobytes() and again[1:] == first[1:]
    monkeypatch.setenv("PTO_FORGE_TRACE_CACHE", "0")
    off = _run(scaled)
    assert traces == ["scaled", "scaled"]
    assert off[0].tobytes() == first[0].tobytes() and off[1:] == first[1:]


def test_other_arguments_trace_again(traces: list[str]) -> None:
    _run(scaled)
    _run(scaled, bias=0.5)
    y_pos, *_ = _run(scaled, bias=0.0)
    y_neg, *_ = _run(scaled, bias=-0.0)  # equal as floats, not as bits: its own program
    assert traces == ["scaled"] * 3
    assert y_pos.tobytes() == y_neg.tobytes()
    _run(scaled, bias=0.5)
    assert len(traces) == 3


@pypto.frontend.jit
def static_rows(x: pypto.Tensor([pypto.STATIC, 16], pypto.DT_FP32), y: pypto.Tensor([pypto.STATIC, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 8)):
        t = pypto.view(x, [8, 16], [i * 8, 0], valid_shape=[(n - i * 8).min(8), 16])
        pypto.assemble(t * SCALE, [i * 8, 0], y)


N_ROWS = pypto.frontend.dynamic("N_ROWS")


@pypto.frontend.jit
def named_rows(x: pypto.Tensor([N_ROWS, ...], pypto.DT_BF16), y: pypto.Tensor([N_ROWS, ...], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(8, 16)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 8)):
        t = pypto.view(x, [8, 16], [i * 8, 0], valid_shape=[(n - i * 8).min(8), 16])
        pypto.assemble(pypto.cast(pypto.cast(t, pypto.DT_FP32) * 1.25, pypto.DT_BF16), [i * 8, 0], y)


def _run_bf16(kernel: Any, rows: int, cols: int = 16) -> tuple[np.ndarray, list, dict, list]:
    import ml_dtypes

    x = (np.arange(rows * cols, dtype=F32).reshape(rows, cols) / 7).astype(ml_dtypes.bfloat16)
    y = np.zeros_like(x)
    with emu.session() as s:
        kernel(x, y)
    return y, [d.model_dump() for d in s.diagnostics], s.counters.model_dump(), s.kernel_args


def test_a_dynamic_axis_shares_the_program_over_its_extents(traces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A DYNAMIC (or named dynamic) axis is a symbol in the trace: calls that differ only in its extent reuse one
    program - the tail iteration, the counters and the kernel_args record are those of a fresh trace, bit for bit.
    A STATIC axis (also one ``...`` makes static) and the rank stay part of the key."""
    rows = [16, 24, 3, 1, 40, 16]
    cached = [_run(scaled, rows=r) for r in rows]
    bf = [_run_bf16(named_rows, rows=r) for r in rows]
    assert traces == ["scaled", "named_rows"]
    monkeypatch.setenv("PTO_FORGE_TRACE_CACHE", "0")
    for r, c, b in zip(rows, cached, bf, strict=True):
        fresh = _run(scaled, rows=r)
        assert c[0].tobytes() == fresh[0].tobytes() and c[1:] == fresh[1:]
        fresh = _run_bf16(named_rows, rows=r)
        assert b[0].tobytes() == fresh[0].tobytes() and b[1:] == fresh[1:]
    assert [c[3][0]["args"][0]["shape"] for c in cached] == [[r, 16] for r in rows]
    monkeypatch.delenv("PTO_FORGE_TRACE_CACHE")
    del traces[:]
    for r in (16, 24, 16):
        _run(static_rows, rows=r)
    assert traces == ["static_rows"] * 2
    _run_bf16(named_rows, rows=8, cols=16)
    with pytest.raises(emu.EmulatorError, match="runs past the tensor extent 8"):  # ``...`` made axis 1 static:
        _run_bf16(named_rows, rows=8, cols=8)  # another program (traced again), whose view runs past the extent
    assert traces[2:] == ["named_rows"]


def test_an_argument_of_another_rank_raises_as_before(traces: list[str]) -> None:
    _run(scaled, rows=16)
    x = np.ones((2, 8, 16), F32)
    with pytest.raises(emu.EmulatorError, match="number of dimensions"), emu.session():
        scaled(x, np.zeros_like(x))
    assert traces == ["scaled", "scaled"]


def test_a_changed_global_traces_again(traces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    base, *_ = _run(scaled)
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    y, *_ = _run(scaled)
    assert len(traces) == 2 and not np.array_equal(y, base)
    OFFSET["v"] = 2.0  # a dict read by the body, changed in place
    try:
        y2, *_ = _run(scaled)
    finally:
        OFFSET["v"] = 1.0
    assert len(traces) == 3 and not np.array_equal(y2, y)
    TILES[0] = 4  # a list read by the body, changed in place: other tile shapes
    try:
        _run(scaled)
    finally:
        TILES[0] = 8
    assert len(traces) == 4
    monkeypatch.setitem(globals(), "SCALE", 2.0)
    again, *_ = _run(scaled)  # back to the first environment: its program is still cached
    assert len(traces) == 4 and again.tobytes() == base.tobytes()


@pypto.frontend.function
def helper(t: pypto.Tensor(), out: pypto.Tensor()):
    pypto.assemble(t * SCALE, [0, 0], out)


@pypto.frontend.jit
def via_helper(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    helper(pypto.view(x, [8, 16], [0, 0]), y)


def plain_factor() -> float:
    return SCALE + 1


@pypto.frontend.jit
def via_plain(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    pypto.assemble(pypto.view(x, [8, 16], [0, 0]) * plain_factor(), [0, 0], y)


@pytest.mark.parametrize("kernel", [via_helper, via_plain], ids=["frontend.function", "plain function"])
def test_globals_read_by_helpers_count(kernel: Any, traces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """(A kernel whose trace calls a ``@pypto.frontend.function`` helper is traced once more on its second call: its
    key then reads every name the body mentions - the helper shares the namespace - and the first trace, keyed
    without the names the body binds itself, is not kept; `_trace_cache.bound_reads`.)"""
    first = 2 if kernel is via_helper else 1
    a = _run(kernel, rows=8)[0]
    _run(kernel, rows=8)
    _run(kernel, rows=8)
    assert len(traces) == first
    monkeypatch.setitem(globals(), "SCALE", 5.0)
    b = _run(kernel, rows=8)[0]
    assert len(traces) == first + 1 and not np.array_equal(a, b)


@dataclasses.dataclass
class Cfg:
    scale: float


CFG = Cfg(2.0)


@pypto.frontend.jit
def via_config(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32), cfg: Any = None):
    pypto.set_vec_tile_shapes(8, 16)
    pypto.assemble(pypto.view(x, [8, 16], [0, 0]) * (cfg or CFG).scale, [0, 0], y)


def test_config_objects_count_by_their_attributes(traces: list[str]) -> None:
    _run(via_config, rows=8)
    _run(via_config, rows=8, cfg=Cfg(2.0))
    _run(via_config, rows=8, cfg=Cfg(2.0))
    assert len(traces) == 2
    CFG.scale = 4.0
    try:
        _run(via_config, rows=8)
    finally:
        CFG.scale = 2.0
    assert len(traces) == 3


class Opaque:
    __slots__ = ("scale",)

    def __init__(self) -> None:
        self.scale = 2.0


OPAQUE = Opaque()


@pypto.frontend.jit
def via_opaque(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    pypto.assemble(pypto.view(x, [8, 16], [0, 0]) * OPAQUE.scale, [0, 0], y)


@pypto.frontend.jit(use_cache=False)
def uncached(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    pypto.assemble(pypto.view(x, [8, 16], [0, 0]) * 2.0, [0, 0], y)


LOG: list[int] = []


@pypto.frontend.jit
def mutates_its_globals(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    LOG.append(1)
    pypto.assemble(pypto.view(x, [8, 16], [0, 0]) * 2.0, [0, 0], y)


@pypto.frontend.jit
def prints(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    print("tracing")
    pypto.assemble(pypto.view(x, [8, 16], [0, 0]) * 2.0, [0, 0], y)


@pytest.mark.parametrize("kernel", [via_opaque, uncached, mutates_its_globals, prints],
                         ids=["opaque object", "use_cache=False", "mutates a global", "print"])
def test_what_cannot_be_fingerprinted_is_traced_every_time(kernel: Any, traces: list[str]) -> None:
    for _ in range(3):
        _run(kernel, rows=8)
    assert len(traces) == 3


def test_session_options_and_module_scope_are_part_of_the_key(traces: list[str]) -> None:
    x = np.ones((8, 16), F32)
    for opts in (emu.Options(compat="head"), emu.Options(compat="0.2.0"), emu.Options(record=True, compat="head"),
                 emu.Options(compat="head")):
        with emu.session(opts):
            via_plain(x, np.zeros_like(x))
    assert len(traces) == 3
    with pypto.options(vec_tile_shapes=[4, 16]):
        via_plain(x, np.zeros_like(x))
    assert len(traces) == 4


@pypto.frontend.jit
def warns(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    for i in pypto.loop(1, unroll_list=[4, 2]):
        pypto.assemble(pypto.view(x, [8, 16], [i * 8, 0]) * 2.0, [i * 8, 0], y)


def test_a_hit_emits_the_trace_warnings_again(traces: list[str]) -> None:
    first = _run(warns, rows=8)
    assert any(d["code"] == "EMU_UNROLL_LIST" for d in first[1])
    assert _run(warns, rows=8)[1:] == first[1:]
    x = np.ones((8, 16), F32)
    with emu.session() as s:  # twice in one session: de-duplicated as for two traces
        warns(x, np.zeros_like(x))
        warns(x, np.zeros_like(x))
    assert [d.code for d in s.diagnostics] == [d["code"] for d in first[1]]
    assert len(traces) == 1


@pypto.frontend.jit
def fails_to_trace(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    pypto.assemble(pypto.view(x, [8, 16], [0, 0]) * undefined_name, [0, 0], y)  # noqa: F821


def test_a_failed_trace_is_not_cached(traces: list[str]) -> None:
    for _ in range(2):
        with pytest.raises(emu.EmulatorError, match="undefined_name"):
            _run(fails_to_trace, rows=8)
    assert len(traces) == 2


def test_program_always_traces_afresh(traces: list[str]) -> None:
    """`JitFunction.program` hands the caller a program it may change: never the cached one."""
    x = np.ones((16, 16), F32)
    a = scaled.program(x, np.zeros_like(x))
    b = scaled.program(x, np.zeros_like(x))
    scaled(x, np.zeros_like(x))
    assert a is not b and scaled.last_program is not a and len(traces) == 3


def test_threads_share_a_kernel_and_get_the_same_results(traces: list[str]) -> None:
    import concurrent.futures

    ref = _run(scaled, rows=16)[0]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda r: _run(scaled, rows=r)[0], [16, 24, 16, 32, 16, 24] * 3))
    assert {o.shape[0] for o in outs} == {16, 24, 32}
    assert all(o.tobytes() == ref.tobytes() for o in outs if o.shape[0] == 16)


ACT = np.exp


@pypto.frontend.jit
def via_library(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    t = pypto.view(x, [8, 16], [0, 0])
    r = pypto.exp(t) if ACT is np.exp else pypto.sigmoid(t)
    pypto.assemble(r, [0, 0], y)


def test_library_objects_remembered_by_identity_still_count(traces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`_trace_cache._remember`: library functions, ufuncs and modules fingerprint by identity through a memo; a
    name (or an attribute of a library module) re-bound to another such object is another key."""
    from runtime.emulator import _trace_cache

    a = _run(via_library, rows=8)[0]
    _run(via_library, rows=8)
    assert len(traces) == 1
    assert any(v is np.exp for v, _ in _trace_cache._ID_MEMO.values())
    monkeypatch.setitem(globals(), "ACT", np.tanh)  # another ufunc, remembered as well
    b = _run(via_library, rows=8)[0]
    assert len(traces) == 2 and not np.array_equal(a, b)
    monkeypatch.setattr(pypto, "exp", pypto.sigmoid)  # an attribute chain on the library module, re-bound
    monkeypatch.setitem(globals(), "ACT", np.exp)
    c = _run(via_library, rows=8)[0]
    assert len(traces) == 3 and np.array_equal(c, b)  # exp now is sigmoid: the sigmoid result, traced again
    monkeypatch.undo()
    d = _run(via_library, rows=8)[0]
    assert len(traces) == 3 and d.tobytes() == a.tobytes()  # the first environment again: its program


def test_a_name_bound_nowhere_is_its_own_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    """A body's local (looked up in the environment, found nowhere) has one constant fingerprint, equal to no value's:
    not even to that of the sentinel's own contents."""
    from runtime.emulator import _trace_cache

    reads = _trace_cache.Reads(("t_local",), ())
    fp = _trace_cache.env_fingerprint
    none = fp(reads, {}, None)
    assert none == fp(reads, {}, None)
    assert none != fp(reads, {"t_local": _trace_cache._MISSING[0]}, None)
    assert none != fp(reads, {"t_local": tuple(list(_trace_cache._MISSING))}, None)  # equal contents, another tuple
    assert none != fp(reads, {"t_local": None}, None)
