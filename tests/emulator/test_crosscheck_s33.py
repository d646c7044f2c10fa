"""Fidelity audit 5 (session 33): kernels modelled on KernelBench tasks that the real pypto 0.2.0 wheel refuses in
RunMode.SIM and the emulator ran - every one a false accept (no false rejection was found). Each rule below was
pinned by variants run on the wheel on 5-6 Dec 2026: the ``refused`` side gives the wheel's error code, the other
side compiles there and must still run here.

- cube tiles: kL0 / nL0 not a multiple of 16 elements, mL0 not 32-byte aligned under ``a_trans`` (FC4001); L0A /
  L0B / L0C over capacity with each L0 clipped to its operand (FFFFFF); a bf16 bias (FC3001); split-K with a bf16
  output or a bias (FC3001 / FC3000); a per-tensor ``scale`` on a float matmul (FC3001, 0.2.0);
- an operator on ``is_loop_begin`` / ``is_loop_end`` (F3FFFF at the expression);
- a whole-tensor move out of a kernel argument, then the argument read ("Empty tensor.");
- the vector buffer: ``index_add_`` into a destination, ``gather`` from a source, ``topk`` under a tile, each over
  192 KiB (FFFFFF with the wheel's own totals); ``scatter_(reduce="add")`` with the tile splitting the destination's
  scatter axis (FC1000).
"""

import ml_dtypes
import numpy as np
import pytest
from test_crosscheck_s19 import _err, _run

import runtime.emulator as emu

pypto = emu.install()
F32, I32 = pypto.DT_FP32, pypto.DT_INT32


def _linear(m: list, k: list, n: list, *, dtype=F32, a_trans: bool = False, split_k: bool = False,
            ext: dict | None = None, out_dtype=F32):
    """x [40, 16] @ w^T, w [32, 16] (b_trans), or x^T given as [16, 40] with a_trans."""
    xs = [16, 40] if a_trans else [40, 16]

    @pypto.frontend.jit
    def lin(x: pypto.Tensor(xs, dtype), w: pypto.Tensor([32, 16], dtype), b: pypto.Tensor([1, 32], dtype),
            out: pypto.Tensor([40, 32], out_dtype)):
        pypto.set_vec_tile_shapes(40, 32)
        pypto.set_cube_tile_shapes(m, k, n, split_k)
        if ext is None:
            out[:] = pypto.matmul(x, w, out_dtype, a_trans=a_trans, b_trans=True)
        elif "bias_tensor" in ext:
            out[:] = pypto.matmul(x, w, out_dtype, a_trans=a_trans, b_trans=True, extend_params={"bias_tensor": b})
        else:
            out[:] = pypto.matmul(x, w, out_dtype, a_trans=a_trans, b_trans=True, extend_params=ext)

    return lin


def _args(a_trans: bool = False, dt=np.float32, out_dt=np.float32):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 40) if a_trans else (40, 16)).astype(dt)
    return x, rng.standard_normal((32, 16)).astype(dt), rng.standard_normal((1, 32)).astype(dt), np.zeros((40, 32), out_dt)


@pytest.mark.parametrize(("tiles", "code"), [
    (([16, 16], [16, 16], [32, 32]), None), (([10, 10], [16, 16], [32, 32]), None),  # mL0 is free
    (([16, 16], [10, 10], [32, 32]), "FC4001"), (([16, 16], [16, 16], [20, 20]), "FC4001"),
    (([8, 8], [8, 8], [8, 8]), "FC4001")])
def test_cube_l0_tiles_of_k_and_n_are_multiples_of_16_elements(tiles, code) -> None:
    k = _linear(*tiles)
    if code is None:
        x, w, b, out = _args()
        _run(k, x, w, b, out)
        np.testing.assert_allclose(out, x @ w.T, rtol=1e-5, atol=1e-5)
    else:
        assert _err(k, *_args()).code == code


def test_a_transposed_a_needs_a_32_byte_ml0() -> None:
    assert _err(_linear([10, 10], [16, 16], [32, 32], a_trans=True), *_args(True)).code == "FC4001"
    x, w, b, out = _args(True)
    _run(_linear([8, 8], [16, 16], [32, 32], a_trans=True), x, w, b, out)  # 8 fp32 = 32 bytes
    np.testing.assert_allclose(out, x.T @ w.T, rtol=1e-5, atol=1e-5)


