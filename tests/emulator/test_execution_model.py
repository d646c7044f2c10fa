"""Design point 1: the device's execution model (trace once per control path, run per iteration)."""

import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()
F32 = np.float32


def _x(shape, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(F32)


@pypto.frontend.jit
def stale(x: pypto.Tensor([16, 8], pypto.DT_FP32), init: pypto.Tensor([4, 8], pypto.DT_FP32),
          out: pypto.Tensor([4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    acc = init
    for i in pypto.loop(4):
        acc = acc + x[i * 4:(i + 1) * 4, :]
    out[:] = acc * 1.0


def test_rebinding_inside_loop_is_not_loop_carried_and_warns():
    x, init = _x((16, 8)), _x((4, 8), 1)
    out = np.zeros((4, 8), F32)
    with emu.session() as s:
        stale(x, init, out)
    np.testing.assert_array_equal(out, init + x[12:16])  # initial + last slice, not the sum
    assert any(d.code == "EMU_STALE_REBIND" for d in s.warnings)


@pypto.frontend.jit
def carried(x: pypto.Tensor([16, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    for i in pypto.loop(4):
        out[:] = out + x[i * 4:(i + 1) * 4, :]


def test_slice_assign_accumulates_across_iterations():
    x = _x((16, 8))
    out = np.ones((4, 8), F32)
    carried(x, out)
    np.testing.assert_allclose(out, 1 + x.reshape(4, 4, 8).sum(0), rtol=1e-6)


@pypto.frontend.jit
def begin_end(x: pypto.Tensor([16, 8], pypto.DT_FP32), acc: pypto.Tensor([4, 8], pypto.DT_FP32),
              first: pypto.Tensor([4, 8], pypto.DT_FP32), last: pypto.Tensor([4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    for i in pypto.loop(1, 4):
        t = x[i * 4:(i + 1) * 4, :]
        if pypto.is_loop_begin(i):
            acc[:] = t * 1.0
            first[:] = t * 1.0
        else:
            acc[:] = acc + t
        if pypto.is_loop_end(i):
            last[:] = t * 1.0


def test_is_loop_begin_end_pick_the_right_iterations():
    x = _x((16, 8))
    acc, first, last = (np.zeros((4, 8), F32) for _ in range(3))
    begin_end(x, acc, first, last)
    np.testing.assert_array_equal(first, x[4:8])  # loop starts at 1
    np.testing.assert_array_equal(last, x[12:16])
    np.testing.assert_allclose(acc, x[4:16].reshape(3, 4, 8).sum(0), rtol=1e-6)


TRACES: list[int] = []


def _note() -> None:
    TRACES.append(1)


@pypto.frontend.jit
def two_paths(x: pypto.Tensor([16, 8], pypto.DT_FP32), out: pypto.Tensor([16, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    for i in pypto.loop(4):
        _note()
        t = x[i * 4:(i + 1) * 4, :]
        if i == 2:
            y = t * 10.0
        else:
            y = t - 1.0
        out[i * 4:(i + 1) * 4, :] = y


def test_symbolic_if_traces_body_twice_and_selects_per_iteration():
    TRACES.clear()
    x = _x((16, 8))
    out = np.zeros_like(x)
    two_paths(x, out)
    assert len(TRACES) == 2  # one trace per control path, not one per iteration (4)
    ref = x - 1
    ref[8:12] = x[8:12] * 10
    np.testing.assert_allclose(out, ref, rtol=1e-6)


@pypto.frontend.jit
def four_paths(x: pypto.Tensor([16, 8], pypto.DT_FP32), out: pypto.Tensor([16, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    for i in pypto.loop(4):
        _note()
        t = x[i * 4:(i + 1) * 4, :]
        if i % 2 == 0:
            t = t + 1.0
        if i >= 2:
            t = t * 3.0
        out[i * 4:(i + 1) * 4, :] = t


def test_two_independent_ifs_give_four_paths():
    TRACES.clear()
    x = _x((16, 8))
    out = np.zeros_like(x)
    four_paths(x, out)
    assert len(TRACES) == 4
    ref = x.copy()
    for i in range(4):
        blk = ref[i * 4:(i + 1) * 4]
        if i % 2 == 0:
            blk += 1
        if i >= 2:
            blk *= 3
    np.testing.assert_allclose(out, ref, rtol=1e-6)


@pypto.frontend.jit
def unroll_count(x: pypto.Tensor([11, 8], pypto.DT_FP32), out: pypto.Tensor([11, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    for i, u in pypto.loop_unroll(0, 11, 1, unroll_list=[3, 2]):
        out[i:i + u, :] = out[i:i + u, :] + 1.0


def test_loop_unroll_reproduces_0_2_0_overlap_quirk_and_warns():
    x = _x((11, 8))
    out = np.zeros((11, 8), F32)
    with emu.session() as s:
        unroll_count(x, out)
    counts = out[:, 0]
    # factors [3, 2, 1]: 3-blocks 0..8, a 2-block at 9 (items 9, 10), a 1-block at 10 -> item 10 twice
    np.testing.assert_array_equal(counts, [1] * 10 + [2])
    assert any(d.code == "EMU_UNROLL_OVERLAP" for d in s.warnings)
    assert set(s.counters.loop_trips) == {"loop_LoopUnroll3", "loop_LoopUnroll2", "loop_LoopUnroll1"}


@pypto.frontend.jit
def unroll_exact(x: pypto.Tensor([11, 8], pypto.DT_FP32), out: pypto.Tensor([11, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    for i, u in pypto.loop_unroll(0, 11, 1, unroll_list=[4]):
        out[i:i + u, :] = x[i:i + u, :] * 2.0


def test_loop_unroll_power_of_two_is_exact_without_warning():
    x = _x((11, 8))
    out = np.zeros_like(x)
    with emu.session() as s:
        unroll_exact(x, out)
    np.testing.assert_array_equal(out, x * 2)
    assert not s.warnings


@pypto.frontend.jit
def range_unrolled(x: pypto.Tensor([4, 32], pypto.DT_FP32), out: pypto.Tensor([4, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    for c in range(4):
        _note()
        out[:, c * 8:(c + 1) * 8] = x[:, c * 8:(c + 1) * 8] * float(c)


def test_python_range_is_unrolled_at_trace_time():
    TRACES.clear()
    x = _x((4, 32))
    out = np.zeros_like(x)
    with emu.session() as s:
        range_unrolled(x, out)
    assert len(TRACES) == 4
    np.testing.assert_array_equal(out, x * np.repeat(np.arange(4, dtype=F32), 8))
    assert s.counters.ops["mul"] == 4


@pypto.frontend.jit
def consumed(x: pypto.Tensor([4, 8], pypto.DT_FP32), o1: pypto.Tensor([4, 8], pypto.DT_FP32),
             o2: pypto.Tensor([4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    t = x + 1.0
    o1[:] = t
    o2[:] = t * 2.0


def test_whole_tensor_move_consumes_its_source():
    with pytest.raises(emu.EmulatorError) as info:
        consumed(_x((4, 8)), np.zeros((4, 8), F32), np.zeros((4, 8), F32))
    assert info.value.code == "F21004" and "consumed" in info.value.message
    assert info.value.line is not None and info.value.file.endswith("test_execution_model.py")


@pypto.frontend.jit
def move_after_loop(x: pypto.Tensor([16, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    t = pypto.tensor([4, 8], pypto.DT_FP32, "t")
    for i in pypto.loop(4):
        t[:] = x[i * 4:(i + 1) * 4, :] * 1.0
    out[:] = t


def test_move_after_loop_from_other_region_raises_instead_of_writing():
    out = np.full((4, 8), -9.0, F32)
    with pytest.raises(emu.EmulatorError) as info:
        move_after_loop(_x((16, 8)), out)
    assert info.value.code == "EMU_MOVE_REGION"
    assert (out == -9.0).all()


@pypto.frontend.function
def helper(a: pypto.Tensor([4, 8], pypto.DT_FP32), scale: float):
    h = a * scale


@pypto.frontend.jit
def no_scope(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    h = x + 100.0
    helper(x, 3.0)
    out[:] = h + 0.0


def test_frontend_function_has_no_scope_of_its_own():
    x = _x((4, 8))
    out = np.zeros_like(x)
    no_scope(x, out)
    np.testing.assert_allclose(out, x * 3)  # the helper's local `h` replaced the caller's `h`


@pypto.frontend.jit
def scatter_inplace(cache: pypto.Tensor([8, 16], pypto.DT_FP32), idx: pypto.Tensor([1, 2], pypto.DT_INT32),
                    src: pypto.Tensor([2, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 16)
    pypto.scatter_update(cache, -2, idx, src)


def test_scatter_update_updates_its_input_in_place():
    cache = np.zeros((8, 16), F32)
    src = _x((2, 16))
    scatter_inplace(cache, np.array([[5, 1]], np.int32), src)
    np.testing.assert_array_equal(cache[5], src[0])
    np.testing.assert_array_equal(cache[1], src[1])
    assert (cache[[0, 2, 3, 4, 6, 7]] == 0).all()


@pypto.frontend.jit
def dyn_kernel(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 4)):
        v = (n - i * 4).min(4)
        t = pypto.view(x, [4, 8], [i * 4, 0], valid_shape=[v, 8])
        pypto.assemble(t * 2.0, [i * 4, 0], out)


@pytest.mark.parametrize("rows", [4, 7, 1, 13])
def test_dynamic_dims_run_without_retrace_semantics(rows):
    x = _x((rows, 8))
    out = np.full_like(x, 5.0)
    dyn_kernel(x, out)
    np.testing.assert_array_equal(out, x * 2)


@pypto.frontend.jit
def int_read_loop(offs: pypto.Tensor([3], pypto.DT_INT32), x: pypto.Tensor([16, 8], pypto.DT_FP32),
                  out: pypto.Tensor([16, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 8)
    for e in pypto.loop(2):
        start = offs[e]
        stop = offs[e + 1]
        for r in pypto.loop(start, stop):
            out[r:r + 1, :] = x[r:r + 1, :] * 1.0 + pypto.full([1, 8], 1.0, pypto.DT_FP32) * 0.0


def test_tensor_read_scalars_drive_loop_bounds():
    x = _x((16, 8))
    out = np.zeros_like(x)
    int_read_loop(np.array([2, 5, 9], np.int32), x, out)
    np.testing.assert_array_equal(out[2:9], x[2:9])
    assert (out[:2] == 0).all() and (out[9:] == 0).all()


@pypto.frontend.jit
def write_into_view(x: pypto.Tensor([8, 8], pypto.DT_FP32), y: pypto.Tensor([2, 8], pypto.DT_FP32),
                    out: pypto.Tensor([4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    t = x[0:4, :]
    pypto.assemble(y, [1, 0], t)
    out[:] = t * 1.0


def test_views_are_values_writes_into_them_never_reach_the_source():
    x = np.arange(64, dtype=F32).reshape(8, 8)
    y = np.full((2, 8), -1.0, F32)
    out = np.zeros((4, 8), F32)
    before = x.copy()
    write_into_view(x, y, out)
    assert x.tobytes() == before.tobytes()
    ref = before[0:4].copy()
    ref[1:3] = -1
    np.testing.assert_array_equal(out, ref)
