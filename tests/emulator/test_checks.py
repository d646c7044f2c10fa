"""Design point 4: the checks the real toolchain makes (its codes) and the ones the device punishes."""

import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()
F32 = np.float32


def z(*shape, dtype=F32):
    return np.zeros(shape, dtype)


def err_of(fn) -> emu.EmulatorError:
    with pytest.raises(emu.EmulatorError) as info:
        fn()
    assert info.value.file is not None and info.value.line is not None  # always the kernel line
    return info.value


def test_f21004_tile_not_set():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        out[:] = x + x

    e = err_of(lambda: k(z(4, 8), z(4, 8)))
    assert e.code == "F21004" and "op [ADD]tile shape not set" in e.message


def test_f21004_tile_set_inside_loop_does_not_survive_it():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        for _i in pypto.loop(1):
            pypto.set_vec_tile_shapes(4, 8)
            out[:] = x + 1.0
        out[:] = out + 1.0

    assert err_of(lambda: k(z(4, 8), z(4, 8))).code == "F21004"


def test_fc1001_reduce_tile_alignment_and_elementwise_only_warns():
    @pypto.frontend.jit
    def red(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 1], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 3)
        out[:] = pypto.sum(x, -1, keepdim=True)

    @pypto.frontend.jit
    def ew(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 3)
        out[:] = x + 1.0

    e = err_of(lambda: red(z(4, 8), z(4, 1)))
    assert e.code == "FC1001" and "32Byte align" in e.message
    x, out = np.ones((4, 8), F32), z(4, 8)
    with emu.session() as s:
        ew(x, out)
    assert (out == 2).all() and [d.code for d in s.warnings] == ["EMU_TILE_ALIGN"]


