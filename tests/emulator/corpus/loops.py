"""Loop kernels: the §9.1 view/assemble example, §9.4 conditions (nested loops with a runtime branch, a
plain helper driven by a Python flag), §9.5 loops (start/stop/step, scalar loop), Python ``range``
unrolling, numerically transparent options, and ``loop_unroll`` (spec §3.1, §3.2, §3.5, §6.3–§6.5)."""

import numpy as np
import pypto
from _emucorpus import EXACT, FP32, Call, KernelCase, rng, sentinel, single, uniform

SHAPE = (32, 32, 1, 256)


@pypto.frontend.jit
def add_scalar_loop_view_assemble(
    x: pypto.Tensor(SHAPE, pypto.DT_FP32),
    y: pypto.Tensor(SHAPE, pypto.DT_FP32),
    out: pypto.Tensor(SHAPE, pypto.DT_FP32),
):
    b, s, n, d = SHAPE
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    for bi in pypto.loop(b, name="LOOP_B", idx_name="bi"):
        xv = pypto.view(x, [1, s, n, d], [bi, 0, 0, 0])
        yv = pypto.view(y, [1, s, n, d], [bi, 0, 0, 0])
        pypto.assemble(xv + yv, [bi, 0, 0, 0], out)


def case_add_view_assemble_reference_9_1() -> KernelCase:
    r = rng(70)
    x, y = uniform(r, SHAPE), uniform(r, SHAPE)

    @pypto.options(pass_options={"enable_slice": True})
    def run(*args):
        add_scalar_loop_view_assemble(*args)

    return single(run, (x, y, sentinel(SHAPE)), {2: x + y}, EXACT, spec="§9.1 add_scalar_loop_view_assemble")


