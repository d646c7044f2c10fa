"""Acceptance fixes found by the s29 crosscheck (60 probes, bench/crosscheck_probes/s29_*.py, 5 Dec 2026): kernels the
real pypto 0.2.0 wheel (RunMode.SIM) refused and the emulator ran, or ran differently. The wheel's outcome is in each
test's docstring (re-checked against the wheel by tests/gym/test_fidelity.py's f13-f16 probes); the emulator must now
give the same, under both targets, and keep running what the wheel compiles."""

import ml_dtypes
import numpy as np
import pytest
from test_crosscheck_s19 import _err, _run  # one session per kernel, under a compat target (this directory)

import runtime.emulator as emu

pypto = emu.install()
F32, BF16 = pypto.DT_FP32, pypto.DT_BF16
RNG = np.random.default_rng(29)


def _rand(*shape, dtype=np.float32):
    return RNG.random(shape).astype(dtype)


# ---- pad ------------------------------------------------------------------------------------------------------------

def _pad_kernel(shape_in, shape_out, widths, value=0.0):
    @pypto.frontend.jit
    def k(x: pypto.Tensor(shape_in, F32), out: pypto.Tensor(shape_out, F32)):
        pypto.set_vec_tile_shapes(*shape_out)
        out[:] = pypto.pad(x, widths, "constant", value)

    return k


@pytest.mark.parametrize("compat", ["0.2.0", "head"])
@pytest.mark.parametrize(("shape_in", "widths", "np_widths"), [
    ([24], [0, 8], [[0, 8]]),
    ([8, 24], [0, 8, 0, 0], [[0, 0], [0, 8]]),
    ([8, 24], [0, 0, 0, 8], [[0, 8], [0, 0]]),
    ([8, 24], [0, 8, 0, 8], [[0, 8], [0, 8]]),
    ([2, 8, 24], [0, 8, 0, 8], [[0, 0], [0, 8], [0, 8]]),
])
def test_pad_right_and_bottom_is_numpys_pad(compat, shape_in, widths, np_widths):
    """Wheel: accepted (f13b). Two values pad the only axis of a 1-D tensor; four the last two axes of any other."""
    shape_out = [s + a + b for s, (a, b) in zip(shape_in, np_widths, strict=True)]
    x, out = _rand(*shape_in), np.full(shape_out, 7.0, np.float32)
    _run(_pad_kernel(shape_in, shape_out, widths, float("-inf")), x, out, compat=compat)
    np.testing.assert_array_equal(out, np.pad(x, np_widths, constant_values=-np.inf))


@pytest.mark.parametrize(("shape_in", "shape_out", "widths", "value", "message"), [
    ([8, 24], [8, 32], [0, 8], 0.0, "Pad: only support last 2 axis pad."),  # torch's last-axis-only list (f13)
    ([2, 8, 24], [2, 8, 32], [0, 8, 0, 0, 0, 0], 0.0, "Pad: only support last 2 axis pad."),
    ([24], [32], [0, 8, 0, 0], 0.0, "Pad: 1D tensor only support 2 padding values."),  # f13c: padded twice before
    ([8, 24], [8, 32], [8, 0, 0, 0], 0.0, "Pad: only support bottom and right pad."),
    ([8, 24], [16, 24], [0, 0, 8, 0], 0.0, "Pad: only support bottom and right pad."),
    ([8, 24], [8, 32], [0, 8, 0, 0], 1.5, "Pad: pad value must be -inf, inf, or 0."),
])
def test_pad_refuses_what_the_wheel_refuses_with_its_fc0000(shape_in, shape_out, widths, value, message):
    """Wheel: `Errcode: FC0000!` with these messages (pad.cpp, TensorPadOperation), for both targets."""
    for compat in ("0.2.0", "head"):
        e = _err(_pad_kernel(shape_in, shape_out, widths, value), _rand(*shape_in), np.zeros(shape_out, np.float32),
                 compat=compat)
        assert e.code == "FC0000" and message in str(e), (compat, str(e))