def test_bias_split_k_and_scale_are_checked_as_the_wheels_fixpipe() -> None:
    bf, bf16 = pypto.DT_BF16, ml_dtypes.bfloat16
    tiles = ([16, 16], [16, 16], [32, 32])
    assert _err(_linear(*tiles, dtype=bf, ext={"bias_tensor": "bias"}), *_args(dt=bf16)).code == "FC3001"
    assert _err(_linear(*tiles, split_k=True, out_dtype=bf, dtype=bf), *_args(dt=bf16, out_dt=bf16)).code == "FC3001"
    assert _err(_linear(*tiles, split_k=True, ext={"bias_tensor": "bias"}), *_args()).code == "FC3000"
    assert _err(_linear(*tiles, ext={"scale": 0.5}), *_args()).code == "FC3001"
    x, w, b, out = _args()
    _run(_linear(*tiles, split_k=True), x, w, b, out)  # split-K with an FP32 result compiles
    np.testing.assert_allclose(out, x @ w.T, rtol=1e-5, atol=1e-5)


def test_l0_capacity_counts_the_tile_clipped_to_its_operand() -> None:
    """128 / 256 / 128 fp32 on [256, 512] @ [512, 256]: L0A and L0B 128 KiB (the wheel: FFFFFF); the same tiles on the
    [40, 16] operands above compile (clipped)."""
    @pypto.frontend.jit
    def big(x: pypto.Tensor([256, 512], F32), w: pypto.Tensor([512, 256], F32), out: pypto.Tensor([256, 256], F32)):
        pypto.set_cube_tile_shapes([128, 128], [256, 256], [128, 128])
        out[:] = pypto.matmul(x, w, F32)

    e = _err(big, np.ones((256, 512), np.float32), np.ones((512, 256), np.float32), np.zeros((256, 256), np.float32))
    assert e.code == "FFFFFF" and "MEM_L0A" in str(e)
    x, w, b, out = _args()
    _run(_linear([128, 128], [256, 256], [128, 128]), x, w, b, out)
    np.testing.assert_allclose(out, x @ w.T, rtol=1e-5, atol=1e-5)


def _flags(v: str):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 2, 4, 32], F32), y: pypto.Tensor([4, 32], F32)):
        pypto.set_vec_tile_shapes(4, 32)
        acc = pypto.tensor([4, 32], F32, "acc")
        for a in pypto.loop(2, name="a", idx_name="a"):
            for b in pypto.loop(2, name="b", idx_name="b"):
                t = pypto.reshape(pypto.view(x, [1, 1, 4, 32], [a, b, 0, 0]), [4, 32]) * 1.0
                if v == "mul":
                    c = pypto.is_loop_begin(a) * pypto.is_loop_begin(b)
                elif v == "eq1":
                    c = pypto.is_loop_begin(a) == 1
                elif v == "inv":
                    c = ~pypto.is_loop_end(b)
                elif v == "idx":
                    c = (a + b) == 0
                else:
                    c = ~((a + b) != 0)
                if c:
                    acc[:] = t
                else:
                    acc[:] = acc + t
        y[:] = acc * 1.0

    return k


@pytest.mark.parametrize("v", ["mul", "eq1", "inv"])
def test_an_operator_on_a_loop_flag_is_f3ffff(v: str) -> None:
    for compat in ("0.2.0", "head"):
        e = _err(_flags(v), np.ones((2, 2, 4, 32), np.float32), np.zeros((4, 32), np.float32), compat=compat)
        assert e.code == "F3FFFF" and "loop flag" in str(e)


@pytest.mark.parametrize("v", ["idx", "inv_idx"])
def test_expressions_of_the_loop_indices_still_run(v: str) -> None:
    x = np.random.default_rng(1).standard_normal((2, 2, 4, 32)).astype(np.float32)
    y = np.zeros((4, 32), np.float32)
    _run(_flags(v), x, y)
    np.testing.assert_allclose(y, x.sum((0, 1)), rtol=1e-5, atol=1e-5)


