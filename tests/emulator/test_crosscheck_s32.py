"""A view of a kernel argument recorded with no vec tile set, then a ``pypto.loop`` entered with no vec tile set, then
the view read: the real pypto 0.2.0 wheel refuses it (``INTERNAL BUG <file>:1:0: Errcode: F21004!``, ``op
[REGISTER_COPY]tile shape not set``), the emulator ran it (s31 fidelity audit: a SwiGLU MLP that views its input
before its first ``set_vec_tile_shapes``). Every variant below was run under the wheel in RunMode.SIM on 5 Dec 2026;
its outcome is the ``refused`` column, and the emulator must give the same under both targets."""

import numpy as np
import pytest
from test_crosscheck_s19 import _err, _run  # one session per kernel, under a compat target (this directory)

import runtime.emulator as emu

pypto = emu.install()
F32 = pypto.DT_FP32
TM, TI, HID = 16, 32, 64


def _kernel(v: str):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([TM, HID], F32), out: pypto.Tensor([TM, 64], F32)):
        if v == "tile_before_view":
            pypto.set_vec_tile_shapes(TM, TI)
        if v in ("read_in_loop", "tile_before_view", "tile_before_loop", "slice_read_in_loop"):
            xt = x[0:TM, 0:TI] if v == "slice_read_in_loop" else pypto.view(x, [TM, TI], [0, 0])
            if v == "tile_before_loop":
                pypto.set_vec_tile_shapes(TM, TI)
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(xt * 2.0, [0, ii * TI], out)
        elif v == "no_loop":
            xt = pypto.view(x, [TM, TI], [0, 0])
            pypto.set_vec_tile_shapes(TM, TI)
            pypto.assemble(xt * 2.0, [0, 0], out)
            pypto.assemble(xt * 2.0, [0, TI], out)
        elif v == "python_loop":
            xt = pypto.view(x, [TM, TI], [0, 0])
            for ii in range(2):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(xt * 2.0, [0, ii * TI], out)
        elif v == "reshape_of_argument":
            xr = pypto.reshape(x, [TM, HID])
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(pypto.view(xr, [TM, TI], [0, 0]) * 2.0, [0, ii * TI], out)
        elif v in ("nested_tile_in_outer", "nested_tile_in_inner"):
            xt = pypto.view(x, [TM, TI], [0, 0])
            for _jj in pypto.loop(1, name="o_loop", idx_name="jj"):
                if v == "nested_tile_in_outer":
                    pypto.set_vec_tile_shapes(TM, TI)
                for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                    pypto.set_vec_tile_shapes(TM, TI)
                    pypto.assemble(xt * 2.0, [0, ii * TI], out)
        elif v in ("read_after_loop", "read_after_loop_tile_before_loop"):
            xt = pypto.view(x, [TM, TI], [0, 0])
            if v == "read_after_loop_tile_before_loop":
                pypto.set_vec_tile_shapes(TM, TI)
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(pypto.view(x, [TM, TI], [0, 0]) * 2.0, [0, ii * TI], out)
            pypto.set_vec_tile_shapes(TM, TI)
            pypto.assemble(xt * 2.0, [0, 0], out)
        elif v == "read_before_loop_only":
            xt = pypto.view(x, [TM, TI], [0, 0])
            pypto.set_vec_tile_shapes(TM, TI)
            pypto.assemble(xt * 2.0, [0, 0], out)
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.assemble(pypto.view(x, [TM, TI], [0, 0]) * 2.0, [0, ii * TI], out)
        elif v == "view_of_the_view_in_loop":
            xt = pypto.view(x, [TM, HID], [0, 0])
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(pypto.view(xt, [TM, TI], [0, ii * TI]) * 2.0, [0, ii * TI], out)
        elif v == "view_recorded_inside_the_bare_loop":
            for _jj in pypto.loop(1, name="o_loop", idx_name="jj"):
                xt = pypto.view(x, [TM, TI], [0, 0])
                pypto.set_vec_tile_shapes(TM, TI)
                for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                    pypto.assemble(xt * 2.0, [0, ii * TI], out)
        elif v == "copied_in_loop":
            xt = pypto.view(x, [TM, TI], [0, 0])
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(xt, [0, ii * TI], out)
        elif v == "unread_view":
            _ot = pypto.view(out, [TM, TI], [0, 0])
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(pypto.view(x, [TM, TI], [0, 0]) * 2.0, [0, ii * TI], out)

    return k