# ---- clip -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("form", "first"), [
    ("tensor-min", "Clip(): incompatible function arguments"),
    ("tensor-max", "__init__(): incompatible constructor arguments"),
])
def test_clip_with_a_tensor_and_a_scalar_bound_is_a_type_error(form, first):
    """Wheel (f14): `TypeError: Clip(): incompatible function arguments` (a tensor min with a scalar max) and
    `TypeError: __init__(): incompatible constructor arguments` (Element built from the tensor max)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 32], F32), t: pypto.Tensor([16, 32], F32), out: pypto.Tensor([16, 32], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        if form == "tensor-min":
            out[:] = pypto.clip(x, t, 0.9)
        else:
            out[:] = pypto.clip(x, 0.1, t)

    e = _err(k, _rand(16, 32), _rand(16, 32), np.zeros((16, 32), np.float32))
    assert e.kind == "TypeError" and first in str(e) and "two tensors or two scalars" in str(e)


def test_clip_keeps_every_form_the_wheel_takes():
    """Wheel: ok for two tensors, two scalars, one bound of either kind, and none."""
    x, lo, hi = _rand(16, 32), _rand(16, 32) * 0.2, 0.8 + _rand(16, 32) * 0.2
    forms = {"tt": lambda a, b, c: pypto.clip(a, b, c), "ss": lambda a, b, c: pypto.clip(a, 0.25, 0.75),
             "t-": lambda a, b, c: pypto.clip(a, b, None), "-t": lambda a, b, c: pypto.clip(a, None, c),
             "s-": lambda a, b, c: pypto.clip(a, 0.25), "--": lambda a, b, c: pypto.clip(a)}
    want = {"tt": np.clip(x, lo, hi), "ss": np.clip(x, 0.25, 0.75), "t-": np.maximum(x, lo), "-t": np.minimum(x, hi),
            "s-": np.maximum(x, np.float32(0.25)), "--": x}
    for name, f in forms.items():
        out = np.zeros((16, 32), np.float32)
        _run(_clip_kernel(f), x, lo, hi, out)
        np.testing.assert_array_equal(out, want[name], err_msg=name)


def _clip_kernel(f):
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 32], F32), b: pypto.Tensor([16, 32], F32), c: pypto.Tensor([16, 32], F32),
          out: pypto.Tensor([16, 32], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = f(a, b, c)

    return k


# ---- a view of an argument written straight into an argument -------------------------------------------------------

CHECK = "CHECK FAILED: lastDimBytes % BLOCK_SIZE == 0"


def _copy_kernel(tile, how):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], BF16), out: pypto.Tensor([pypto.DYNAMIC, 32], BF16)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(*tile)
        for i in pypto.loop(n // 8, name="r", idx_name="i"):
            if how == "assemble":
                t = pypto.view(x, [8, 32], [i * 8, 0])
                pypto.assemble(t, [i * 8, 0], out)
            elif how == "slices":
                out[i * 8:i * 8 + 8, :] = x[i * 8:i * 8 + 8, :]
            else:  # computed first: no framework copy
                t = pypto.view(x, [8, 32], [i * 8, 0])
                pypto.assemble(t * 1.0, [i * 8, 0], out)

    return k


@pytest.mark.parametrize("compat", ["0.2.0", "head"])
@pytest.mark.parametrize("how", ["assemble", "slices"])
def test_a_copy_kernel_under_an_unaligned_tile_is_refused_as_the_wheel_refuses_it(compat, how):
    """Wheel (f15): `CHECK FAILED: lastDimBytes % BLOCK_SIZE == 0 ... FwkOp tile shape's last dim is not aligned.
    Last dim bytes: 16` for a bf16 view copied into the output under tile (8, 8); a ParserError there."""
    x = _rand(16, 32, dtype=ml_dtypes.bfloat16)
    e = _err(_copy_kernel((8, 8), how), x, np.zeros_like(x), compat=compat)
    assert e.kind == "ParserError" and CHECK in str(e) and "Last dim bytes: 16" in str(e), str(e)
    assert "vec tile [8, 8]" in str(e) and e.line is not None
    # where the view was recorded is named by its line; no file path (a host fact) enters the message agents read
    assert e.file and e.file not in e.message and " at line " in e.message, e.message


@pytest.mark.parametrize(("tile", "how"), [((8, 16), "assemble"), ((8, 16), "slices"), ((8, 8), "computed")])
def test_a_copy_kernel_runs_under_an_aligned_tile_or_when_it_computes(tile, how):
    """Wheel: ok (f15b: tile (8, 16) is 32 bytes; a view read by a compute op needs no framework copy)."""
    x = _rand(16, 32, dtype=ml_dtypes.bfloat16)
    out = np.zeros_like(x)
    _run(_copy_kernel(tile, how), x, out)
    np.testing.assert_array_equal(out, x)


def _reshape_kernel(body):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), out: pypto.Tensor([8, 32, 1], F32)):
        if body == "reshape":
            pypto.set_vec_tile_shapes(8, 32, 1)
            out[:] = pypto.reshape(x, [8, 32, 1])
        elif body == "unsqueeze":
            pypto.set_vec_tile_shapes(8, 32, 1)
            out[:] = pypto.unsqueeze(x, -1)
        elif body == "unaligned-view-then-reshape":  # only the op written into the output counts
            pypto.set_vec_tile_shapes(8, 1)
            v = pypto.view(x, [8, 32], [0, 0])
            pypto.set_vec_tile_shapes(8, 32, 8)
            out[:] = pypto.reshape(v, [8, 32, 1])
        elif body == "aligned-view-then-reshape":
            pypto.set_vec_tile_shapes(8, 32)
            v = pypto.view(x, [8, 32], [0, 0])
            pypto.set_vec_tile_shapes(8, 32, 1)
            out[:] = pypto.reshape(v, [8, 32, 1])
        elif body == "bad-tile-at-reshape":
            pypto.set_vec_tile_shapes(8, 32, 1)
            t = pypto.reshape(x, [8, 32, 1])
            pypto.set_vec_tile_shapes(8, 32, 8)
            out[:] = t
        elif body == "good-tile-at-reshape":
            pypto.set_vec_tile_shapes(8, 32, 8)
            t = pypto.reshape(x, [8, 32, 1])
            pypto.set_vec_tile_shapes(8, 32, 1)
            out[:] = t
        elif body == "no-tile-at-reshape":
            t = pypto.reshape(x, [8, 32, 1])
            pypto.set_vec_tile_shapes(8, 32, 1)
            out[:] = t
        elif body == "inplace":
            pypto.set_vec_tile_shapes(8, 32, 1)
            out[:] = pypto.reshape(x, [8, 32, 1], inplace=True)
        elif body == "computed":
            pypto.set_vec_tile_shapes(8, 32, 1)
            out[:] = pypto.reshape(x, [8, 32, 1]) + 0.0
        elif body == "of-computed":  # a reshape of a computed tile, not of the argument
            pypto.set_vec_tile_shapes(8, 32)
            y = x * 1.0
            pypto.set_vec_tile_shapes(8, 32, 1)
            out[:] = pypto.reshape(y, [8, 32, 1])
        elif body == "via-local":
            pypto.set_vec_tile_shapes(8, 32, 1)
            u = pypto.tensor([8, 32, 1], F32, "u")
            u[:] = pypto.reshape(x, [8, 32, 1])
            out[:] = u + 0.0

    return k


@pytest.mark.parametrize("body", ["reshape", "unsqueeze", "aligned-view-then-reshape", "bad-tile-at-reshape"])
def test_a_reshape_of_an_argument_into_the_output_takes_the_tile_at_the_reshape(body):
    """Wheel: `CHECK FAILED ... Last dim bytes: 4` (reshape / unsqueeze straight into the output under a tile whose
    last axis is 1, also of a view of the argument; the tile in effect at the reshape decides, f15d)."""
    e = _err(_reshape_kernel(body), _rand(8, 32), np.zeros((8, 32, 1), np.float32))
    assert e.kind == "ParserError" and CHECK in str(e) and "Last dim bytes: 4" in str(e), str(e)


@pytest.mark.parametrize("body", ["good-tile-at-reshape", "no-tile-at-reshape", "unaligned-view-then-reshape",
                                  "inplace", "computed", "of-computed", "via-local"])
def test_what_the_wheel_compiles_still_runs(body):
    """Wheel: ok for each (the tile at the reshape aligned or unset - whatever the tile of the view it reshapes -, an
    inplace reshape, a compute op in between, a move into a local; f15c)."""
    x = _rand(8, 32)
    out = np.zeros((8, 32, 1), np.float32)
    _run(_reshape_kernel(body), x, out)
    np.testing.assert_allclose(out, x.reshape(8, 32, 1), rtol=1e-6)


def test_a_whole_argument_moved_into_the_output_needs_no_aligned_tile():
    """Wheel: `out[:] = x` of [8, 1] arguments under tile (8, 1) is ok (no view: no framework copy)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 1], F32), out: pypto.Tensor([8, 1], F32)):
        pypto.set_vec_tile_shapes(8, 1)
        out[:] = x

    x = _rand(8, 1)
    out = np.zeros_like(x)
    _run(k, x, out)
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("body", ["view-assemble", "slices", "reshape-move"])
def test_a_view_written_into_an_argument_with_no_tile_set_is_f21004(body):
    """Wheel (f15e, the difftest's k0068 class): `Errcode: F21004! op [REGISTER_COPY]tile shape not set` - the copy it
    inserts for the write needs a vec tile."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), out: pypto.Tensor([8, 32], F32)):
        if body == "view-assemble":
            pypto.assemble(pypto.view(x, [8, 32], [0, 0]), [0, 0], out)
        elif body == "slices":
            out[0:4, :] = x[0:4, :]
        else:
            out[:] = pypto.reshape(pypto.reshape(x, [256]), [8, 32])

    e = _err(k, _rand(8, 32), np.zeros((8, 32), np.float32))
    assert e.code == "F21004" and "op [REGISTER_COPY]tile shape not set" in str(e), str(e)


@pytest.mark.parametrize("body", ["tile-after-view", "whole-argument"])
def test_a_write_with_a_tile_in_effect_or_of_a_whole_argument_needs_no_earlier_tile(body):
    """Wheel: ok (f15f: the tile set between the view and the write; `out[:] = x` with no tile at all)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), out: pypto.Tensor([8, 32], F32)):
        if body == "tile-after-view":
            v = pypto.view(x, [8, 32], [0, 0])
            pypto.set_vec_tile_shapes(8, 32)
            pypto.assemble(v, [0, 0], out)
        else:
            out[:] = x

    x = _rand(8, 32)
    out = np.zeros_like(x)
    _run(k, x, out)
    np.testing.assert_array_equal(out, x)