def test_a_move_out_of_an_argument_consumes_it() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 32], F32), out: pypto.Tensor([16, 32], F32), y: pypto.Tensor([16, 32], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = x
        y[:] = x * 2.0

    e = _err(k, *(np.ones((16, 32), np.float32) for _ in range(3)))
    assert e.kind == "ValueError" and "Empty tensor." in str(e)

    @pypto.frontend.jit
    def reads_first(x: pypto.Tensor([16, 32], F32), out: pypto.Tensor([16, 32], F32),
                    y: pypto.Tensor([16, 32], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        y[:] = x * 2.0
        out[:] = x

    x, out, y = np.full((16, 32), 3.0, np.float32), np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float32)
    _run(reads_first, x, out, y)
    assert np.all(out == 3.0) and np.all(y == 6.0)


def _index(op: str, m: int, tile_rows: int = 32):
    @pypto.frontend.jit
    def k(dst: pypto.Tensor([m, 16], F32), src: pypto.Tensor([32, 16], F32), ids: pypto.Tensor([32], I32)):
        pypto.set_vec_tile_shapes(tile_rows, 16)
        if op == "index_add_":
            pypto.index_add_(dst, 0, ids, src)
        else:
            idx = pypto.expand_clone(pypto.reshape(ids, [32, 1]), [32, 16])
            pypto.scatter_(dst, 0, idx, src, reduce="add")

    return k


@pytest.mark.parametrize(("op", "m", "tile_rows", "code"), [
    ("index_add_", 3000, 32, None), ("index_add_", 3072, 32, "FFFFFF"),  # 196608 + 2048 + 128 + 32 = 198816
    ("scatter_", 64, 64, None), ("scatter_", 64, 32, "FC1000")])
def test_index_add_and_scatter_add_need_the_destination_in_one_piece(op: str, m: int, tile_rows: int, code) -> None:
    rng = np.random.default_rng(2)
    dst = rng.standard_normal((m, 16)).astype(np.float32)
    src = rng.standard_normal((32, 16)).astype(np.float32)
    ids = rng.choice(min(m, 64), 32, replace=False).astype(np.int32)
    if code is not None:
        e = _err(_index(op, m, tile_rows), dst, src, ids)
        assert e.code == code and ("198816" in str(e) if code == "FFFFFF" else True)
        return
    want = dst.copy()
    np.add.at(want, ids, src)
    _run(_index(op, m, tile_rows), dst, src, ids)
    np.testing.assert_allclose(dst, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("m", "refused"), [(700, False), (740, True)])
def test_gather_needs_its_whole_source_in_the_vector_buffer(m: int, refused: bool) -> None:
    @pypto.frontend.jit
    def k(table: pypto.Tensor([m, 64], F32), ids: pypto.Tensor([32, 64], I32), out: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(32, 64)
        out[:] = pypto.gather(table, 0, ids)

    rng = np.random.default_rng(3)
    table = rng.standard_normal((m, 64)).astype(np.float32)
    ids = np.repeat(rng.integers(0, m, (32, 1)), 64, axis=1).astype(np.int32)
    out = np.zeros((32, 64), np.float32)
    if refused:
        e = _err(k, table, ids, out)
        assert e.code == "FFFFFF" and "206336" in str(e) and "index_select" in str(e)
    else:
        _run(k, table, ids, out)
        np.testing.assert_array_equal(out, np.take_along_axis(table, ids, 0))


@pytest.mark.parametrize(("rows", "cols", "refused"), [(8, 1024, False), (8, 2048, True), (1, 16384, True)])
def test_topk_needs_three_tiles_and_two_rows_in_the_vector_buffer(rows: int, cols: int, refused: bool) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16384], F32), vals: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(rows, cols)
        for r in range(8 // rows):
            for c in range(16384 // cols):
                v, _ = pypto.topk(pypto.view(x, [rows, cols], [r * rows, c * cols]), 1, -1, True)
                pypto.assemble(v, [r * rows, c], vals)

    x = np.random.default_rng(4).standard_normal((8, 16384)).astype(np.float32)
    vals = np.zeros((8, 16), np.float32)
    if refused:
        assert _err(k, x, vals).code == "FFFFFF"
    else:
        _run(k, x, vals)
        np.testing.assert_array_equal(vals, x.reshape(8, 16, 1024).max(-1))


@pytest.mark.parametrize(("k0", "n0", "refused"), [(16, 32, "kL0"), (32, 16, "nL0"), (32, 32, None)])
def test_an_int8_matmul_needs_32_byte_k_and_n_tiles(k0: int, n0: int, refused) -> None:
    """Fidelity audit s33b: for INT8 16 elements are 16 bytes - `FC4001 kL0 * sizeof(dtype) = 16 bytes, must be
    32-byte aligned` on the wheel (mL0 stays free without a_trans)."""
    I8 = pypto.DT_INT8

    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 64], I8), b: pypto.Tensor([64, 32], I8), c: pypto.Tensor([32, 32], I32)):
        pypto.set_cube_tile_shapes([16, 16], [k0, k0], [n0, n0])
        c[:] = pypto.matmul(a, b, I32)

    rng = np.random.default_rng(5)
    a = rng.integers(-8, 8, (32, 64)).astype(np.int8)
    b = rng.integers(-8, 8, (64, 32)).astype(np.int8)
    c = np.zeros((32, 32), np.int32)
    if refused:
        e = _err(k, a, b, c)
        assert e.code == "FC4001" and refused in str(e)
    else:
        _run(k, a, b, c)
        np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_indexing_ops_load_the_indexed_axis_whole_and_the_tile_on_the_others() -> None:
    """Fidelity audit s33b (false rejections of the first rule): a [1400, 64] fp32 table under a (32, 16) tile and a
    [2800, 64] index_add_ destination under (32, 16) compile on the wheel - it loads the indexed axis whole and the
    tile on the other axes (its totals: 1500 x 32 x 4 + 4096 + 4096 + 256 = 200448 refused; 3072 x 16 x 4 + 2048 + 128
    + 32 = 198816 refused). BF16 index_add_ also holds an FP32 copy of the destination (CAST), and 1024 source rows
    count whole."""
    @pypto.frontend.jit
    def gat(table: pypto.Tensor([1400, 64], F32), ids: pypto.Tensor([32, 16], I32), out: pypto.Tensor([32, 16], F32)):
        pypto.set_vec_tile_shapes(32, 16)
        out[:] = pypto.gather(pypto.view(table, [1400, 16], [0, 16]), 0, ids)

    rng = np.random.default_rng(6)
    table = rng.standard_normal((1400, 64)).astype(np.float32)
    ids = np.repeat(rng.integers(0, 1400, (32, 1)), 16, axis=1).astype(np.int32)
    out = np.zeros((32, 16), np.float32)
    _run(gat, table, ids, out)
    np.testing.assert_array_equal(out, np.take_along_axis(table[:, 16:32], ids, 0))

    def add(m: int, n: int, rows: int, tile: tuple, dt=F32):
        @pypto.frontend.jit
        def k(dst: pypto.Tensor([m, n], dt), src: pypto.Tensor([rows, n], dt), ix: pypto.Tensor([rows], I32)):
            pypto.set_vec_tile_shapes(*tile)
            pypto.index_add_(dst, 0, ix, src)

        return k

    npdt = {F32: np.float32, pypto.DT_BF16: ml_dtypes.bfloat16}
    for m, n, rows, tile, dt, code in ((2800, 64, 32, (32, 16), F32, None), (3072, 64, 32, (32, 16), F32, "FFFFFF"),
                                       (2800, 16, 1024, (32, 16), F32, "FFFFFF"),
                                       (2900, 16, 32, (32, 16), pypto.DT_BF16, "FFFFFF"),
                                       (1500, 16, 32, (32, 16), pypto.DT_BF16, None)):
        dst = np.zeros((m, n), npdt[dt])
        src = np.ones((rows, n), npdt[dt])
        ix = (np.arange(rows) % m).astype(np.int32)
        if code:
            assert _err(add(m, n, rows, tile, dt), dst, src, ix).code == code, (m, n, rows)
        else:
            _run(add(m, n, rows, tile, dt), dst, src, ix)
            assert float(dst.astype(np.float32).sum()) == rows * n


