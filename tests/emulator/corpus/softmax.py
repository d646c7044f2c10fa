"""Softmax family and reductions: the §9.2 example, pypto.softmax, the §9.10 three-pass bf16 softmax with
local accumulators, amax/amin/var on both axes (spec §5.6, §5.7, §9.2, §9.10)."""

import numpy as np
import pypto
from _emucorpus import (
    BF16,
    BF16_TOL,
    F32,
    FP32,
    FP32_LOOSE,
    Call,
    KernelCase,
    f32,
    rnd,
    rng,
    sentinel,
    single,
    uniform,
)

S, H, DD = 32, 1, 256  # the example's (32, 32, 1, 256) with a dynamic batch


@pypto.frontend.jit
def softmax_rows(
    x: pypto.Tensor([pypto.DYNAMIC, S, H, DD], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, S, H, DD], pypto.DT_FP32),
):
    n, s, h, d = x.shape
    pypto.set_vec_tile_shapes(1, 4, 1, 256)
    for i in pypto.loop(0, n, 1, name="LOOP_SOFTMAX", idx_name="b"):
        xt = x[i:i + 1, :s, :h, :d]
        mx = pypto.amax(xt, -1, keepdim=True)
        e = pypto.exp(xt - mx)
        sm = pypto.sum(e, -1, keepdim=True)
        out[i:, :s, :h, :d] = e / sm


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def case_softmax_rows_reference_9_2() -> KernelCase:
    x = uniform(rng(20), (32, S, H, DD), -4, 4)
    return single(softmax_rows, (x, sentinel(x.shape)), {1: _softmax(x).astype(F32)}, FP32_LOOSE,
                  spec="§9.2 softmax example (getitem/setitem slices, dynamic batch)")