REFUSED = ["read_in_loop", "slice_read_in_loop", "nested_tile_in_outer", "nested_tile_in_inner", "read_after_loop",
           "view_of_the_view_in_loop", "copied_in_loop"]
ACCEPTED = ["tile_before_view", "tile_before_loop", "no_loop", "python_loop", "reshape_of_argument",
            "read_after_loop_tile_before_loop", "read_before_loop_only", "view_recorded_inside_the_bare_loop",
            "unread_view"]
X = np.random.default_rng(32).standard_normal((TM, HID)).astype(np.float32)


@pytest.mark.parametrize("v", REFUSED)
def test_a_bare_view_read_after_a_bare_loop_entry_is_the_wheels_f21004(v: str) -> None:
    for compat in ("0.2.0", "head"):
        e = _err(_kernel(v), X, np.zeros((TM, 64), np.float32), compat=compat)
        assert e.code == "F21004" and "REGISTER_COPY" in str(e) and "before the loop" in str(e), (compat, str(e))
        assert e.line is not None and e.line > 1  # at the reading statement (the wheel says line 1)


@pytest.mark.parametrize("v", ACCEPTED)
def test_what_the_wheel_accepts_still_runs(v: str) -> None:
    out = np.zeros((TM, 64), np.float32)
    _run(_kernel(v), X, out)
    np.testing.assert_array_equal(out[:, :TI], 2 * X[:, :TI])


# ---- the s32 fidelity audit's other findings (each checked on the wheel in SIM) --------------------------------


