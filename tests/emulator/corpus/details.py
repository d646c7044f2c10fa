"""Fine print of the spec that is easy to get wrong: cast-mode fallback, legit inf/NaN results (not poison),
BOOL outputs and masks, clip with one bound, ``add(alpha=)``, reductions without keepdim, begin/end of loops
with start and step, symbolic ``%`` in offsets, ``pypto.DYN`` (spec §2.4, §3.1, §3.3, §5.2–§5.6)."""

import numpy as np
import pypto
from _emucorpus import EXACT, F16, F32, FP32, I32, KernelCase, f32, rng, sentinel, single, uniform


@pypto.frontend.jit
def cast_mode_fallback(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    h: pypto.Tensor([8, 64], pypto.DT_FP16),
    to_int: pypto.Tensor([8, 64], pypto.DT_INT32),
    widened: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    to_int[:] = pypto.cast(x, pypto.DT_INT32, pypto.CastMode.CAST_ODD)
    widened[:] = pypto.cast(h, pypto.DT_FP32, pypto.CastMode.CAST_FLOOR)


def case_cast_unsupported_mode_falls_back_and_widening_ignores_mode() -> KernelCase:
    """CAST_ODD exists only for FP32->FP16: for FP32->INT32 it falls back to the default (TRUNC)."""
    r = rng(170)
    x = (r.integers(-40, 40, size=(8, 64)) + r.choice([0.25, 0.5, 0.75], size=(8, 64))).astype(F32)
    h = uniform(r, (8, 64), -3, 3, F16)
    return single(cast_mode_fallback, (x, h, np.zeros((8, 64), I32), sentinel((8, 64))),
                  {2: np.trunc(x).astype(I32), 3: f32(h)}, EXACT, spec="§5.5 fallback to default, widening exact")


@pypto.frontend.jit
def legit_inf_nan(
    x: pypto.Tensor([4, 64], pypto.DT_FP32),
    out: pypto.Tensor([4, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(4, 64)
    out[:] = pypto.rsqrt(x)


def case_rsqrt_of_zero_and_negative_is_inf_and_nan() -> KernelCase:
    """§5.3 rsqrt(0) = inf, rsqrt(<0) = nan: real results, written back without an error (not poison)."""
    x = uniform(rng(171), (4, 64), 0.5, 4)
    x[0, :8] = 0.0
    x[1, :8] = -1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = (1.0 / np.sqrt(x.astype(np.float64))).astype(F32)
    return single(legit_inf_nan, (x, sentinel(x.shape)), {1: ref}, FP32, spec="§5.3 rsqrt edge values")


@pypto.frontend.jit
def bool_outputs_and_masks(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    y: pypto.Tensor([8, 64], pypto.DT_FP32),
    mask: pypto.Tensor([8, 64], pypto.DT_BOOL),
    gt: pypto.Tensor([8, 64], pypto.DT_BOOL),
    sel: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    gt[:] = x > y
    sel[:] = pypto.where(mask, pypto.clip(x, min=0.0), y)


def case_bool_outputs_and_bool_mask_argument() -> KernelCase:
    r = rng(172)
    x, y = uniform(r, (8, 64)), uniform(r, (8, 64))
    mask = r.random((8, 64)) < 0.5
    outs = (np.zeros((8, 64), bool), sentinel((8, 64)))
    return single(bool_outputs_and_masks, (x, y, mask, *outs), {3: x > y, 4: np.where(mask, np.maximum(x, 0), y)},
                  EXACT, spec="§5.4 comparisons -> BOOL, where on a BOOL argument, §5.2 clip(min only)")


@pypto.frontend.jit
def add_alpha_and_sum_no_keepdim(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    y: pypto.Tensor([8, 64], pypto.DT_FP32),
    axpy: pypto.Tensor([8, 64], pypto.DT_FP32),
    rows: pypto.Tensor([8], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    axpy[:] = pypto.add(x, y, alpha=2.0)
    s = pypto.sum(x, -1)
    pypto.set_vec_tile_shapes(8)
    rows[:] = s * 1.0


def case_add_alpha_and_sum_without_keepdim() -> KernelCase:
    r = rng(173)
    x, y = uniform(r, (8, 64)), uniform(r, (8, 64))
    return single(add_alpha_and_sum_no_keepdim, (x, y, sentinel((8, 64)), sentinel((8,))),
                  {2: x + np.float32(2.0) * y, 3: x.astype(np.float64).sum(-1).astype(F32)}, FP32,
                  spec="§5.2 add alpha (0.2.0), §5.6 keepdim=False removes the axis")


@pypto.frontend.jit
def begin_end_with_start_and_step(
    x: pypto.Tensor([12, 32], pypto.DT_FP32),
    out: pypto.Tensor([12, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(1, 32)
    for i in pypto.loop(1, 10, 3):
        t = x[i:i + 1, :] * 1.0
        if pypto.is_loop_begin(i):
            t = t + 100.0
        if pypto.is_loop_end(i):
            t = t + 1000.0
        out[i:i + 1, :] = t


def case_is_loop_begin_end_with_start_and_step() -> KernelCase:
    """loop(1, 10, 3) runs 1, 4, 7: begin at i == start (1), end where i + step >= stop (7)."""
    x = uniform(rng(174), (12, 32))
    out = sentinel((12, 32))
    ref = out.copy()
    ref[1] = x[1] + np.float32(100.0)
    ref[4] = x[4]
    ref[7] = x[7] + np.float32(1000.0)
    return single(begin_end_with_start_and_step, (x, out), {1: ref}, FP32, spec="§3.3 begin/end definitions")


@pypto.frontend.jit
def modulo_offsets(
    x: pypto.Tensor([pypto.DYN, 32], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYN, 32], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(8, 32)
    for i in pypto.loop(n // 8):
        src = pypto.view(x, [8, 32], [((i + 1) % (n // 8)) * 8, 0])
        pypto.assemble(src * 1.0, [i * 8, 0], out)


def case_symbolic_modulo_in_offsets_rotates_blocks() -> KernelCase:
    x = uniform(rng(175), (32, 32))
    ref = np.roll(x.reshape(4, 8, 32), -1, axis=0).reshape(32, 32)
    return single(modulo_offsets, (x, sentinel(x.shape)), {1: ref}, EXACT, spec="§2.4 % and // on symbols; DYN")