@pypto.frontend.jit
def softmax_builtin(
    x: pypto.Tensor([32, 64], pypto.DT_FP32),
    out: pypto.Tensor([32, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    for i in pypto.loop(4):
        xt = pypto.view(x, [8, 64], [i * 8, 0])
        pypto.assemble(pypto.softmax(xt, -1), [i * 8, 0], out)


def case_softmax_builtin() -> KernelCase:
    x = uniform(rng(21), (32, 64), -8, 8)
    return single(softmax_builtin, (x, sentinel(x.shape)), {1: _softmax(x).astype(F32)}, FP32_LOOSE,
                  spec="§5.7 softmax")


S_TILE = 64
N_TILES = 3


@pypto.frontend.jit
def attn_softmax(
    scores: pypto.Tensor([pypto.DYNAMIC, S_TILE * N_TILES], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, S_TILE * N_TILES], pypto.DT_BF16),
    scale: float,
):
    rows = scores.shape[0]
    for r in pypto.loop(rows):
        pypto.set_vec_tile_shapes(1, S_TILE)
        mx = pypto.tensor([1, 1], pypto.DT_FP32, "mx")
        sm = pypto.tensor([1, 1], pypto.DT_FP32, "sm")
        for t in range(N_TILES):
            st = pypto.cast(scores[r:r + 1, t * S_TILE:(t + 1) * S_TILE], pypto.DT_FP32) * scale
            tmax = pypto.amax(st, -1, keepdim=True)
            if t == 0:
                mx[:] = tmax
            else:
                mx[:] = pypto.maximum(mx, tmax)
        for t in range(N_TILES):
            st = pypto.cast(scores[r:r + 1, t * S_TILE:(t + 1) * S_TILE], pypto.DT_FP32) * scale
            ts = pypto.sum(pypto.exp(st - mx), -1, keepdim=True)
            if t == 0:
                sm[:] = ts
            else:
                sm[:] = sm + ts
        for t in range(N_TILES):
            st = pypto.cast(scores[r:r + 1, t * S_TILE:(t + 1) * S_TILE], pypto.DT_FP32) * scale
            out[r:r + 1, t * S_TILE:(t + 1) * S_TILE] = pypto.cast(pypto.exp(st - mx) / sm, pypto.DT_BF16)


def case_attn_softmax_reference_9_10() -> KernelCase:
    """bf16 scores with masked (-1e9) positions; fp32 inside; local [1,1] accumulators (trace-time if)."""
    r = rng(22)
    rows, cols = 6, S_TILE * N_TILES
    scores = uniform(r, (rows, cols), -6, 6, BF16)
    mask = r.random((rows, cols)) < 0.2
    mask[:, 0] = False
    scores[mask] = BF16.type(-1e9)
    scale = 0.125
    s = rnd(f32(scores) * np.float32(scale), F32)
    ref = _softmax(s).astype(np.float32).astype(BF16)
    return single(attn_softmax, (scores, sentinel((rows, cols), BF16)), {1: ref}, BF16_TOL,
                  kwargs={"scale": scale}, spec="§9.10 gemma4 attn_softmax")


@pypto.frontend.jit
def reductions_both_axes(
    x: pypto.Tensor([16, 64], pypto.DT_FP32),
    row_max: pypto.Tensor([16, 1], pypto.DT_FP32),
    row_min: pypto.Tensor([16, 1], pypto.DT_FP32),
    col_max: pypto.Tensor([1, 64], pypto.DT_FP32),
    col_sum: pypto.Tensor([1, 64], pypto.DT_FP32),
    row_var: pypto.Tensor([16, 1], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 64)
    row_max[:] = pypto.amax(x, -1, keepdim=True)
    row_min[:] = pypto.amin(x, 1, keepdim=True)
    col_max[:] = pypto.amax(x, 0, keepdim=True)
    col_sum[:] = pypto.sum(x, 0, keepdim=True)
    row_var[:] = pypto.var(x, -1, keepdim=True)


def case_reductions_both_axes() -> KernelCase:
    x = uniform(rng(23), (16, 64), -5, 5)
    x64 = x.astype(np.float64)
    outs = (sentinel((16, 1)), sentinel((16, 1)), sentinel((1, 64)), sentinel((1, 64)), sentinel((16, 1)))
    expect = {
        1: x.max(-1, keepdims=True),
        2: x.min(1, keepdims=True),
        3: x.max(0, keepdims=True),
        4: x64.sum(0, keepdims=True).astype(F32),
        5: x64.var(-1, ddof=1, keepdims=True).astype(F32),
    }
    return single(reductions_both_axes, (x, *outs), expect, {1: FP32, 2: FP32, 3: FP32, 4: FP32_LOOSE,
                                                             5: FP32_LOOSE}, spec="§5.6 amax/amin/sum/var")


@pypto.frontend.jit
def bf16_row_sum(
    x: pypto.Tensor([8, 512], pypto.DT_BF16),
    out: pypto.Tensor([8, 1], pypto.DT_BF16),
):
    pypto.set_vec_tile_shapes(8, 512)
    out[:] = pypto.sum(x, -1, keepdim=True)


def case_bf16_sum_accumulates_in_fp32() -> KernelCase:
    """512 positive bf16 values: a bf16 running sum drifts by many ulps; FP32 accumulation rounds once."""
    x = uniform(rng(24), (8, 512), 0.0, 1.0, BF16)
    ref = f32(x).astype(np.float64).sum(-1, keepdims=True).astype(np.float32).astype(BF16)
    # issue 3 item 3 names the "sum FP32-only rule": a warning for sum on BF16 is allowed
    return single(bf16_row_sum, (x, sentinel((8, 1), BF16)), {1: ref}, BF16_TOL, clean=False,
                  spec="§5.1/§5.6 reductions accumulate in FP32")


CT = 64


@pypto.frontend.jit
def ragged_column_reductions(
    x: pypto.Tensor([8, pypto.DYNAMIC], pypto.DT_FP32),
    row_max: pypto.Tensor([8, 1], pypto.DT_FP32),
    row_sum: pypto.Tensor([8, 1], pypto.DT_FP32),
):
    cols = x.shape[1]
    pypto.set_vec_tile_shapes(8, CT)
    mx = pypto.tensor([8, 1], pypto.DT_FP32, "mx")
    sm = pypto.tensor([8, 1], pypto.DT_FP32, "sm")
    for j in pypto.loop((cols + CT - 1) // CT):
        valid = (cols - j * CT).min(CT)
        t = pypto.view(x, [8, CT], [0, j * CT], valid_shape=[8, valid])
        tmax = pypto.amax(t, -1, keepdim=True)
        tsum = pypto.sum(t, -1, keepdim=True)
        if pypto.is_loop_begin(j):
            mx[:] = tmax
            sm[:] = tsum
        else:
            mx[:] = pypto.maximum(mx, tmax)
            sm[:] = sm + tsum
        if pypto.is_loop_end(j):
            row_max[:] = mx * 1.0
            row_sum[:] = sm * 1.0


def case_ragged_column_tile_reductions_ignore_padding() -> KernelCase:
    """150 columns = two 64-wide tiles and a 22-wide tail; amax/sum over the tail ignore its padding."""
    calls = []
    for seed, cols in ((25, 150), (26, 64)):
        x = uniform(rng(seed), (8, cols), -10, -1)  # all negative: padding read as 0 would win the max
        calls.append(Call(ragged_column_reductions, (x, sentinel((8, 1)), sentinel((8, 1))),
                          {1: x.max(-1, keepdims=True), 2: x.astype(np.float64).sum(-1, keepdims=True).astype(F32)},
                          FP32_LOOSE))
    return KernelCase(calls=calls, spec="§4.1 reductions ignore invalid elements (last-axis tail)")