@pytest.mark.parametrize(("dtype", "cols", "refused"), [("bf16", 4096, True), ("fp16", 4096, True), ("bf16", 3072, False)])
def test_topk_counts_three_tiles_and_two_rows_in_its_own_dtype(dtype: str, cols: int, refused: bool) -> None:
    dt = {"bf16": pypto.DT_BF16, "fp16": pypto.DT_FP16}[dtype]
    npdt = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16}[dtype]

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, cols], dt), vals: pypto.Tensor([8, 1], dt)):
        pypto.set_vec_tile_shapes(8, cols)
        v, _ = pypto.topk(x, 1, -1, True)
        vals[:] = v

    x = np.random.default_rng(7).standard_normal((8, cols)).astype(npdt)
    vals = np.zeros((8, 1), npdt)
    if refused:
        assert _err(k, x, vals).code == "FFFFFF"
    else:
        _run(k, x, vals)
        np.testing.assert_array_equal(vals[:, 0], x.max(axis=1))


@pytest.mark.parametrize("reduce", [None, "multiply"])
def test_every_scatter_needs_the_tile_to_cover_its_axis(reduce) -> None:
    @pypto.frontend.jit
    def k(dst: pypto.Tensor([64, 16], F32), src: pypto.Tensor([32, 16], F32), ids: pypto.Tensor([32], I32)):
        pypto.set_vec_tile_shapes(32, 16)
        idx = pypto.expand_clone(pypto.reshape(ids, [32, 1]), [32, 16])
        if reduce is None:
            pypto.scatter_(dst, 0, idx, src)
        else:
            pypto.scatter_(dst, 0, idx, src, reduce=reduce)

    e = _err(k, np.ones((64, 16), np.float32), np.ones((32, 16), np.float32), np.arange(32, dtype=np.int32))
    assert e.code == "FC1000"
