"""The workspace operators (SiLU, RMSNorm bf16, SDPA with dynamic seq, SwiGLU MLP) against numpy."""


import ml_dtypes
import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


BF16 = ml_dtypes.bfloat16


def _bf(x: np.ndarray) -> np.ndarray:
    return x.astype(BF16)


D = 64
T = 16


@pypto.frontend.jit
def silu_kernel(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(T, D)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, T)):
        valid = (n - i * T).min(T)
        a = pypto.view(x, [T, D], [i * T, 0], valid_shape=[valid, D])
        y = a / (1.0 + pypto.exp(-a))
        pypto.assemble(y, [i * T, 0], out)


@pytest.mark.parametrize("rows", [64, 77, 5])
def test_silu_dynamic_rows_with_tail(rng, rows):
    x = rng.standard_normal((rows, D)).astype(np.float32)
    out = np.full_like(x, -7.0)
    with emu.session() as s:
        silu_kernel(x, out)
    ref = x / (1 + np.exp(-x))
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
    assert s.counters.loop_trips["loop_1"] == -(-rows // T)
    assert not s.errors


H = 128


@pypto.frontend.jit
def rmsnorm_bf16(x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_BF16), gamma: pypto.Tensor([1, H], pypto.DT_BF16),
                 y: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_BF16), eps: float = 1e-6):
    n = x.shape[0]
    for i, u in pypto.loop_unroll(0, n, 1, unroll_list=[4, 2, 1]):
        pypto.set_vec_tile_shapes(4, H)
        xt = pypto.cast(x[i:i + u, :], pypto.DT_FP32)
        ms = pypto.sum(xt * xt, -1, keepdim=True) * (1.0 / H)
        inv = pypto.rsqrt(ms + eps)
        g = pypto.cast(gamma, pypto.DT_FP32)
        y[i:i + u, :] = pypto.cast(xt * inv * g, pypto.DT_BF16)


def _rms_ref(x, g, eps=1e-6):
    xf = x.astype(np.float32)
    ms = (xf * xf).sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / H)
    inv = np.float32(1) / np.sqrt(ms + np.float32(eps))
    return (xf * inv * g.astype(np.float32)).astype(BF16)


@pytest.mark.parametrize("rows", [8, 11, 3])
def test_rmsnorm_bf16_loop_unroll(rng, rows):
    x = _bf(rng.standard_normal((rows, H)))
    g = _bf(rng.uniform(0.5, 1.5, (1, H)))
    y = np.zeros((rows, H), BF16)
    rmsnorm_bf16(x, g, y)
    ref = _rms_ref(x, g)
    np.testing.assert_allclose(y.astype(np.float32), ref.astype(np.float32), rtol=1e-2, atol=1e-2)


S_T = 32
HD = 32


@pypto.frontend.jit
def sdpa_online(q: pypto.Tensor([16, HD], pypto.DT_FP32), k: pypto.Tensor([pypto.DYNAMIC, HD], pypto.DT_FP32),
                v: pypto.Tensor([pypto.DYNAMIC, HD], pypto.DT_FP32), out: pypto.Tensor([16, HD], pypto.DT_FP32)):
    """Flash-attention style online softmax over a dynamic key length, is_loop_begin/end accumulators."""
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
    s_len = k.shape[0]
    m_acc = pypto.tensor([16, 1], pypto.DT_FP32, "m_acc")
    l_acc = pypto.tensor([16, 1], pypto.DT_FP32, "l_acc")
    o_acc = pypto.tensor([16, HD], pypto.DT_FP32, "o_acc")
    for j in pypto.loop(pypto.ceildiv(s_len, S_T)):
        valid = (s_len - j * S_T).min(S_T)
        kt = pypto.view(k, [S_T, HD], [j * S_T, 0], valid_shape=[valid, HD])
        vt = pypto.view(v, [S_T, HD], [j * S_T, 0], valid_shape=[valid, HD])
        s = pypto.matmul(q, kt, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(16, 32)
        s = s * (1.0 / HD ** 0.5)
        m_new = pypto.amax(s, -1, keepdim=True)
        if pypto.is_loop_begin(j):
            p = pypto.exp(s - m_new)
            l_acc[:] = pypto.sum(p, -1, keepdim=True)
            o_acc[:] = pypto.matmul(p, vt, pypto.DT_FP32)
            m_acc[:] = m_new
        else:
            m2 = pypto.maximum(m_acc, m_new)
            alpha = pypto.exp(m_acc - m2)
            p = pypto.exp(s - m2)
            l_acc[:] = l_acc * alpha + pypto.sum(p, -1, keepdim=True)
            o_acc[:] = o_acc * alpha + pypto.matmul(p, vt, pypto.DT_FP32)
            m_acc[:] = m2
        if pypto.is_loop_end(j):
            out[:] = o_acc / l_acc


@pytest.mark.parametrize("seq", [96, 77, 20])
def test_sdpa_online_softmax_dynamic_seq(rng, seq):
    q = rng.standard_normal((16, HD)).astype(np.float32)
    k = rng.standard_normal((seq, HD)).astype(np.float32)
    v = rng.standard_normal((seq, HD)).astype(np.float32)
    out = np.zeros((16, HD), np.float32)
    with emu.session() as s:
        sdpa_online(q, k, v, out)
    sc = q @ k.T / np.sqrt(HD)
    p = np.exp(sc - sc.max(-1, keepdims=True))
    ref = (p / p.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    assert s.counters.matmul_flops > 0


M_ROWS, HID, FF = 32, 64, 128


@pypto.frontend.jit
def swiglu_mlp(x: pypto.Tensor([M_ROWS, HID], pypto.DT_BF16), wg: pypto.Tensor([HID, FF], pypto.DT_BF16),
               wu: pypto.Tensor([HID, FF], pypto.DT_BF16), wd: pypto.Tensor([FF, HID], pypto.DT_BF16),
               out: pypto.Tensor([M_ROWS, HID], pypto.DT_BF16)):
    pypto.set_cube_tile_shapes([16, 16], [32, 64], [64, 64])
    pypto.set_vec_tile_shapes(16, 64)
    for i in pypto.loop(M_ROWS // 16):
        xt = x[i * 16:(i + 1) * 16, :]
        g = pypto.matmul(xt, wg, pypto.DT_FP32)
        u = pypto.matmul(xt, wu, pypto.DT_FP32)
        h = g * pypto.sigmoid(g) * u
        hb = pypto.cast(h, pypto.DT_BF16)
        o = pypto.matmul(hb, wd, pypto.DT_BF16)
        out[i * 16:(i + 1) * 16, :] = o


def test_swiglu_mlp_bf16(rng):
    x = _bf(rng.standard_normal((M_ROWS, HID)) * 0.5)
    wg = _bf(rng.standard_normal((HID, FF)) * 0.1)
    wu = _bf(rng.standard_normal((HID, FF)) * 0.1)
    wd = _bf(rng.standard_normal((FF, HID)) * 0.1)
    out = np.zeros((M_ROWS, HID), BF16)
    swiglu_mlp(x, wg, wu, wd, out)
    f = np.float32
    g = x.astype(f) @ wg.astype(f)
    u = x.astype(f) @ wu.astype(f)
    h = (g * (1 / (1 + np.exp(-g))) * u).astype(BF16).astype(f)
    ref = (h @ wd.astype(f)).astype(BF16).astype(f)
    np.testing.assert_allclose(out.astype(f), ref, rtol=2e-2, atol=2e-2)
