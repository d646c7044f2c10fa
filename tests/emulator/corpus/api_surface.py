"""Breadth of the API surface (issue 3 item 3): Tensor methods, named dynamic dims, scalar SymbolicScalar
helpers (pypto.min/max, ceildiv, .max, as_variable), more unary/binary math, tril/triu, torch scatter,
logical_not, Element in where, platform.npuarch driving a trace-time choice (spec §2.2–§2.5, §4.4, §5)."""

import numpy as np
import pypto
from _emucorpus import (
    EXACT,
    F16,
    F32,
    FP32_LOOSE,
    I32,
    Call,
    KernelCase,
    Tol,
    f32,
    rnd,
    rng,
    sentinel,
    single,
    uniform,
)


@pypto.frontend.jit
def tensor_methods(
    x: pypto.Tensor([16, 64], pypto.DT_FP32),
    out: pypto.Tensor([16, 64], pypto.DT_FP32),
    col: pypto.Tensor([64, 16], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 64)
    e = x.sub(x.amax(-1, keepdim=True)).exp()
    out.move(e.div(e.sum(-1, keepdim=True)))
    col[:] = x.transpose(0, 1).clone()


def case_tensor_methods() -> KernelCase:
    x = uniform(rng(140), (16, 64), -3, 3)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(-1, keepdims=True))
    expect = {1: (e / e.sum(-1, keepdims=True)).astype(F32), 2: np.ascontiguousarray(x.T)}
    return single(tensor_methods, (x, sentinel(x.shape), sentinel((64, 16))), expect, {1: FP32_LOOSE, 2: EXACT},
                  spec="§2.2 Tensor methods, move")


N = pypto.frontend.dynamic("N")


