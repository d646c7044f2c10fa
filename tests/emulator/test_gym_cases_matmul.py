"""Matmul fixes found running every gym case: a kernel's numbers do not depend on the host's BLAS threads
(`device._blas.one_blas_thread` around every kernel run, the count restored), and the FP8 operand memo checks its
bytes 8 at a time (`_k_math._same_bytes`).

Found running all four cases of the gym's quant_batch_matmul (bench/gym_cases.md): OpenBLAS split each
4 x 6144 x 512 tile GEMM over the host's threads - 230 ms a tile on a loaded 2-core host against 5 ms on one
thread, 390 s for the script - and a threaded float32 GEMM sums in another order than a single thread, so the
emulator's matmul bits depended on the machine. The verifier's processes all run one BLAS thread
(`runtime.sandbox.env_policy`); the emulator's kernels now do too, whatever the process was started with."""

import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator.device import _blas, _k_math

M, K, N = 32, 512, 128


@pytest.fixture()
def blas(monkeypatch):
    for v in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setattr(_blas, "_controller", False)
    c = _blas._blas()
    if c is None:
        pytest.skip("numpy uses no BLAS whose thread count threadpoolctl can set")
    return c


def _kernel():
    pypto = emu.install()

    @pypto.frontend.jit
    def mm(a: pypto.Tensor([M, K], pypto.DT_FP32), b: pypto.Tensor([K, N], pypto.DT_FP32),
           out: pypto.Tensor([M, N], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([M, M], [64, K], [N, N])  # kL0 512 overflows L0B (FFFFFF on the wheel)
        pypto.set_vec_tile_shapes(M, N)
        out[:] = pypto.matmul(a, b, pypto.DT_FP32)

    return mm


def test_a_kernel_matmul_has_the_same_bits_with_two_blas_threads_and_the_count_is_restored(blas):
    mm = _kernel()
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    results = []
    for threads in (1, 2):
        with blas.limit(limits=threads):
            out = np.zeros((M, N), np.float32)
            with emu.session() as s:
                mm(a, b, out)
            assert not [d for d in s.diagnostics if d.severity == "error"], s.diagnostics
            results.append(out)
            assert {lib.num_threads for lib in blas.lib_controllers} == {threads}  # the user's setting, back
    assert np.array_equal(results[0], results[1])
    with blas.limit(limits=1):
        assert np.array_equal(results[0], np.matmul(a, b))


def test_the_memo_byte_check_is_array_equal_for_every_layout():
    """`_k_math._same_bytes` (the operand memo's check, 8 bytes at a time where rows allow): the same verdict as
    ``np.array_equal`` on blocks of rows, of columns, strided, unaligned, and with one bit flipped anywhere."""
    big = np.random.default_rng(7).integers(0, 256, (64, 96), dtype=np.uint8)
    views = [big[16:48], big[:, 8:40], big[::2], big[:, 3:19], big[1:9, 5:12], big[:, 0], big.T]
    for v in views:
        c = np.ascontiguousarray(v)
        assert _k_math._same_bytes(c, v)
        for idx in [(0,) * v.ndim, tuple(n - 1 for n in v.shape), tuple(n // 2 for n in v.shape)]:
            d = c.copy()
            d[idx] ^= 1 << 5
            assert not _k_math._same_bytes(d, v)
            assert not np.array_equal(d, v)


def test_nothing_is_looked_up_when_the_environment_already_pins_one_thread(monkeypatch):
    """Sandboxed children run with OPENBLAS_NUM_THREADS=1 (env_policy) and refuse ``ctypes.dlopen`` (audit guard):
    the lookup must not even be tried there."""
    import threadpoolctl

    tried = []

    def refused(*_a, **_k):
        tried.append(1)
        raise RuntimeError("dlopen refused")

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", refused)
    for var, value in [("OPENBLAS_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "1")]:
        for v in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
            monkeypatch.delenv(v, raising=False)
        monkeypatch.setenv(var, value)
        monkeypatch.setattr(_blas, "_controller", False)
        assert _blas._blas() is None
        with _blas.one_blas_thread():
            pass
    assert tried == []
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")  # OpenBLAS's own precedence: this one wins over OMP's 1
    monkeypatch.setattr(_blas, "_controller", False)
    assert _blas._blas() is None and tried == [1]  # tried, refused: no control, the kernel still runs
    with _blas.one_blas_thread():
        pass


def test_only_a_program_with_a_matmul_looks_for_the_blas(monkeypatch):
    """The lookup scans every shared library of the process (11-15 ms in a torch process): a kernel without a
    matmul - the first call of a 1-tile softmax paid more for it than for its whole run - never makes it."""
    for v in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(v, raising=False)
    looked: list[int] = []

    def lookup():
        looked.append(1)
        return None

    monkeypatch.setattr(_blas, "_blas", lookup)
    pypto = emu.install()

    @pypto.frontend.jit
    def add(a: pypto.Tensor([M, N], pypto.DT_FP32), out: pypto.Tensor([M, N], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(M, N)
        out[:] = pypto.add(a, a)

    a = np.ones((M, N), np.float32)
    out = np.zeros((M, N), np.float32)
    with emu.session():
        add(a, out)
    assert looked == [] and np.array_equal(out, a + a)
    b = np.ones((K, N), np.float32)
    with emu.session():
        _kernel()(np.ones((M, K), np.float32), b, out)
    assert looked == [1] and np.array_equal(out, np.full((M, N), K, np.float32))
