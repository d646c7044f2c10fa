"""A matmul operand converted once per call (`_k_math._operand_f32`): the same bits as converting it every time.

quant_batch_matmul's pattern - the same FP8 block of x2 multiplied in every M-iteration - and the cases the memo
must not serve: the block written between two iterations (here through an assemble into the argument itself)."""

import ml_dtypes
import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator.device import _k_math

F8 = ml_dtypes.float8_e4m3fn
M_BLOCK, M, K, N = 4, 32, 256, 256


def _kernels():
    pypto = emu.install()

    @pypto.frontend.jit
    def reuse(x1: pypto.Tensor([M, K], pypto.DT_FP8E4M3), x2: pypto.Tensor([N, K], pypto.DT_FP8E4M3),
              out: pypto.Tensor([M, N], pypto.DT_INT8)):
        pypto.set_cube_tile_shapes([M_BLOCK, M_BLOCK], [128, 256], [N, N])
        pypto.set_vec_tile_shapes(M_BLOCK, N)
        for m_idx in pypto.loop(M // M_BLOCK, name="LOOP_M", idx_name="m_idx"):
            a = pypto.view(x1, [M_BLOCK, K], [m_idx * M_BLOCK, 0])
            r = pypto.matmul(a, x2, pypto.DT_INT8, b_trans=True, extend_params={"scale": 0.25})
            pypto.assemble(r, [m_idx * M_BLOCK, 0], out)

    @pypto.frontend.jit
    def rewrite(x1: pypto.Tensor([M, K], pypto.DT_FP8E4M3), x2: pypto.Tensor([N, K], pypto.DT_FP8E4M3),
                out: pypto.Tensor([M, N], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([M_BLOCK, M_BLOCK], [128, 256], [N, N])
        pypto.set_vec_tile_shapes(M_BLOCK, N)
        for m_idx in pypto.loop(M // M_BLOCK, name="LOOP_M", idx_name="m_idx"):
            a = pypto.view(x1, [M_BLOCK, K], [m_idx * M_BLOCK, 0])
            out[m_idx * M_BLOCK:, 0:] = pypto.matmul(a, x2, pypto.DT_FP32, b_trans=True)
            pypto.assemble(a, [m_idx * M_BLOCK, 0], x2)  # x2 changes between two matmuls that read it whole

    return reuse, rewrite


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    r = np.random.default_rng(seed)
    return ((r.standard_normal((M, K)) * 8).astype(F8), (r.standard_normal((N, K)) * 8).astype(F8))


def _run(kernel, out_dtype, memo: bool, monkeypatch) -> tuple[bytes, int]:
    """The output's bytes and the number of large FP8 conversions made."""
    monkeypatch.setattr(_k_math, "_MEMO_MIN", _k_math._MEMO_MIN if memo else 1 << 62)
    n = [0]
    compute = _k_math.compute

    def counting(x):
        n[0] += x.dtype.itemsize == 1 and x.size >= N * K
        return compute(x)
    monkeypatch.setattr(_k_math, "compute", counting)
    x1, x2 = _inputs(0)
    out = np.zeros((M, N), out_dtype)
    with emu.session(options=emu.Options(npuarch="DAV_3510")) as s:
        kernel(x1, x2, out)
    assert not [d for d in s.diagnostics if d.severity == "error"], s.diagnostics
    monkeypatch.undo()
    return out.tobytes(), n[0]


@pytest.fixture(autouse=True)
def _small_memo(monkeypatch):
    monkeypatch.setattr(_k_math, "_MEMO_MIN", N * K)  # this test's blocks are smaller than the gym's


def test_an_operand_the_loop_does_not_move_is_converted_once(monkeypatch):
    reuse, _ = _kernels()
    with_memo, conversions = _run(reuse, np.int8, True, monkeypatch)
    monkeypatch.setattr(_k_math, "_MEMO_MIN", N * K)
    without, every = _run(reuse, np.int8, False, monkeypatch)
    assert with_memo == without
    assert (conversions, every) == (1, M // M_BLOCK)
    assert len(set(np.frombuffer(with_memo, np.int8))) > 20  # a result that tells wrong operands apart


def test_an_operand_written_since_is_converted_again(monkeypatch):
    _, rewrite = _kernels()
    with_memo, conversions = _run(rewrite, np.float32, True, monkeypatch)
    monkeypatch.setattr(_k_math, "_MEMO_MIN", N * K)
    without, every = _run(rewrite, np.float32, False, monkeypatch)
    assert with_memo == without
    assert conversions == every == M // M_BLOCK
    # the rewrite changed what later iterations multiply: a stale operand would have given other numbers. The
    # references are float64 products: a float32 BLAS's bits depend on the CPU's kernels and the operands' layout
    # (an AVX-512 sgemm on a transposed view differs from the contiguous one by 1.2e-4 of 3.6e3), so the first
    # block is compared within a K=256 float32 sum's rounding and the second must be far from the stale product
    x1, x2 = _inputs(0)
    x2_64 = x2.astype(np.float64).T
    got = np.frombuffer(with_memo, np.float32).reshape(M, N)
    np.testing.assert_allclose(got[:M_BLOCK], x1[:M_BLOCK].astype(np.float64) @ x2_64, rtol=0, atol=1e-2)
    stale = x1[M_BLOCK:2 * M_BLOCK].astype(np.float64) @ x2_64
    assert np.abs(got[M_BLOCK:2 * M_BLOCK] - stale).max() > 100.0


class _Env:
    """What `_operand_f32` uses of `device._env.Env`."""

    def __init__(self, arg_bytes: int) -> None:
        self.converted, self.converted_bytes = {}, 0
        self.buf = {0: (np.zeros(arg_bytes, np.uint8), None)}
        self.param_keys = frozenset({0})

    def arg_bytes(self) -> int:
        return self.buf[0][0].nbytes


def test_the_memo_keeps_few_operands_within_the_arguments_bytes():
    """At most `_MEMO_ENTRIES` operands, within the arguments' bytes - or one operand alone when it is larger (the
    float32 form of a whole FP8 argument is 4x its bytes) - the oldest evicted first; hits need equal bytes."""
    r = np.random.default_rng(2)
    blocks = [(r.standard_normal((256, 256)) * 8).astype(F8) for _ in range(12)]
    entry = 256 * 256 * 5
    env = _Env(arg_bytes=10 * entry)
    for i, b in enumerate(blocks):
        got = _k_math._operand_f32(env, b, trans=i % 2 == 1)
        want = np.swapaxes(b, -1, -2) if i % 2 else b
        assert got.tobytes() == want.astype(np.float32).tobytes()
        assert len(env.converted) <= _k_math._MEMO_ENTRIES and env.converted_bytes <= env.arg_bytes()
    assert len(env.converted) == _k_math._MEMO_ENTRIES
    assert _k_math._operand_f32(env, blocks[-1], True) is env.converted[next(reversed(env.converted))][1]
    assert all(k[0] != blocks[0].__array_interface__["data"][0] for k in env.converted)  # the oldest went first
    blocks[-1][0, 0] = F8(3.0) if blocks[-1][0, 0] != F8(3.0) else F8(-3.0)
    fresh = _k_math._operand_f32(env, blocks[-1], True)  # written since: converted again
    assert fresh.tobytes() == np.swapaxes(blocks[-1], -1, -2).astype(np.float32).tobytes()
    small = _Env(arg_bytes=entry // 2)
    for b in blocks[:3]:
        _k_math._operand_f32(small, b, False)
        assert len(small.converted) == 1 and small.converted_bytes == entry