# ---- a 2-D reduction's tile and the vector buffer -------------------------------------------------------------------

# (op, axis, shape, tile, dtype) -> the wheel's "in/output total size" (None: it compiled), pypto 0.2.0 SIM, s29
UB_CASES = [
    ("sum", 1, (40, 1024), (40, 1024), "FP32", 247040),
    ("sum", 0, (40, 1024), (40, 1024), "FP32", 249856),
    ("sum", 1, (64, 512), (64, 512), "FP32", 198656),
    ("sum", 0, (8, 4096), (8, 4096), "FP32", 212992),
    ("sum", 0, (16, 2048), (16, 2048), "FP32", 204800),
    ("amax", 1, (16, 2048), (16, 2048), "FP32", 197120),
    ("amax", 1, (8, 4096), (8, 4096), "FP32", 196864),
    ("amax", 1, (128, 512), (128, 512), "FP16", 200704),
    ("sum", 1, (64, 512), (64, 512), "BF16", 198656),  # summed in FP32
    ("sum", 1, (60, 512), (60, 512), "FP32", None),
    ("sum", 0, (60, 512), (60, 512), "FP32", None),
    ("amax", 1, (96, 512), (96, 512), "FP16", None),
    ("sum", 1, (64, 512), (32, 512), "FP32", None),  # a smaller tile
    ("sum", 1, (32, 512), (64, 512), "FP32", None),  # the tile clipped to the tensor
    ("sum", 2, (4, 16, 512), (4, 16, 512), "FP32", None),  # 3-D: another rule, not checked
]
_NP = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16}


