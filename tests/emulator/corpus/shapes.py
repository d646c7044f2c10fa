"""Shape and data-movement kernels: a 2-D reshape of a 4-D dynamic tensor inside nested loops, transpose,
concat, unsqueeze + expand_clone, gathermask, full, and the BNTrainingReduce kernel (reshape inplace,
sums over two axes, move) named among the §9 candidates (spec §2.6, §4.1–§4.5)."""

import numpy as np
import pypto
from _emucorpus import EXACT, F32, FP32, FP32_LOOSE, KernelCase, rng, sentinel, single, uniform

SEQ, HH, DD = 8, 4, 32


@pypto.frontend.jit
def reshape_4d_nested(
    x: pypto.Tensor([pypto.DYNAMIC, SEQ, HH, DD], pypto.DT_FP32),
    w: pypto.Tensor([1, HH * DD], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, SEQ, HH, DD], pypto.DT_FP32),
    row_sum: pypto.Tensor([pypto.DYNAMIC, SEQ], pypto.DT_FP32),
):
    b = x.shape[0]
    for i in pypto.loop(b, name="batch", idx_name="bi"):
        for s in pypto.loop(SEQ // 4, name="seq", idx_name="si"):
            pypto.set_vec_tile_shapes(4, HH * DD)
            xt = pypto.view(x, [1, 4, HH, DD], [i, s * 4, 0, 0])
            x2 = pypto.reshape(xt, [4, HH * DD])
            y2 = x2 * w + 1.0
            rs = pypto.sum(x2, -1, keepdim=True)
            pypto.set_vec_tile_shapes(1, 4, HH, DD)
            pypto.assemble(pypto.reshape(y2, [1, 4, HH, DD]), [i, s * 4, 0, 0], out)
            pypto.set_vec_tile_shapes(1, 8)
            pypto.assemble(pypto.reshape(rs, [1, 4]), [i, s * 4], row_sum)


def case_reshape_4d_dynamic_nested_loops() -> KernelCase:
    r = rng(60)
    b = 3
    x, w = uniform(r, (b, SEQ, HH, DD)), uniform(r, (1, HH * DD))
    ref = (x.reshape(b, SEQ, HH * DD) * w + np.float32(1.0)).reshape(x.shape)
    sums = x.astype(np.float64).reshape(b, SEQ, HH * DD).sum(-1).astype(F32)
    return single(reshape_4d_nested, (x, w, sentinel(x.shape), sentinel((b, SEQ))), {2: ref, 3: sums},
                  {2: FP32, 3: FP32_LOOSE}, spec="§4.4 reshape, §3.1 nested loops, dynamic 4-D")


@pypto.frontend.jit
def transpose_2d_3d(
    x: pypto.Tensor([32, 64], pypto.DT_FP32),
    y: pypto.Tensor([4, 16, 32], pypto.DT_FP32),
    xt: pypto.Tensor([64, 32], pypto.DT_FP32),
    yt: pypto.Tensor([4, 32, 16], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(32, 32)
    xt[:] = pypto.transpose(x, 0, 1)
    pypto.set_vec_tile_shapes(1, 32, 32)
    yt[:] = pypto.transpose(y, 1, 2)


def case_transpose_2d_3d() -> KernelCase:
    r = rng(61)
    x, y = uniform(r, (32, 64)), uniform(r, (4, 16, 32))
    return single(transpose_2d_3d, (x, y, sentinel((64, 32)), sentinel((4, 32, 16))),
                  {2: np.ascontiguousarray(x.T), 3: np.ascontiguousarray(y.transpose(0, 2, 1))}, EXACT,
                  spec="§4.4 transpose")


@pypto.frontend.jit
def concat_two_axes(
    a: pypto.Tensor([8, 32], pypto.DT_FP32),
    b: pypto.Tensor([8, 32], pypto.DT_FP32),
    cat0: pypto.Tensor([16, 32], pypto.DT_FP32),
    cat1: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 64)
    cat0[:] = pypto.concat([a, b], dim=0)
    cat1[:] = pypto.concat([a, b * 2.0], dim=1)


def case_concat_two_axes() -> KernelCase:
    r = rng(62)
    a, b = uniform(r, (8, 32)), uniform(r, (8, 32))
    expect = {2: np.concatenate([a, b], 0), 3: np.concatenate([a, b * np.float32(2.0)], 1)}
    return single(concat_two_axes, (a, b, sentinel((16, 32)), sentinel((8, 64))), expect, EXACT,
                  spec="§4.4 concat")


@pypto.frontend.jit
def unsqueeze_expand_clone(
    col: pypto.Tensor([16], pypto.DT_FP32),
    x: pypto.Tensor([16, 64], pypto.DT_FP32),
    out: pypto.Tensor([16, 64], pypto.DT_FP32),
    copy: pypto.Tensor([16, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 64)
    wide = pypto.expand_clone(pypto.unsqueeze(col, 1), [16, 64])
    out[:] = wide * x
    copy[:] = pypto.clone(x)


def case_unsqueeze_expand_clone() -> KernelCase:
    r = rng(63)
    col, x = uniform(r, (16,)), uniform(r, (16, 64))
    return single(unsqueeze_expand_clone, (col, x, sentinel((16, 64)), sentinel((16, 64))),
                  {2: col[:, None] * x, 3: x.copy()}, EXACT, spec="§4.4 unsqueeze, expand_clone, clone")


@pypto.frontend.jit
def gathermask_full(
    x: pypto.Tensor([8, 64], pypto.DT_FP32),
    even: pypto.Tensor([8, 32], pypto.DT_FP32),
    scaled: pypto.Tensor([8, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 64)
    even[:] = pypto.gathermask(x, 1)
    scaled[:] = x * pypto.full([8, 64], 2.5, pypto.DT_FP32)


def case_gathermask_and_full() -> KernelCase:
    x = uniform(rng(64), (8, 64))
    return single(gathermask_full, (x, sentinel((8, 32)), sentinel((8, 64))),
                  {1: np.ascontiguousarray(x[:, 0::2]), 2: x * np.float32(2.5)}, EXACT,
                  spec="§4.5 gathermask, §2.6 full")


@pypto.frontend.jit
def bn_training_reduce(
    x: pypto.Tensor(),
    sum_out: pypto.Tensor(),
    square_sum_out: pypto.Tensor(),
):
    n, c, h, w = x.shape
    pypto.set_vec_tile_shapes(1, c, h * w)
    x3 = pypto.reshape(x, [n, c, h * w], inplace=True)
    s3 = pypto.sum(x3, -1, keepdim=True)
    q3 = pypto.sum(x3 * x3, -1, keepdim=True)
    pypto.set_vec_tile_shapes(n, c)
    s2 = pypto.reshape(s3, [n, c])
    q2 = pypto.reshape(q3, [n, c])
    sum_out.move(pypto.sum(s2, 0, keepdim=True))
    square_sum_out.move(pypto.sum(q2, 0, keepdim=True))


def case_bn_training_reduce() -> KernelCase:
    x = uniform(rng(65), (4, 16, 8, 8), -2, 2)
    x64 = x.astype(np.float64)
    expect = {1: x64.sum((0, 2, 3))[None, :].astype(F32), 2: (x64 * x64).sum((0, 2, 3))[None, :].astype(F32)}
    return single(bn_training_reduce, (x, sentinel((1, 16)), sentinel((1, 16))), expect, FP32_LOOSE,
                  spec="§9 BNTrainingReduce (Tensor() annotations, reshape inplace, move)")