def _tail_kernel(v: str):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 24], F32), o: pypto.Tensor([pypto.DYNAMIC, 32], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(8, 32)
        for i in pypto.loop(pypto.ceildiv(n, 8), name="l", idx_name="i"):
            rows = (n - i * 8).min(8)
            t = pypto.view(x, [8, 24], [i * 8, 0], valid_shape=[rows, 24])
            if v == "var":
                pypto.set_vec_tile_shapes(8, 24)
                d = t - pypto.var(t, -1, correction=0, keepdim=True)
                pypto.set_vec_tile_shapes(8, 32)
                o[i * 8:i * 8 + 8, :] = pypto.pad(d, [0, 8, 0, 0], "constant", 0.0)
            else:
                o[i * 8:i * 8 + 8, :] = pypto.pad(t, [0, 8, 0, 0], "constant", 0.0) + 1.0

    return k


@pytest.mark.parametrize("n", [19, 16, 5])
@pytest.mark.parametrize("v", ["var", "pad"])
def test_var_and_pad_of_a_tail_block_keep_the_tile_and_its_valid_rows(v: str, n: int) -> None:
    """The wheel compiles both. Here ``var`` of a tail block was an array of the valid rows only (every later op
    failed: ``FC0000 ... shapes (8,24) (3,1)``), and ``pad`` made the whole padded tile valid (its padding rows
    reached the output: ``EMU_ASSEMBLE_OOB``)."""
    x = np.random.default_rng(n).standard_normal((n, 24)).astype(np.float32)
    out = np.zeros((n, 32), np.float32)
    _run(_tail_kernel(v), x, out)
    want = x - x.var(-1, keepdims=True) if v == "var" else x + 1.0
    np.testing.assert_allclose(out[:, :24], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[:, 24:], 0.0 if v == "var" else 1.0)


@pytest.mark.parametrize("gshape", [[1, 64], [64, 1], [64]])
def test_rms_norm_takes_gamma_as_the_wheel_reshapes_it(gshape: list) -> None:
    """The wheel's composite rms_norm reshapes gamma to ``[1, .., gamma.shape[0]]``: ``[1, D]`` is ``CHECK FAILED:
    capacity == 1 ... Shape size not match`` there (it broadcast here), ``[D, 1]`` and ``[D]`` compile."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], F32), g: pypto.Tensor(gshape, F32), o: pypto.Tensor([8, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        o[:] = pypto.rms_norm(x, g, 1e-6)

    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    g = np.random.default_rng(2).standard_normal(gshape).astype(np.float32)
    out = np.zeros((8, 64), np.float32)
    if gshape == [1, 64]:
        e = _err(k, x, g, out)
        assert "Shape size not match" in str(e) and "1-D gamma" in str(e), str(e)
        return
    _run(k, x, g, out)
    want = x / np.sqrt(np.mean(x * x, -1, keepdims=True) + 1e-6) * g.reshape(-1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def _reshaped_write_kernel(v: str):
    @pypto.frontend.jit
    def k(y: pypto.Tensor([16, 16], F32), x3: pypto.Tensor([16, 4, 16], F32), o1: pypto.Tensor([16], F32),
          o: pypto.Tensor([16, 4], F32), o3: pypto.Tensor([16, 4, 1], F32)):
        if v in ("rows_nokeep_loop", "rows_nokeep_computed_loop"):
            for i in pypto.loop(4, name="l", idx_name="i"):
                pypto.set_vec_tile_shapes(4, 16)
                s = pypto.sum(pypto.view(y, [4, 16], [i * 4, 0]), -1, keepdim=False)
                pypto.set_vec_tile_shapes(4)
                o1[i * 4:i * 4 + 4] = s * 1.0 if v == "rows_nokeep_computed_loop" else s
        elif v in ("reshape_loop", "reshape_loop_aligned_tile"):
            for i in pypto.loop(2, name="l", idx_name="i"):
                pypto.set_vec_tile_shapes(8, 4, 16)
                s = pypto.reshape(pypto.sum(pypto.view(x3, [8, 4, 16], [i * 8, 0, 0]), -1, keepdim=True), [8, 4])
                pypto.set_vec_tile_shapes(8, 8 if v == "reshape_loop_aligned_tile" else 4)
                o[i * 8:i * 8 + 8, :] = s
        elif v in ("nokeep_over_the_whole_output", "nokeep_into_a_part"):
            pypto.set_vec_tile_shapes(8, 4, 16)
            s = pypto.sum(x3 if v == "nokeep_over_the_whole_output" else pypto.view(x3, [8, 4, 16], [8, 0, 0]), -1,
                          keepdim=False)
            pypto.set_vec_tile_shapes(8, 4)
            if v == "nokeep_over_the_whole_output":
                o[0:16, :] = s
            else:
                o[8:16, :] = s
        elif v == "keepdim_loop":
            for i in pypto.loop(2, name="l", idx_name="i"):
                pypto.set_vec_tile_shapes(8, 4, 16)
                s = pypto.amax(pypto.view(x3, [8, 4, 16], [i * 8, 0, 0]), -1, keepdim=True)
                pypto.set_vec_tile_shapes(8, 4, 1)
                o3[i * 8:i * 8 + 8, :, :] = s
        elif v == "python_loop":
            for i in range(4):
                pypto.set_vec_tile_shapes(4, 16)
                s = pypto.sum(pypto.view(y, [4, 16], [i * 4, 0]), -1, keepdim=False)
                pypto.set_vec_tile_shapes(4)
                o1[i * 4:i * 4 + 4] = s

    return k


@pytest.mark.parametrize(("v", "refused"), [
    ("rows_nokeep_loop", True), ("reshape_loop", True), ("rows_nokeep_computed_loop", False),
    ("reshape_loop_aligned_tile", False), ("nokeep_over_the_whole_output", False), ("nokeep_into_a_part", True),
    ("keepdim_loop", False), ("python_loop", True)])
def test_a_reshaped_result_assembled_into_a_part_of_an_output_under_an_unaligned_tile(v: str, refused: bool) -> None:
    """Wheel (every variant; ``reshape_loop_aligned_tile`` is the 32-byte control): a reshape of a computed tile, or a
    ``keepdim=False`` reduction, assembled into a part of an argument - in a ``pypto.loop``, a Python loop or none -
    under a tile whose last axis is 16 bytes is ``CHECK FAILED: lastDimBytes % BLOCK_SIZE == 0``; here it ran
    silently. Over the whole argument, ``keepdim=True`` and a result computed on first compile there."""
    rng = np.random.default_rng(3)
    y, x3 = rng.standard_normal((16, 16)).astype(np.float32), rng.standard_normal((16, 4, 16)).astype(np.float32)
    outs = (np.zeros(16, np.float32), np.zeros((16, 4), np.float32), np.zeros((16, 4, 1), np.float32))
    if refused:
        e = _err(_reshaped_write_kernel(v), y, x3, *outs)
        assert "lastDimBytes % BLOCK_SIZE" in str(e) and "Last dim bytes: 16" in str(e), str(e)
        return
    _run(_reshaped_write_kernel(v), y, x3, *outs)
    assert any(o.any() for o in outs)


# ---- the fourth audit (s32): embedding-style lookups and helper annotations -------------------------------------


@pytest.mark.parametrize("n", [11, 16, 1])
def test_index_select_of_a_tail_index_block_keeps_the_index_tile(n: int) -> None:
    """An embedding lookup by a tail block of ids times a [TB, 1] weight: the wheel compiles it; here the lookup was
    the valid rows alone and the product failed (``FC0000 ... [3, 32] vs [8, 1]``)."""
    @pypto.frontend.jit
    def k(ids: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32), table: pypto.Tensor([50, 32], F32),
          w: pypto.Tensor([8, 1], F32), out: pypto.Tensor([pypto.DYNAMIC, 32], F32)):
        t = ids.shape[0]
        pypto.set_vec_tile_shapes(8, 32)
        for b in pypto.loop(pypto.ceildiv(t, 8), name="blk", idx_name="b"):
            ib = pypto.view(ids, [8], [b * 8], valid_shape=[(t - b * 8).min(8)])
            out[b * 8:b * 8 + 8, :] = pypto.index_select(table, 0, ib) * w

    rng = np.random.default_rng(n)
    ids, table = rng.integers(0, 50, n).astype(np.int32), rng.standard_normal((50, 32)).astype(np.float32)
    w = (rng.random((8, 1)) + 0.1).astype(np.float32)
    out = np.zeros((n, 32), np.float32)
    _run(k, ids, table, w, out)
    np.testing.assert_array_equal(out, table[ids] * np.tile(w, (2, 1))[:n])


def _helper_kernel(ann: object, decorated: bool = True):
    def h(src: ann, dst: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_BF16), row0):  # type: ignore[valid-type]
        dst[row0:row0 + 8, :] = src * 2.0

    helper = pypto.frontend.function(h) if decorated else h

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_BF16), out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(8, 32)
        for i in pypto.loop(x.shape[0] // 8, name="l", idx_name="i"):
            helper(pypto.view(x, [8, 32], [i * 8, 0]), out, i * 8)

    return k


def test_a_helper_parameter_annotated_with_a_shape_only_takes_any_dtype() -> None:
    """Wheel: ``pypto.Tensor([8, 32])`` on a ``@pypto.frontend.function`` parameter takes a bf16 tile (the dtype is
    checked only when written); here it was ``does not match the definition DT_FP32``. A written dtype still counts."""
    import ml_dtypes

    x = np.random.default_rng(4).standard_normal((16, 32)).astype(ml_dtypes.bfloat16)
    out = np.zeros((16, 32), ml_dtypes.bfloat16)
    _run(_helper_kernel(pypto.Tensor([8, 32])), x, out)
    np.testing.assert_array_equal(out, (x.astype(np.float32) * 2).astype(ml_dtypes.bfloat16))
    e = _err(_helper_kernel(pypto.Tensor([8, 32], pypto.DT_FP32)), x, out)
    assert "does not match the definition" in str(e), str(e)


def test_the_bare_tensor_class_as_an_annotation() -> None:
    """Wheel: a ``@pypto.frontend.function`` parameter annotated ``pypto.Tensor`` (the class) is an INTERNAL BUG
    (``too many values to unpack``) - accepted here before; an undecorated helper runs as Python there and here. A
    jit parameter so annotated is refused by both: here now with a message that names it."""
    import ml_dtypes

    x = np.ones((16, 32), ml_dtypes.bfloat16)
    out = np.zeros((16, 32), ml_dtypes.bfloat16)
    e = _err(_helper_kernel(pypto.Tensor), x, out)
    assert "bare class pypto.Tensor" in str(e), str(e)
    _run(_helper_kernel(pypto.Tensor, decorated=False), x, out)
    assert (out.astype(np.float32) == 2).all()

    @pypto.frontend.jit
    def k(a: pypto.Tensor, o: pypto.Tensor):
        pypto.set_vec_tile_shapes(8, 32)
        o[:] = a * 2.0

    e = _err(k, np.ones((8, 32), np.float32), np.zeros((8, 32), np.float32))
    assert "bare class pypto.Tensor" in str(e) and "parameter 'a'" in str(e), str(e)
