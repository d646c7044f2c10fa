"""Index ops on a tail block read only the valid part of their index tile (fidelity audit s31).

The gym's tail idiom ``view(idx, [TB], [i * TB], valid_shape=[v])`` worked for ``index_select`` only: ``gather``,
``scatter``, ``index_add`` and ``index_put_`` used the whole index tile, so the last, partial block read the
padding (``EMU_INDEX_OOB`` on an uninitialised pad, or poisoned source rows added by ``index_add``) where the real
0.2.0 wheel compiles the kernel. Each case runs 11 rows in 8-row tiles (a 3-row tail) against numpy.
"""


import numpy as np

import runtime.emulator as emu

TB, V, D, N = 8, 32, 64, 11


def _rows_kernel(op: str):
    pypto = emu.install()

    @pypto.frontend.jit
    def k(src: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), cidx: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_INT64),
          out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
        n = src.shape[0]
        pypto.set_vec_tile_shapes(TB, D)
        for i in pypto.loop((n + TB - 1) // TB, name="loop_n", idx_name="n_idx"):
            v = (n - i * TB).min(TB)
            st = pypto.view(src, [TB, D], [i * TB, 0], valid_shape=[v, D])
            ct = pypto.view(cidx, [TB, D], [i * TB, 0], valid_shape=[v, D])
            if op == "gather":
                out[i * TB:, :] = pypto.gather(st, 1, ct)
            else:
                out[i * TB:, :] = pypto.scatter(st, 1, ct, 2.0)

    return k


def _table_kernel(op: str):
    pypto = emu.install()

    @pypto.frontend.jit
    def k(idx: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32), src: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
          out: pypto.Tensor([V, D], pypto.DT_FP32)):
        n = idx.shape[0]
        pypto.set_vec_tile_shapes(V, D)
        for i in pypto.loop((n + TB - 1) // TB, name="loop_n", idx_name="n_idx"):
            v = (n - i * TB).min(TB)
            it = pypto.view(idx, [TB], [i * TB], valid_shape=[v])
            st = pypto.view(src, [TB, D], [i * TB, 0], valid_shape=[v, D])
            if op == "index_add":
                out[:] = pypto.index_add(out, 0, it, st)
            else:
                pypto.index_put_(out, (it,), st)

    return k


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(31)
    src = rng.standard_normal((N, D)).astype(np.float32)
    cidx = np.stack([rng.permutation(D) for _ in range(N)]).astype(np.int64)
    return src, cidx


def test_gather_on_a_tail_block_reads_the_valid_index_rows_only() -> None:
    src, cidx = _inputs()
    out = np.zeros((N, D), np.float32)
    _rows_kernel("gather")(src, cidx, out)
    np.testing.assert_array_equal(out, np.take_along_axis(src, cidx, axis=1))


def test_scatter_on_a_tail_block_writes_the_valid_index_rows_only() -> None:
    src, cidx = _inputs()
    out = np.zeros((N, D), np.float32)
    _rows_kernel("scatter")(src, cidx, out)
    want = src.copy()
    np.put_along_axis(want, cidx, 2.0, axis=1)
    np.testing.assert_array_equal(out, want)


def test_index_add_and_index_put_use_the_valid_entries_and_their_source_rows() -> None:
    rng = np.random.default_rng(7)
    idx = rng.permutation(V)[:N].astype(np.int32)
    src = rng.standard_normal((N, D)).astype(np.float32)
    for op in ("index_add", "index_put_"):
        out = np.zeros((V, D), np.float32)
        _table_kernel(op)(idx, src, out)
        want = np.zeros((V, D), np.float32)
        want[idx] = src  # distinct indices: add into zeros and put are the same
        np.testing.assert_allclose(out, want, rtol=0, atol=0, err_msg=op)