@pytest.mark.parametrize(("fn", "ax", "shape", "tile", "dt", "total"), UB_CASES)
def test_a_2d_reduction_whose_tile_exceeds_the_vector_buffer_fails_as_the_wheels_pass(fn, ax, shape, tile, dt, total):
    """Wheel: `FFFFFF` with `OP ROWSUM_SINGLE[...] in/output total size [N] exceeds MEM_UB size [196608]!` - the same
    N here (input tile + output tile + half the input tile), and the kernels it compiled still run."""
    oshape = list(shape)
    oshape[ax] = 1
    ddt = getattr(pypto, f"DT_{dt}")

    @pypto.frontend.jit
    def k(x: pypto.Tensor(list(shape), ddt), out: pypto.Tensor(oshape, ddt)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.sum(x, ax, keepdim=True) if fn == "sum" else pypto.amax(x, ax, keepdim=True)

    x = RNG.uniform(-1, 1, shape).astype(_NP[dt])
    out = np.zeros(oshape, _NP[dt])
    if total is None:
        _run(k, x, out)
        want = x.astype(np.float32).sum(ax, keepdims=True) if fn == "sum" else x.astype(np.float32).max(ax, keepdims=True)
        np.testing.assert_allclose(out.astype(np.float32), want, rtol=1e-2, atol=1e-2)
        return
    e = _err(k, x, out)
    assert e.code == "FFFFFF" and f"in/output total size [{total}] exceeds MEM_UB size [196608]!" in str(e), str(e)


# ---- argsort ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("shape", "dim", "descending"), [((32, 64), 0, False), ((32, 64), 0, True), ((2, 32, 32), 1, False),
                                                         ((8, 64), None, True), ((8, 64), -1, False)])
