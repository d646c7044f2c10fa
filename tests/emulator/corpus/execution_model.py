"""Consequences of the tracing execution model, each as its own small kernel (spec §0.1, §0.6, §3.3, §3.4).

The body of a kernel is traced once per control path and the recorded graph is executed per iteration, so:
Python re-binding is not loop-carried; writes through ``t[:] =`` / assemble are; Python side effects happen
once per traced path; runtime branches run in the right iterations; helpers share the caller's frame.
"""

import numpy as np
import pypto
from _emucorpus import EXACT, F32, FP32, Call, KernelCase, Tol, marker_line, rng, sentinel, single, uniform

R, C = 8, 32


@pypto.frontend.jit
def stale_rebinding(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    init: pypto.Tensor([R, C], pypto.DT_FP32),
    per_iter: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    acc = init
    for i in pypto.loop(4):
        acc = acc + pypto.view(x, [R, C], [i * R, 0])  # stale-rebinding
        pypto.assemble(acc, [i * R, 0], per_iter)
    out[:] = acc * 1.0


def case_stale_rebinding_is_not_loop_carried() -> KernelCase:
    """`acc = acc + a` reads the pre-loop tensor every iteration: per_iter[i] = init + x[i], out = init + x[3]."""
    r = rng(120)
    x, init = uniform(r, (4 * R, C)), uniform(r, (R, C))
    per_iter = np.concatenate([init + x[i * R:(i + 1) * R] for i in range(4)], 0)
    return single(stale_rebinding, (x, init, sentinel((4 * R, C)), sentinel((R, C))),
                  {2: per_iter, 3: init + x[3 * R:]}, EXACT, clean=False,
                  warn_lines=[(__file__, marker_line(__file__, "# stale-rebinding"))],
                  spec="§0.1.2 re-binding not loop-carried (c52_Da), §0.6.7; §10 stale-SSA pattern reported")


@pypto.frontend.jit
def accumulate_local(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    acc = pypto.tensor([R, C], pypto.DT_FP32, "acc")
    for i in pypto.loop(4):
        xt = pypto.view(x, [R, C], [i * R, 0])
        if pypto.is_loop_begin(i):
            acc[:] = xt * 1.0
        else:
            acc[:] = acc + xt
    out[:] = acc * 1.0


def case_slice_assign_accumulates_local_tensor() -> KernelCase:
    x = uniform(rng(121), (4 * R, C))
    ref = x.reshape(4, R, C).sum(0, dtype=np.float32)
    return single(accumulate_local, (x, sentinel((R, C))), {1: ref}, FP32,
                  spec="§0.1.2 acc[:] = acc + a accumulates; §0.6.2 read after the loop through a compute op")


@pypto.frontend.jit
def accumulate_in_output(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(4):
        out[:] = out + pypto.view(x, [R, C], [i * R, 0])


def case_running_sum_in_output_parameter() -> KernelCase:
    r = rng(122)
    x, out0 = uniform(r, (4 * R, C)), uniform(r, (R, C))
    ref = out0 + x[:R] + x[R:2 * R] + x[2 * R:3 * R] + x[3 * R:]
    return single(accumulate_in_output, (x, out0.copy()), {1: ref}, FP32,
                  spec="§3.1 writes of iteration k visible in k+1 through GM (c52_Dc)")


# Python side effects inside pypto.loop are legal but §10 asks the emulator to report them, so the
# trace-count cases below are not "clean" (a warning is allowed, not required).
TRACE_IF: list[str] = []
TRACE_PLAIN: list[str] = []
TRACE_RANGE: list[str] = []
TRACE_TWO_IFS: list[str] = []


@pypto.frontend.jit
def traced_with_branch(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([4 * R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(4):
        TRACE_IF.append("body")
        xt = pypto.view(x, [R, C], [i * R, 0])
        if i == 0:
            pypto.assemble(xt + 1.0, [i * R, 0], out)
        else:
            pypto.assemble(xt - 1.0, [i * R, 0], out)


def _count_is(log: list[str], n: int, what: str):
    def check(_session) -> None:
        assert len(log) == n, f"{what}: body traced {len(log)} times, spec says {n}"
    return check


def case_symbolic_if_traces_body_twice() -> KernelCase:
    x = uniform(rng(123), (4 * R, C))
    ref = np.concatenate([x[:R] + np.float32(1), x[R:] - np.float32(1)], 0)
    return single(traced_with_branch, (x, sentinel(x.shape)), {1: ref}, EXACT, clean=False,
                  check=_count_is(TRACE_IF, 2, "one symbolic if in a 4-trip loop"),
                  spec="§0.1.1 traced once per path (c20b: 2 lines for a 4-trip loop)")


@pypto.frontend.jit
def traced_plain_and_range(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([4 * R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(4):
        TRACE_PLAIN.append("body")
        for _t in range(3):
            TRACE_RANGE.append("inner")
        pypto.assemble(pypto.view(x, [R, C], [i * R, 0]) * 2.0, [i * R, 0], out)


def case_side_effects_once_per_trace_not_per_iteration() -> KernelCase:
    x = uniform(rng(124), (4 * R, C))

    def check(session) -> None:
        _count_is(TRACE_PLAIN, 1, "loop without branches")(session)
        _count_is(TRACE_RANGE, 3, "range(3) inside a once-traced loop body")(session)

    return single(traced_plain_and_range, (x, sentinel(x.shape)), {1: x * np.float32(2)}, EXACT, check=check,
                  clean=False,
                  spec="§0.1.1, §3.5 range unrolled at trace time")


@pypto.frontend.jit
def traced_two_ifs(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([4 * R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(4):
        TRACE_TWO_IFS.append("body")
        xt = pypto.view(x, [R, C], [i * R, 0])
        if i % 2 == 0:
            y = xt * 2.0
        else:
            y = xt * 3.0
        if i < 2:
            pypto.assemble(y + 10.0, [i * R, 0], out)
        else:
            pypto.assemble(y - 10.0, [i * R, 0], out)


def case_two_symbolic_ifs_four_paths() -> KernelCase:
    x = uniform(rng(125), (4 * R, C))
    blocks = []
    for i in range(4):
        y = x[i * R:(i + 1) * R] * np.float32(2.0 if i % 2 == 0 else 3.0)
        blocks.append(y + np.float32(10.0) if i < 2 else y - np.float32(10.0))
    return single(traced_two_ifs, (x, sentinel(x.shape)), {1: np.concatenate(blocks, 0)}, EXACT, clean=False,
                  check=_count_is(TRACE_TWO_IFS, 4, "two independent symbolic ifs"),
                  spec="§0.1.1 2^k paths; §3.4 runtime branch per iteration")


TRACE_UNROLL: list[str] = []


@pypto.frontend.jit
def traced_unroll(
    x: pypto.Tensor([11, C], pypto.DT_FP32),
    out: pypto.Tensor([11, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(4, C)
    for idx, u in pypto.loop_unroll(0, 11, 1, unroll_list=[4]):
        TRACE_UNROLL.append(u)
        pypto.assemble(x[idx:idx + u, :] - 0.5, [idx, 0], out)


def case_loop_unroll_traced_once_per_factor() -> KernelCase:
    x = uniform(rng(126), (11, C))

    def check(_session) -> None:
        assert sorted(TRACE_UNROLL) == [1, 4], f"factors traced: {TRACE_UNROLL} (c26: once per factor, 4 and 1)"

    return single(traced_unroll, (x, sentinel(x.shape)), {1: x - np.float32(0.5)}, EXACT, check=check, clean=False,
                  spec="§0.1.1, §3.2 (c26)")


@pypto.frontend.jit
def python_float_rebinding(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([4 * R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    scale = 1.0
    for i in pypto.loop(4):
        scale = scale * 2.0
        pypto.assemble(pypto.view(x, [R, C], [i * R, 0]) * scale, [i * R, 0], out)


def case_python_float_rebinding_evaluated_once() -> KernelCase:
    x = uniform(rng(127), (4 * R, C))
    return single(python_float_rebinding, (x, sentinel(x.shape)), {1: x * np.float32(2.0)}, EXACT, clean=False,
                  spec="§0.6.7 a Python float re-bound inside pypto.loop is evaluated once")


@pypto.frontend.jit
def writes_only_where_written(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    untaken: pypto.Tensor([R, C], pypto.DT_FP32),
    rebound: pypto.Tensor([R, C], pypto.DT_FP32),
    written: pypto.Tensor([4 * R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(4):
        xt = pypto.view(x, [R, C], [i * R, 0])
        if i == 10:
            untaken[:] = xt * 0.0
        pypto.assemble(xt + 2.0, [i * R, 0], written)
    rebound = x[0:R, :] + 1.0


def case_untaken_branch_and_rebinding_write_nothing() -> KernelCase:
    r = rng(128)
    x = uniform(r, (4 * R, C))
    untaken, rebound = uniform(r, (R, C)), uniform(r, (R, C))
    return single(writes_only_where_written, (x, untaken, rebound, sentinel(x.shape)),
                  {3: x + np.float32(2.0)}, EXACT,
                  spec="§0.6.7 output written only under an untaken branch keeps its contents; "
                       "§1.3 `out = expr` only rebinds")


@pypto.frontend.jit
def begin_end_rowsum(
    x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    out: pypto.Tensor([1, C], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(R, C)
    acc = pypto.tensor([1, C], pypto.DT_FP32, "acc")
    for i in pypto.loop((n + R - 1) // R):
        valid = (n - i * R).min(R)
        part = pypto.sum(pypto.view(x, [R, C], [i * R, 0], valid_shape=[valid, C]), 0, keepdim=True)
        if pypto.is_loop_begin(i):
            acc[:] = part
        else:
            acc[:] = acc + part
        if pypto.is_loop_end(i):
            out[:] = acc * 1.0


def case_is_loop_begin_end_ragged_column_sums() -> KernelCase:
    """29 rows: three full 8-row tiles and a 5-row tail whose invalid rows must not enter the sums."""
    calls = []
    for seed, n in ((129, 29), (130, 8)):
        x = uniform(rng(seed), (n, C))
        calls.append(Call(begin_end_rowsum, (x, sentinel((1, C))),
                          {1: x.astype(np.float64).sum(0, keepdims=True).astype(F32)}, Tol(1e-5, 1e-5)))
    return KernelCase(calls=calls, spec="§3.3 begin/end, §0.6.7 ragged reductions ignore invalid rows")


@pypto.frontend.function
def scaled_add(
    a: pypto.Tensor([R, C], pypto.DT_FP32),
    b: pypto.Tensor([R, C], pypto.DT_FP32),
    dst: pypto.Tensor([R, C], pypto.DT_FP32),
):
    h = a * 2.0
    dst[:] = h + b


@pypto.frontend.jit
def function_shares_caller_frame(
    x: pypto.Tensor([R, C], pypto.DT_FP32),
    y: pypto.Tensor([R, C], pypto.DT_FP32),
    out1: pypto.Tensor([R, C], pypto.DT_FP32),
    out_h: pypto.Tensor([R, C], pypto.DT_FP32),
    out_b: pypto.Tensor([R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    h = y * 5.0
    b = x * 3.0
    scaled_add(x, y, out1)
    out_h[:] = h + 0.0
    out_b[:] = b + 0.0


def case_frontend_function_has_no_scope() -> KernelCase:
    """After the call the caller's `h` is the helper's local (x*2) and `b` is the helper's parameter (y)."""
    r = rng(131)
    x, y = uniform(r, (R, C)), uniform(r, (R, C))
    outs = (sentinel((R, C)), sentinel((R, C)), sentinel((R, C)))
    return single(function_shares_caller_frame, (x, y, *outs),
                  {2: x * np.float32(2) + y, 3: x * np.float32(2), 4: y.copy()}, EXACT,
                  spec="§0.6.3 frontend.function binds params/locals in the caller's frame")


def accumulate_block(acc, tile, i):
    """Plain helper executed natively: its branch must be written with pypto.cond (c04)."""
    if pypto.cond(pypto.is_loop_begin(i)):
        acc[:] = tile * 1.0
    else:
        acc[:] = acc + tile


@pypto.frontend.jit
def plain_helper_cond(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    acc = pypto.tensor([R, C], pypto.DT_FP32, "acc")
    for i in pypto.loop(4):
        accumulate_block(acc, pypto.view(x, [R, C], [i * R, 0]), i)
    out[:] = acc * 1.0


def case_plain_helper_with_cond_is_loop_begin() -> KernelCase:
    x = uniform(rng(132), (4 * R, C))
    return single(plain_helper_cond, (x, sentinel((R, C))), {1: x.reshape(4, R, C).sum(0, dtype=np.float32)},
                  FP32, spec="§0.5 c04 (pypto.cond in a plain helper)")


@pypto.frontend.function
def first_or_add(
    acc: pypto.Tensor([R, C], pypto.DT_FP32),
    tile: pypto.Tensor([R, C], pypto.DT_FP32),
    idx,
):
    if pypto.is_loop_begin(idx):
        acc[:] = tile * 1.0
    else:
        acc[:] = acc + tile


@pypto.frontend.jit
def function_is_loop_begin(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    acc = pypto.tensor([R, C], pypto.DT_FP32, "acc")
    for i in pypto.loop(4):
        xt = pypto.view(x, [R, C], [i * R, 0])
        first_or_add(acc, xt, i)
    out[:] = acc * 1.0


def case_frontend_function_is_loop_begin_index_last() -> KernelCase:
    x = uniform(rng(133), (4 * R, C))
    return single(function_is_loop_begin, (x, sentinel((R, C))), {1: x.reshape(4, R, C).sum(0, dtype=np.float32)},
                  FP32, spec="§0.5 c04d (is_loop_begin in a frontend.function, index passed last)")


@pypto.frontend.jit
def valid_region_write_back(
    x: pypto.Tensor([8, 16], pypto.DT_FP32),
    out: pypto.Tensor([4, 8], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(4, 8)
    out[:] = pypto.view(x, [4, 8], [2, 8], valid_shape=[2, 8]) + 1.0


def case_valid_shape_writes_back_only_valid_rows() -> KernelCase:
    x = uniform(rng(134), (8, 16))
    out = sentinel((4, 8))
    ref = out.copy()
    ref[:2] = x[2:4, 8:16] + np.float32(1.0)
    return single(valid_region_write_back, (x, out), {1: ref}, EXACT,
                  spec="§4.1 obs A: only the valid region is written back")


@pypto.frontend.jit
def move_after_loop_through_compute(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(4):
        t = pypto.view(x, [R, C], [i * R, 0]) * 4.0
    out[:] = t * 1.0


def case_loop_local_result_read_after_loop_is_last_iteration() -> KernelCase:
    x = uniform(rng(135), (4 * R, C))
    return single(move_after_loop_through_compute, (x, sentinel((R, C))), {1: x[3 * R:] * np.float32(4.0)},
                  EXACT, clean=False,
                  spec="§0.6.2 `o[:] = t * 1.0` after the loop writes; §10 loop-local value = last iteration")


TRACE_ELIF: list[str] = []


@pypto.frontend.jit
def elif_chain_and_not(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    flags: pypto.Tensor([4 * R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(4):
        TRACE_ELIF.append("body")
        xt = pypto.view(x, [R, C], [i * R, 0])
        if i == 0:
            y = xt + 1.0
        elif i == 1:
            y = xt + 2.0
        else:
            y = xt + 3.0
        pypto.assemble(y, [i * R, 0], out)
        if ~(i == 0):  # `~` of a loop flag is F3FFFF on the wheel (fidelity s33); of an index test it compiles
            pypto.assemble(xt * 0.0 + 5.0, [i * R, 0], flags)


def case_elif_chain_three_paths_and_logical_not() -> KernelCase:
    x = uniform(rng(136), (4 * R, C))
    add = np.repeat(np.array([1.0, 2.0, 3.0, 3.0], np.float32), R)[:, None]
    flags = sentinel(x.shape)
    ref_flags = flags.copy()
    ref_flags[R:] = 5.0
    return single(elif_chain_and_not, (x, sentinel(x.shape), flags), {1: x + add, 2: ref_flags}, EXACT, clean=False,
                  check=_count_is(TRACE_ELIF, 6, "if/elif/else (3 paths) times an independent if (2 paths)"),
                  spec="§3.4 elif on symbols, §2.4 `~` = logical NOT, §0.1.1 paths multiply")


@pypto.frontend.jit
def loop_inside_runtime_branch(
    x: pypto.Tensor([4, 2 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([4, 2 * R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(1, R, C)
    for b in pypto.loop(4):
        if b % 2 == 0:
            for s in pypto.loop(2):
                v = pypto.view(x, [1, R, C], [b, s * R, 0])
                pypto.assemble(v * 2.0, [b, s * R, 0], out)
        else:
            v = pypto.view(x, [1, 2 * R, C], [b, 0, 0])
            pypto.assemble(v * -1.0, [b, 0, 0], out)


def case_loop_nested_in_runtime_branch() -> KernelCase:
    x = uniform(rng(137), (4, 2 * R, C))
    ref = x.copy()
    ref[0::2] *= np.float32(2.0)
    ref[1::2] *= np.float32(-1.0)
    return single(loop_inside_runtime_branch, (x, sentinel(x.shape)), {1: ref}, EXACT,
                  spec="§3.1 nested loops, §3.4 runtime branch containing a loop")


@pypto.frontend.jit
def last_write_wins(
    x: pypto.Tensor([4 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(4):
        pypto.assemble(pypto.view(x, [R, C], [i * R, 0]) * 1.0, [0, 0], out)


def case_same_region_written_every_iteration_last_wins() -> KernelCase:
    x = uniform(rng(138), (4 * R, C))
    return single(last_write_wins, (x, sentinel((R, C))), {1: x[3 * R:]}, EXACT,
                  spec="§3.1 sequential iterations, §4.2 write-after-write serialised")


@pypto.frontend.function
def inner_scale(
    t: pypto.Tensor([R, C], pypto.DT_FP32),
    scaled: pypto.Tensor([R, C], pypto.DT_FP32),
):
    # parameter names differ from outer_block's on purpose: functions share the caller's frame (§0.6.3),
    # a parameter named `dst` here would rebind outer_block's `dst` to `tmp`
    scaled[:] = t * 3.0


@pypto.frontend.function
def outer_block(
    src: pypto.Tensor([2 * R, C], pypto.DT_FP32),
    dst: pypto.Tensor([2 * R, C], pypto.DT_FP32),
):
    tmp = pypto.tensor([R, C], pypto.DT_FP32, "tmp")
    for s in pypto.loop(2):
        inner_scale(pypto.view(src, [R, C], [s * R, 0]), tmp)
        pypto.assemble(tmp + 1.0, [s * R, 0], dst)


@pypto.frontend.jit
def nested_functions(
    x: pypto.Tensor([2 * R, C], pypto.DT_FP32),
    out: pypto.Tensor([2 * R, C], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(R, C)
    outer_block(x, out)


def case_frontend_function_calling_function_with_loop() -> KernelCase:
    x = uniform(rng(139), (2 * R, C))
    return single(nested_functions, (x, sentinel(x.shape)), {1: x * np.float32(3.0) + np.float32(1.0)}, EXACT,
                  spec="§1.6 frontend.function inlined (nested, with a pypto.loop inside)")