@pypto.frontend.jit
def nested_loops_with_conditions(
    a: pypto.Tensor([2, 2, 8, 16], pypto.DT_FP32),
    b: pypto.Tensor([2, 2, 8, 16], pypto.DT_FP32),
    out: pypto.Tensor([2, 2, 8, 16], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(1, 1, 8, 16)
    for i in pypto.loop(2, name="outer", idx_name="i"):
        for j in pypto.loop(2, name="inner", idx_name="j"):
            at = a[i:i + 1, j:j + 1]
            bt = b[i:i + 1, j:j + 1]
            if i == 0:
                out[i:i + 1, j:j + 1] = at + bt
            else:
                out[i:i + 1, j:j + 1] = at - bt


def case_nested_loops_with_conditions_reference_9_4() -> KernelCase:
    r = rng(71)
    a, b = uniform(r, (2, 2, 8, 16)), uniform(r, (2, 2, 8, 16))
    ref = np.concatenate([a[:1] + b[:1], a[1:] - b[1:]], 0)
    return single(nested_loops_with_conditions, (a, b, sentinel(a.shape)), {2: ref}, EXACT,
                  spec="§9.4 condition.py nested loops, runtime if")


def add_core(a, b, out, subtract):
    """Plain helper: runs natively at trace time; ``subtract`` is a Python bool (trace-time branch)."""
    if subtract:
        out[:] = a - b
    else:
        out[:] = a + b


@pypto.frontend.jit
def add_with_helper(
    a: pypto.Tensor(),
    b: pypto.Tensor(),
    out: pypto.Tensor(),
    subtract: bool,
):
    pypto.set_vec_tile_shapes(16, 32)
    add_core(a, b, out, subtract)


def case_plain_helper_python_flag_reference_9_4() -> KernelCase:
    r = rng(72)
    a, b = uniform(r, (16, 32)), uniform(r, (16, 32))
    calls = [Call(add_with_helper, (a, b, sentinel((16, 32))), {2: a + b}, EXACT, {"subtract": False}),
             Call(add_with_helper, (a, b, sentinel((16, 32))), {2: a - b}, EXACT, {"subtract": True})]
    return KernelCase(calls=calls, spec="§9.4 add_core (undecorated helper, Python bool), §1.2 Tensor()")


@pypto.frontend.jit
def loop_start_stop_step(
    x: pypto.Tensor([16, 32], pypto.DT_FP32),
    out: pypto.Tensor([16, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(2, 32)
    for i in pypto.loop(2, 16, 4):
        out[i:i + 2, :] = x[i:i + 2, :] * 3.0


def case_loop_start_stop_step_reference_9_5() -> KernelCase:
    x = uniform(rng(73), (16, 32))
    out = sentinel((16, 32))
    ref = out.copy()
    for i in range(2, 16, 4):
        ref[i:i + 2] = x[i:i + 2] * np.float32(3.0)
    return single(loop_start_stop_step, (x, out), {1: ref}, EXACT, spec="§9.5 loop basic, §3.1 start/stop/step")


@pypto.frontend.jit
def add_scalar_loop(
    x: pypto.Tensor([pypto.DYNAMIC, 4, 64], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, 4, 64], pypto.DT_FP32),
    scalar: float,
):
    pypto.set_vec_tile_shapes(1, 4, 64)
    for bi in pypto.loop(x.shape[0]):
        out[bi:bi + 1, :, :] = x[bi:bi + 1, :, :] + scalar


def case_add_scalar_loop_reference_9_5() -> KernelCase:
    x = uniform(rng(74), (6, 4, 64))
    return single(add_scalar_loop, (x, sentinel(x.shape)), {1: x + np.float32(0.75)}, EXACT,
                  kwargs={"scalar": 0.75}, spec="§9.5 add_scalar_loop")


COLS = 4


@pypto.frontend.jit
def python_range_unrolled(
    x: pypto.Tensor([8, COLS * 32], pypto.DT_FP32),
    out: pypto.Tensor([8, COLS * 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    for t in range(COLS):
        out[:, t * 32:(t + 1) * 32] = x[:, t * 32:(t + 1) * 32] * float(t + 1)


def case_python_range_unrolled_at_trace_time() -> KernelCase:
    x = uniform(rng(75), (8, COLS * 32))
    ref = x * np.repeat(np.arange(1, COLS + 1, dtype=np.float32), 32)[None, :]
    return single(python_range_unrolled, (x, sentinel(x.shape)), {1: ref}, EXACT, spec="§3.5 range unrolled")


@pypto.frontend.jit(runtime_options={"run_mode": 0, "stitch_function_max_num": 64},
                    pass_options={"vec_nbuffer_setting": {-1: 4}})
def options_are_transparent(
    x: pypto.Tensor([32, 64], pypto.DT_FP32),
    out: pypto.Tensor([32, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    pypto.experimental.set_operation_options(combine_axis=True)
    pypto.set_semantic_label("scale_rows")
    for i in pypto.loop(4, name="L", idx_name="k", submit_before_loop=True):
        pypto.set_pass_options(sg_set_scope=1)
        xv = pypto.view(x, [8, 64], [i * 8, 0])
        pypto.assemble(xv * 0.5 + pypto.sum(xv, -1, keepdim=True), [i * 8, 0], out)
        pypto.set_pass_options(sg_set_scope=-1)


def case_options_are_numerically_transparent() -> KernelCase:
    x = uniform(rng(76), (32, 64))
    ref = x * np.float32(0.5) + x.astype(np.float64).sum(-1, keepdims=True).astype(np.float32)
    return single(options_are_transparent, (x, sentinel(x.shape)), {1: ref}, FP32,
                  spec="§6.3–§6.5 options, labels, submit_before_loop")


@pypto.frontend.jit
def loop_unroll_four(
    x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(4, 32)
    for idx, u in pypto.loop_unroll(0, n, 1, unroll_list=[4]):
        xt = pypto.view(x, [u, 32], [idx, 0])
        pypto.assemble(xt * 2.0 + 1.0, [idx, 0], out)


def case_loop_unroll_exact_for_11_8_3() -> KernelCase:
    calls = []
    for seed, n in ((77, 11), (78, 8), (79, 3)):
        x = uniform(rng(seed), (n, 32))
        calls.append(Call(loop_unroll_four, (x, sentinel((n, 32))), {1: x * np.float32(2) + np.float32(1)}, EXACT))
    return KernelCase(calls=calls, spec="§3.2 loop_unroll([4]) exact for 11, 8, 3 (§0.6.7)")


@pypto.frontend.jit
def loop_unroll_multiples(
    x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(8, 32)
    for idx, u in pypto.loop_unroll(n, unroll_list=[8, 2, 4]):
        pypto.assemble(pypto.exp(x[idx:idx + u, :]), [idx, 0], out)


def case_loop_unroll_multiple_factors() -> KernelCase:
    """[8, 2, 4] -> factors 8, 4, 2, 1 (sorted, deduplicated, 1 added); 23 rows = 8+8+4+2+1."""
    x = uniform(rng(80), (23, 32))
    ref = np.exp(x.astype(np.float64)).astype(np.float32)
    return single(loop_unroll_multiples, (x, sentinel(x.shape)), {1: ref}, FP32, clean=False,
                  spec="§3.2 loop_unroll factor handling")


@pypto.frontend.jit
def loop_unroll_overlap_accumulates(
    x: pypto.Tensor([11, 32], pypto.DT_FP32),
    out: pypto.Tensor([11, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(4, 32)
    for idx, u in pypto.loop_unroll(0, 11, 1, unroll_list=[3, 2]):
        pypto.assemble(out[idx:idx + u, :] + x[idx:idx + u, :], [idx, 0], out)


def case_loop_unroll_overlap_quirk_reproduced() -> KernelCase:
    """0.2.0 algorithm with [3, 2] on 11 items: blocks 0,3,6 (x3), 9 (x2: items 9-10), 10 (x1): item 10 twice."""
    r = rng(81)
    x, out0 = uniform(r, (11, 32)), uniform(r, (11, 32))
    ref = out0 + x
    ref[10] += x[10]
    return single(loop_unroll_overlap_accumulates, (x, out0.copy()), {1: ref}, FP32, clean=False,
                  spec="§3.2 loop_unroll algorithm incl. its overlap quirk (the emulator should also warn)")


@pypto.frontend.jit
def loop_unroll_begin_end(
    x: pypto.Tensor([11, 32], pypto.DT_FP32),
    out: pypto.Tensor([11, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(4, 32)
    for idx, u in pypto.loop_unroll(0, 11, 1, unroll_list=[4]):
        t = x[idx:idx + u, :] * 1.0
        if pypto.is_loop_begin(idx):
            t2 = t + 100.0
        else:
            t2 = t * 1.0
        if pypto.is_loop_end(idx):
            pypto.assemble(t2 + 1000.0, [idx, 0], out)
        else:
            pypto.assemble(t2 * 1.0, [idx, 0], out)


def case_is_loop_begin_end_refer_to_unroll_sub_loops() -> KernelCase:
    """Sub-loop of factor 4 runs idx 0, 4; sub-loop of factor 1 runs 8, 9, 10: begin/end per sub-loop."""
    x = uniform(rng(82), (11, 32))
    add = np.zeros((11, 1), np.float32)
    add[0:4] += 100.0
    add[4:8] += 1000.0
    add[8] += 100.0
    add[10] += 1000.0
    return single(loop_unroll_begin_end, (x, sentinel(x.shape)), {1: x + add}, FP32,
                  spec="§3.3 begin/end of loop_unroll sub-loops")