@pypto.frontend.jit
def named_dynamic_dim(
    x: pypto.Tensor([N, 32], pypto.DT_FP32),
    y: pypto.Tensor([N, 32], pypto.DT_FP32),
    out: pypto.Tensor([N, 32], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(8, 32)
    for i in pypto.loop(pypto.ceildiv(n, 8)):
        valid = pypto.min(n - i * 8, 8)
        xv = pypto.view(x, [8, 32], [i * 8, 0], valid_shape=[valid, 32])
        yv = pypto.view(y, [8, 32], [i * 8, 0], valid_shape=[valid, 32])
        pypto.assemble(xv * yv, [i * 8, 0], out)


def case_named_dynamic_dim_and_scalar_min_ceildiv() -> KernelCase:
    calls = []
    for seed, n in ((141, 19), (142, 8)):
        r = rng(seed)
        x, y = uniform(r, (n, 32)), uniform(r, (n, 32))
        calls.append(Call(named_dynamic_dim, (x, y, sentinel((n, 32))), {2: x * y}, EXACT))
    return KernelCase(calls=calls, spec="§1.2 frontend.dynamic, §2.4 pypto.min / ceildiv")


@pypto.frontend.jit
def symbolic_max_as_variable(
    x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(8, 32)
    for i in pypto.loop((n + 7) // 8):
        start = (i * 8 - 4).max(0).as_variable()
        xv = pypto.view(x, [4, 32], [start, 0])
        pypto.assemble(xv + 1.0, [start, 0], out)


def case_symbolic_max_as_variable() -> KernelCase:
    """Iteration i writes rows max(8i-4, 0) .. +4: rows 0-3, 4-7, 12-15 of 24; 8-11 and 16-23 stay untouched."""
    x = uniform(rng(143), (24, 32))
    out = sentinel((24, 32))
    ref = out.copy()
    for s in (0, 4, 12):
        ref[s:s + 4] = x[s:s + 4] + np.float32(1.0)
    return single(symbolic_max_as_variable, (x, out), {1: ref}, EXACT, spec="§2.4 .max(), as_variable()")


@pypto.frontend.jit
def more_math(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    y: pypto.Tensor([8, 64], pypto.DT_FP32),
    logs: pypto.Tensor([8, 64], pypto.DT_FP32),
    misc: pypto.Tensor([8, 64], pypto.DT_FP32),
    binary: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    a = pypto.abs(x) + 0.5
    logs[:] = pypto.log2(a) + pypto.log1p(a) + pypto.exp2(x) + pypto.expm1(x) + pypto.log10(a)
    misc[:] = pypto.reciprocal(a) + pypto.sign(x) * 3.0 + pypto.lrelu(x, 0.1)
    binary[:] = pypto.hypot(x, y) + pypto.fmod(x * 5.0, y) + pypto.minimum(x, y) + x ** 2.0


def case_more_unary_binary_math() -> KernelCase:
    r = rng(144)
    x = uniform(r, (8, 64), -2, 2)
    y = (uniform(r, (8, 64), 0.5, 2) * r.choice([-1, 1], size=(8, 64))).astype(F32)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    a = np.abs(x64) + 0.5
    logs = np.log2(a) + np.log1p(a) + np.exp2(x64) + np.expm1(x64) + np.log10(a)
    misc = 1.0 / a + np.sign(x64) * 3.0 + np.where(x64 >= 0, x64, 0.1 * x64)
    binary = np.hypot(x64, y64) + np.fmod(f32(x * np.float32(5.0)).astype(np.float64), y64) + np.minimum(x64, y64) \
        + x64 ** 2
    outs = (sentinel(x.shape), sentinel(x.shape), sentinel(x.shape))
    return single(more_math, (x, y, *outs), {2: logs.astype(F32), 3: misc.astype(F32), 4: binary.astype(F32)},
                  FP32_LOOSE, spec="§5.2, §5.3 math")


@pypto.frontend.jit
def tril_triu(
    x: pypto.Tensor([32, 32], pypto.DT_FP32),
    lower: pypto.Tensor([32, 32], pypto.DT_FP32),
    upper: pypto.Tensor([32, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(32, 32)
    lower[:] = pypto.tril(x, 0)
    upper[:] = pypto.triu(x, 1)


def case_tril_triu() -> KernelCase:
    x = uniform(rng(145), (32, 32))
    return single(tril_triu, (x, sentinel(x.shape), sentinel(x.shape)), {1: np.tril(x, 0), 2: np.triu(x, 1)}, EXACT,
                  spec="§4.4 tril/triu")


@pypto.frontend.jit
def torch_scatter(
    x: pypto.Tensor([8, 32], pypto.DT_FP32),
    idx: pypto.Tensor([8, 4], pypto.DT_INT32),
    src: pypto.Tensor([8, 4], pypto.DT_FP32),
    out_set: pypto.Tensor([8, 32], pypto.DT_FP32),
    out_add: pypto.Tensor([8, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    out_set[:] = pypto.scatter(x, 1, idx, src)
    out_add[:] = pypto.scatter(x, 1, idx, src, reduce="add")


def case_torch_scatter_set_and_add() -> KernelCase:
    r = rng(146)
    x, src = uniform(r, (8, 32)), uniform(r, (8, 4))
    idx = np.stack([r.permutation(32)[:4] for _ in range(8)]).astype(I32)  # distinct per row
    ref_set, ref_add = x.copy(), x.copy()
    for i in range(8):
        for j in range(4):
            ref_set[i, idx[i, j]] = src[i, j]
            ref_add[i, idx[i, j]] += src[i, j]
    return single(torch_scatter, (x, idx, src, sentinel(x.shape), sentinel(x.shape)), {3: ref_set, 4: ref_add},
                  EXACT, spec="§4.5 scatter (torch semantics, reduce='add')")


@pypto.frontend.jit
def logical_where_element(
    x: pypto.Tensor([16, 64], pypto.DT_FP16),
    out: pypto.Tensor([16, 64], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(16, 64)
    keep = pypto.logical_not(x < pypto.Element(pypto.DT_FP16, 0.25))
    out[:] = pypto.where(keep, x, pypto.Element(pypto.DT_FP16, -1.0))


def case_logical_not_where_element_fp16() -> KernelCase:
    x = uniform(rng(147), (16, 64), -1, 1, F16)
    ref = np.where(~(f32(x) < 0.25), x, np.float16(-1.0)).astype(F16)
    return single(logical_where_element, (x, sentinel(x.shape, F16)), {1: ref}, EXACT,
                  spec="§5.4 logical_not, where with Element")


@pypto.frontend.jit
def npuarch_choice(
    x: pypto.Tensor([16, 64], pypto.DT_FP32),
    out: pypto.Tensor([16, 64], pypto.DT_FP32),
):
    if pypto.platform.npuarch == "DAV_3510":
        pypto.set_vec_tile_shapes(16, 64)
    else:
        pypto.set_vec_tile_shapes(8, 64)
    out[:] = x * 0.5


def case_platform_npuarch_is_a_trace_time_string() -> KernelCase:
    x = uniform(rng(148), (16, 64))
    return single(npuarch_choice, (x, sentinel(x.shape)), {1: x * np.float32(0.5)}, EXACT,
                  spec="§6.5 platform.npuarch")


@pypto.frontend.jit
def fp16_chain_rounding(
    x: pypto.Tensor([8, 64], pypto.DT_FP16),
    out: pypto.Tensor([8, 64], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.exp(x) * x + 1.0


def case_fp16_rounds_after_every_op() -> KernelCase:
    """exp rounds to fp16, the product rounds, the sum rounds: 1-ulp tolerance against that model."""
    x = uniform(rng(149), (8, 64), -2, 2, F16)
    e = rnd(np.exp(f32(x).astype(np.float64)), F16)
    p = rnd(e * f32(x), F16)
    ref = rnd(p + np.float32(1.0), F16).astype(F16)
    return single(fp16_chain_rounding, (x, sentinel(x.shape, F16)), {1: ref}, Tol(1e-3, 1e-3),
                  spec="§5.1 per-op rounding (fp16)")


@pypto.frontend.jit
def ceil_div_rows(
    a: pypto.Tensor([40, 32], pypto.DT_INT32),
    b: pypto.Tensor([40, 32], pypto.DT_INT32),
    out: pypto.Tensor([40, 32], pypto.DT_INT32),
    out_s: pypto.Tensor([40, 32], pypto.DT_INT32),
):
    pypto.set_vec_tile_shapes(8, 32)
    for i in pypto.loop(5, name="rows", idx_name="i"):
        ta = pypto.view(a, [8, 32], [i * 8, 0])
        tb = pypto.view(b, [8, 32], [i * 8, 0])
        pypto.assemble(pypto.ceil_div(ta, tb), [i * 8, 0], out)
        pypto.assemble(ta.ceil_div(7), [i * 8, 0], out_s)


def case_ceil_div_int32() -> KernelCase:
    """ceil(a / b) on INT32, negative dividends and divisors included (5 row tiles: the batched path)."""
    r = rng(150)
    a = r.integers(-1000, 1000, (40, 32)).astype(I32)
    b = (r.integers(1, 9, (40, 32)) * r.choice([-1, 1], (40, 32))).astype(I32)
    ceil = np.ceil(a.astype(np.float64) / b).astype(I32)
    ceil7 = np.ceil(a.astype(np.float64) / 7).astype(I32)
    return single(ceil_div_rows, (a, b, sentinel(a.shape, I32), sentinel(a.shape, I32)), {2: ceil, 3: ceil7}, EXACT,
                  spec="§5.2 ceil_div (INT32 only in 0.2.0)")