def test_argsort_sorts_along_its_dim(shape, dim, descending):
    """Wheel (f17): `ArgSort(input, -1 if dim is None else dim, descending)`; the emulator sorted the last axis
    whatever `dim` was (a silently wrong index tensor). Ties included: the order is numpy's stable sort."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor(list(shape), F32), out: pypto.Tensor(list(shape), pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(*shape)
        out[:] = pypto.argsort(x, dim, descending)

    x = np.round(_rand(*shape) * 8).astype(np.float32)  # many ties
    out = np.zeros(shape, np.int32)
    _run(k, x, out)
    axis = -1 if dim is None else dim
    want = np.argsort(-x if descending else x, axis=axis, kind="stable")
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize(("shape", "tile", "dim", "axis", "got"), [((8, 16), (8, 16), -1, 1, 16), ((8, 48), (8, 48), -1, 1, 48),
                                                                  ((16, 64), (16, 64), 0, 0, 16),
                                                                  ((2, 16, 32), (2, 16, 32), 1, 1, 16)])
def test_argsort_needs_a_tile_of_32s_along_the_sorted_axis(shape, tile, dim, axis, got):
    """Wheel (f17b): `FC1001 The size of the tile shape along axis N must be a multiple of 32. Got T.`"""
    @pypto.frontend.jit
    def k(x: pypto.Tensor(list(shape), F32), out: pypto.Tensor(list(shape), pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.argsort(x, dim)

    e = _err(k, _rand(*shape), np.zeros(shape, np.int32))
    assert e.code == "FC1001" and f"along axis {axis} must be a multiple of 32. Got {got}." in str(e), str(e)


def test_argsort_takes_a_tile_larger_than_the_tensor_and_topk_is_not_bound():
    """Wheel: ok for argsort of a [8, 48] tensor under tile (8, 64), and topk under a tile of 16."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 48], F32), y: pypto.Tensor([8, 16], F32), out: pypto.Tensor([8, 48], pypto.DT_INT32),
          top: pypto.Tensor([8, 4], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.argsort(x, -1)
        pypto.set_vec_tile_shapes(8, 16)
        top[:] = pypto.topk(y, 4, -1)[1]

    x, y = _rand(8, 48), _rand(8, 16)
    out, top = np.zeros((8, 48), np.int32), np.zeros((8, 4), np.int32)
    _run(k, x, y, out, top)
    np.testing.assert_array_equal(out, np.argsort(x, -1, kind="stable"))
    np.testing.assert_array_equal(top, np.argsort(-y, -1, kind="stable")[:, :4])


# ---- a lambda bound to a name and called ----------------------------------------------------------------------------

def test_a_lambda_bound_to_a_name_and_called_is_the_parsers_error():
    """Wheel (f18): `'Assign' object has no attribute 'decorator_list'` - the parser takes a called local name for a
    function definition. Called in place or handed to `max(key=...)`, a lambda parses (f18b)."""
    @pypto.frontend.jit
    def bad(x: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        g = lambda t: t * 2.0  # noqa: E731 - the construct under test
        out[:] = g(x)

    e = _err(bad, _rand(16, 64), np.zeros((16, 64), np.float32))
    assert e.kind == "ParserError" and "decorator_list" in str(e) and "'g'" in str(e), str(e)

    @pypto.frontend.jit
    def good(x: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        s = max([1.0, 2.0, 3.0], key=lambda v: -v)
        out[:] = (lambda t: t * 2.0)(x) * s

    x = _rand(16, 64)
    out = np.zeros_like(x)
    _run(good, x, out)
    np.testing.assert_array_equal(out, x * np.float32(2.0) * np.float32(1.0))