def test_fc4000_cube_tiles():
    @pypto.frontend.jit
    def nomm(a: pypto.Tensor([16, 16], pypto.DT_FP32), c: pypto.Tensor([16, 16], pypto.DT_FP32)):
        c[:] = pypto.matmul(a, a, pypto.DT_FP32)

    @pypto.frontend.jit
    def badrel(a: pypto.Tensor([16, 16], pypto.DT_FP32), c: pypto.Tensor([16, 16], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [64, 48], [16, 16])
        c[:] = pypto.matmul(a, a, pypto.DT_FP32)

    e1 = err_of(lambda: nomm(z(16, 16), z(16, 16)))
    assert e1.code == "FC4000" and "kL0=0" in e1.message
    e2 = err_of(lambda: badrel(z(16, 16), z(16, 16)))
    assert e2.code == "FC4000" and "Invalid L1/L0 relation: kL0=64, kL1a=48" in e2.message


def test_fc0000_broadcast_rules():
    @pypto.frontend.jit
    def two(x: pypto.Tensor([2, 4, 8], pypto.DT_FP32), y: pypto.Tensor([1, 1, 8], pypto.DT_FP32),
            out: pypto.Tensor([2, 4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4, 8)
        out[:] = x + y

    @pypto.frontend.jit
    def incompatible(x: pypto.Tensor([4, 8, 16], pypto.DT_FP32), y: pypto.Tensor([4, 8, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8, 16)
        t = x + y

    @pypto.frontend.jit
    def one(x: pypto.Tensor([2, 4, 8], pypto.DT_FP32), y: pypto.Tensor([2, 4, 1], pypto.DT_FP32),
            out: pypto.Tensor([2, 4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4, 8)
        out[:] = x * y

    with emu.session(emu.Options(compat="0.2.0")):  # HEAD broadcasts over several axes (with a warning)
        e = err_of(lambda: two(z(2, 4, 8), z(1, 1, 8), z(2, 4, 8)))
    assert e.code == "FC0000" and "Only allow to expand one axis! Actual expanded axes count: 2" in e.message
    e = err_of(lambda: incompatible(z(4, 8, 16), z(4, 8, 8)))
    assert e.code == "FC0000" and "shape not support binary operation" in e.message
    x = np.random.default_rng(0).random((2, 4, 8)).astype(F32)
    y = np.random.default_rng(1).random((2, 4, 1)).astype(F32)
    out = z(2, 4, 8)
    one(x, y, out)
    np.testing.assert_array_equal(out, x * y)


def test_tile_rank_below_output_rank_fails_like_the_pass():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 4, 8], pypto.DT_FP32), out: pypto.Tensor([2, 4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        out[:] = x + 1.0

    e = err_of(lambda: k(z(2, 4, 8), z(2, 4, 8)))
    assert e.code == "FFFFFF" and "Tile shape size 1 is not matched the output shape size 3" in e.message


def test_read_of_local_tensor_without_producer():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        t = pypto.tensor([4, 8], pypto.DT_FP32, "t")
        out[:] = x + t

    e = err_of(lambda: k(z(4, 8), z(4, 8)))
    assert e.code == "FFFFFF" and "missing Alloc" in e.message


def test_f21005_mix_assemble_and_compute():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 16)
        a = pypto.zeros(32, 32)
        b = a[:16, :16]
        a[16:, 16:] = pypto.exp(b)

    assert err_of(lambda: k(z(32, 32))).code == "F21005"


@pytest.mark.parametrize("case", ["view_oob", "assemble_oob", "assemble_bigger", "move_shape", "view_offset"])
def test_device_punished_geometry_errors(case):
    @pypto.frontend.jit
    def view_oob(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 8)):
            out[:] = pypto.view(x, [8, 8], [i * 8, 0]) * 1.0

    @pypto.frontend.jit
    def view_offset(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.view(x, [4, 8], [8, 0]) * 1.0

    @pypto.frontend.jit
    def assemble_oob(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):
        for i in pypto.loop(3):
            pypto.assemble(x, [i * 4, 0], out)

    @pypto.frontend.jit
    def assemble_bigger(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.assemble(x, [0, 0], out)

    @pypto.frontend.jit
    def move_shape(x: pypto.Tensor([2, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        out[:] = x

    calls = {
        "view_oob": (lambda: view_oob(z(12, 8), z(8, 8)), "EMU_VIEW_OOB"),
        "view_offset": (lambda: view_offset(z(8, 8), z(4, 8)), "EMU_VIEW_OOB"),
        "assemble_oob": (lambda: assemble_oob(z(4, 8), z(8, 8)), "EMU_ASSEMBLE_OOB"),
        "assemble_bigger": (lambda: assemble_bigger(z(8, 8), z(4, 8)), "EMU_ASSEMBLE_SIZE"),
        "move_shape": (lambda: move_shape(z(2, 8), z(4, 8)), "EMU_MOVE_SHAPE"),
    }
    fn, code = calls[case]
    assert err_of(fn).code == code


def test_view_clip_option_follows_the_oracle():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([6, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        pypto.assemble(pypto.view(x, [8, 8], [0, 0]) + 1.0, [0, 0], out)

    x = np.ones((6, 8), F32)
    out = np.full((8, 8), -1.0, F32)
    with emu.session(emu.Options(out_of_bounds="clip")) as s:
        k(x, out)
    assert (out[:6] == 2).all() and (out[6:] == -1).all()  # valid extent clipped to the data
    assert any(d.code == "EMU_VIEW_CLIP" for d in s.warnings)


def test_argument_shape_and_dtype_must_match_annotation():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pass

    e = err_of(lambda: k(z(4, 32)))
    assert e.kind == "ValueError" and "The shape of 1st input tensor" in e.message
    e = err_of(lambda: k(z(4, 16, dtype=np.float16)))
    assert "The dtype of 1st input tensor" in e.message
    e = err_of(lambda: k(z(4, 16, 1)))
    assert "number of dimensions" in e.message


def test_padding_consumed_by_write_back_is_an_error():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([6, 8], pypto.DT_FP32), out: pypto.Tensor([48], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        t = pypto.view(x, [8, 8], [0, 0], valid_shape=[6, 8])
        wide = pypto.transpose(t, 0, 1)  # padding rows become padding columns: not a row-major prefix
        pypto.set_vec_tile_shapes(64)
        flat = pypto.reshape(wide, [64])
        pypto.assemble(pypto.view(flat, [48], [0]), [0], out)

    e = err_of(lambda: k(np.ones((6, 8), F32), z(48)))
    assert e.code == "EMU_POISON" and "padding" in e.message


def test_uninitialized_local_region_is_poisoned_and_reported():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        t = pypto.tensor([8, 8], pypto.DT_FP32, "t")
        pypto.assemble(x, [0, 0], t)  # rows 4..7 never written
        out[:] = t * 1.0

    out = z(8, 8)
    e = err_of(lambda: k(np.ones((4, 8), F32), out))
    assert e.code == "EMU_POISON" and e.line is not None
    assert np.isnan(out[4:]).all()  # the final check runs after the write, as the device would hold garbage
    out = z(8, 8)
    with emu.session(emu.Options(poison_check="iteration")):
        e = err_of(lambda: k(np.ones((4, 8), F32), out))
    assert e.code == "EMU_POISON"
    assert (out == 0).all()  # the per-iteration check stops before the write-back


def test_unaligned_multi_unroll_warnings():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 16)
        for i in pypto.loop(8, unroll_list=[4, 2, 1]):
            out[i:i + 1, :] = x[i:i + 1, :] + 1.0

    x = np.ones((8, 16), F32)
    out = z(8, 16)
    with emu.session() as s:
        k(x, out)
    assert (out == 2).all()
    assert {d.code for d in s.warnings} == {"EMU_UNROLL_LIST"}
    assert not s.errors


def test_cube_tile_capacity_l0_is_a_pass_failure_l1_a_warning_and_a_small_operand_clips_the_tile():
    """Fidelity audit s33 (the 0.2.0 wheel in SIM): L0A / L0B / L0C over capacity is FFFFFF ("exceeds MEM_L0B"),
    with each L0 value clipped to the operand's extent (256 tiles on a 32 x 32 operand compile); L1 over its
    512 KiB compiles there (a warning here)."""
    @pypto.frontend.jit
    def small(a: pypto.Tensor([32, 32], pypto.DT_FP32), c: pypto.Tensor([32, 32], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([256, 256], [256, 256], [256, 256])
        c[:] = pypto.matmul(a, a, pypto.DT_FP32)

    a = np.eye(32, dtype=F32)
    c = z(32, 32)
    with emu.session() as s:
        small(a, c)
    np.testing.assert_array_equal(c, a)
    assert not s.warnings

    @pypto.frontend.jit
    def big(x: pypto.Tensor([256, 512], pypto.DT_FP32), w: pypto.Tensor([512, 256], pypto.DT_FP32),
            c: pypto.Tensor([256, 256], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([128, 128], [256, 256], [128, 128])
        c[:] = pypto.matmul(x, w, pypto.DT_FP32)

    with emu.session(), pytest.raises(emu.EmulatorError) as ei:
        big(np.ones((256, 512), F32), np.ones((512, 256), F32), z(256, 256))
    assert ei.value.code == "FFFFFF" and "exceeds MEM_L0A size [65536]" in str(ei.value)

    @pypto.frontend.jit
    def l1(x: pypto.Tensor([256, 512], pypto.DT_FP32), w: pypto.Tensor([512, 256], pypto.DT_FP32),
           c: pypto.Tensor([256, 256], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 256], [64, 512], [64, 256])
        c[:] = pypto.matmul(x, w, pypto.DT_FP32)

    with emu.session() as s:
        l1(np.ones((256, 512), F32), np.ones((512, 256), F32), c := z(256, 256))
    assert {d.code for d in s.warnings} == {"EMU_CUBE_CAPACITY"} and np.all(c == 512.0)


def test_parallel_assemble_promise_is_verified():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 8], pypto.DT_FP32), out: pypto.Tensor([16, 8], pypto.DT_FP32), step: int = 4):
        pypto.set_vec_tile_shapes(4, 8)
        for i in pypto.loop(4):
            pypto.assemble(pypto.view(x, [4, 8], [i * 4, 0]) * 1.0, [i * step, 0], out, parallel=True)

    x = np.ones((16, 8), F32)
    with emu.session() as s:
        k(x, z(16, 8))
    assert not s.warnings
    with emu.session() as s:
        k(x, z(16, 8), 3)  # windows [0,4), [3,7), ... overlap
    assert [d.code for d in s.warnings] == ["EMU_PARALLEL_OVERLAP"]
