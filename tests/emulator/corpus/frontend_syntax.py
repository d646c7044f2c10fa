"""Statement and indexing forms the PTO parser accepts (spec §1.2, §1.5, §2.3): mixed int/slice keys,
negative indices, augmented slice assignment, views of views, annotated/tuple assignment, list loops with
tuple targets, assert/del/pass, annotation forms (``[DYNAMIC, ...]``, ``Tensor([], dtype)``, STATIC),
dtype-driven trace-time branches and non-tensor parameters of several kinds."""

from dataclasses import dataclass

import numpy as np
import pypto
from _emucorpus import BF16, EXACT, Call, KernelCase, f32, rnd, rng, sentinel, single, uniform


@pypto.frontend.jit
def mixed_int_slice_keys(
    x: pypto.Tensor([4, 8, 32], pypto.DT_FP32),
    out: pypto.Tensor([4, 8, 32], pypto.DT_FP32),
    last: pypto.Tensor([8, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    for b in range(4):
        out[b, :, :] = x[b, :, :] * float(b + 1)
    last[:] = x[-1, :, :] + x[-1, -8:, :]


def case_mixed_int_slice_keys_and_negative_indices() -> KernelCase:
    x = uniform(rng(160), (4, 8, 32))
    ref = x * np.arange(1, 5, dtype=np.float32)[:, None, None]
    return single(mixed_int_slice_keys, (x, sentinel(x.shape), sentinel((8, 32))), {1: ref, 2: x[-1] + x[-1]},
                  EXACT, spec="§2.3 mixed int/slice keys (reshape), negative ints wrap")


@pypto.frontend.jit
def augmented_slice_assign(
    x: pypto.Tensor([8, 32], pypto.DT_FP32),
    out: pypto.Tensor([16, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    out[0:8, :] += x
    out[8:16, :] *= 2.0


def case_augmented_slice_assignment_reads_and_writes_back() -> KernelCase:
    r = rng(161)
    x, out0 = uniform(r, (8, 32)), uniform(r, (16, 32))
    ref = out0.copy()
    ref[:8] += x
    ref[8:] *= np.float32(2.0)
    return single(augmented_slice_assign, (x, out0.copy()), {1: ref}, EXACT,
                  spec="§1.5 `t[...] op= v` reads the slice and writes it back")


@pypto.frontend.jit
def view_of_view(
    x: pypto.Tensor([32, 64], pypto.DT_FP32),
    out: pypto.Tensor([4, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(4, 32)
    outer = pypto.view(x, [16, 64], [8, 0])
    inner = outer.view([4, 32], [2, 16])
    out[:] = inner + 0.5


def case_view_of_view_offsets_compose() -> KernelCase:
    x = uniform(rng(162), (32, 64))
    return single(view_of_view, (x, sentinel((4, 32))), {1: x[10:14, 16:48] + np.float32(0.5)}, EXACT,
                  spec="§4.1 views of views")


@dataclass(frozen=True)
class Scales:
    a: float = 2.0
    b: float = -1.0


@pypto.frontend.jit
def statements_and_params(
    x: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
    y: pypto.Tensor([], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, 32], pypto.DT_FP32),
    offsets: list,
    cfg: Scales = Scales(),
    flip: bool = False,
):
    assert x.dim == 3, "rank 3 expected"
    pypto.set_vec_tile_shapes(1, 8, 32)
    n = x.shape[0]
    s: int = x.shape[1]
    a, b = cfg.a, cfg.b
    for xs, ys in [(x, y), (y, x)]:
        tmp = xs * a + ys * b
        del tmp
    for i in pypto.loop(n):
        for _off in offsets:
            pass
        xi = x[i:i + 1, :, :]
        yi = pypto.view(y, [1, s, 32], [i, 0, 0])
        if flip:
            res = yi * a + xi * b
        else:
            res = xi * a + yi * b
        out[i:i + 1, :, :] = res


def case_statements_annotations_and_non_tensor_params() -> KernelCase:
    r = rng(163)
    x, y = uniform(r, (3, 8, 32)), uniform(r, (3, 8, 32))
    calls = [
        Call(statements_and_params, (x, y, sentinel(x.shape)), {2: x * np.float32(2) - y}, EXACT,
             {"offsets": [0, 1]}),
        Call(statements_and_params, (x, y, sentinel(x.shape)), {2: y * np.float32(3) + x * np.float32(0.5)}, EXACT,
             {"offsets": [5], "cfg": Scales(3.0, 0.5), "flip": True}),
    ]
    return KernelCase(calls=calls, spec="§1.2 annotation forms, §1.3 non-tensor params/defaults, §1.5 statements")


@pypto.frontend.jit
def dtype_driven_branch(
    x: pypto.Tensor(),
    out: pypto.Tensor(),
):
    if x.dtype == pypto.DT_BF16:
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.cast(pypto.cast(x, pypto.DT_FP32) * 3.0, pypto.DT_BF16)
    else:
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x * 3.0


def case_trace_time_branch_on_dtype() -> KernelCase:
    r = rng(164)
    xb, xf = uniform(r, (8, 64), dtype=BF16), uniform(r, (8, 64))
    calls = [Call(dtype_driven_branch, (xb, sentinel((8, 64), BF16)),
                  {1: rnd(f32(xb) * np.float32(3.0), BF16).astype(BF16)}, EXACT),
             Call(dtype_driven_branch, (xf, sentinel((8, 64))), {1: xf * np.float32(3.0)}, EXACT)]
    return KernelCase(calls=calls, spec="§1.2 Tensor() takes shape and dtype from the argument; §1.5 Python if")
