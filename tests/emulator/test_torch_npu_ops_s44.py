"""s44's operators of the ``torch_npu`` stand-in (``npu_fusion_attention``, ``npu_scaled_masked_softmax``) against
independent references: numpy float64 attention written per batch and head, and the numpy softmax of the documented
formula. The scripts calling them through ``torch_npu`` under the runner are in tests/gym/test_scripts_s44.py.

Why: a golden computed with these operators decides a kernel's verdict, so a layout, mask or statistic other than
the vendor's would pass or fail a kernel for the wrong reason.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch_npu stand-in's operators compute with torch")

from runtime.emulator._errors import EmulatorUnsupported  # noqa: E402
from runtime.emulator._torch_npu_ops_fa import npu_fusion_attention, npu_scaled_masked_softmax  # noqa: E402


def _randn(*shape: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float,
         blocked: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B, N, S1, D) x (B, Nkv, S2, D): float64 attention, row max and row sum of exp(s - max), one head at a time."""
    b_, n, s1, _ = q.shape
    group = n // k.shape[1]
    out = np.zeros((b_, n, s1, v.shape[-1]))
    mx, sm = np.zeros((b_, n, s1)), np.zeros((b_, n, s1))
    for b in range(b_):
        for h in range(n):
            s = scale * q[b, h] @ k[b, h // group].T
            if blocked is not None:
                s = np.where(np.broadcast_to(blocked[b % blocked.shape[0], h % blocked.shape[1]], s.shape),
                             -np.inf, s)
            m = s.max(axis=-1, keepdims=True)
            e = np.exp(s - m)
            out[b, h] = e / e.sum(axis=-1, keepdims=True) @ v[b, h // group]
            mx[b, h], sm[b, h] = m[:, 0], e.sum(axis=-1)
    return out, mx, sm


def _bnsd(t: torch.Tensor, layout: str, heads: int) -> np.ndarray:
    a = t.double().numpy()
    if layout == "BSH":
        a = a.reshape(a.shape[0], a.shape[1], heads, -1).transpose(0, 2, 1, 3)
    elif layout == "SBH":
        a = a.transpose(1, 0, 2).reshape(a.shape[1], a.shape[0], heads, -1).transpose(0, 2, 1, 3)
    elif layout == "BSND":
        a = a.transpose(0, 2, 1, 3)
    return a


@pytest.mark.parametrize("layout", ["BSH", "SBH", "BSND", "BNSD"])
def test_fusion_attention_layouts_gqa_and_statistics(layout: str) -> None:
    b, n, nkv, s1, s2, d = 2, 4, 2, 5, 7, 8
    shapes = {"BSH": lambda h, s: (b, s, h * d), "SBH": lambda h, s: (s, b, h * d),
              "BSND": lambda h, s: (b, s, h, d), "BNSD": lambda h, s: (b, h, s, d)}[layout]
    q = _randn(*shapes(n, s1), seed=1, dtype=torch.float16)
    k, v = _randn(*shapes(nkv, s2), seed=2, dtype=torch.float16), _randn(*shapes(nkv, s2), seed=3,
                                                                          dtype=torch.float16)
    scale = d ** -0.5
    got = npu_fusion_attention(q, k, v, n, layout, scale=scale)
    assert len(got) == 7 and got[4:] == (0, 0, b * n * s1 * s2)
    out, smax, ssum, sout = got[:4]
    assert out.dtype == torch.float16 and out.shape == q.shape
    assert smax.shape == ssum.shape == (b, n, s1, 8) and smax.dtype == ssum.dtype == torch.float32
    assert sout.numel() == 0 and sout.dtype == torch.float16
    want, mx, sm = _ref(_bnsd(q, layout, n), _bnsd(k, layout, nkv), _bnsd(v, layout, nkv), scale, None)
    np.testing.assert_allclose(_bnsd(out, layout, n), want, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(smax.numpy(), np.repeat(mx[..., None], 8, -1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ssum.numpy(), np.repeat(sm[..., None], 8, -1), rtol=1e-5, atol=1e-5)


def test_fusion_attention_masks_and_sparse_modes() -> None:
    b, n, s1, s2, d = 2, 2, 6, 9, 16
    q, k, v = _randn(b, n, s1, d, seed=4), _randn(b, n, s2, d, seed=5), _randn(b, n, s2, d, seed=6)
    qi, kj = np.arange(s1)[:, None], np.arange(s2)[None]
    explicit = torch.from_numpy(np.random.default_rng(0).random((b, 1, s1, s2)) < 0.3)
    explicit[..., 0] = False  # no dead rows
    compressed = torch.ones(2048, 2048, dtype=torch.bool).triu(1)
    cases = [
        (dict(atten_mask=explicit), explicit.numpy()),
        (dict(atten_mask=explicit[0, 0].to(torch.uint8), sparse_mode=1), explicit[0, 0].numpy()[None, None]),
        (dict(atten_mask=compressed, sparse_mode=2), (kj > qi)[None, None]),
        (dict(atten_mask=compressed, sparse_mode=3), (kj > qi + s2 - s1)[None, None]),
        (dict(atten_mask=compressed, sparse_mode=4, pre_tockens=2, next_tockens=0),
         ((kj - qi - (s2 - s1) > 0) | (kj - qi - (s2 - s1) < -2))[None, None]),
    ]
    for kwargs, blocked in cases:
        out, smax, ssum = npu_fusion_attention(q, k, v, n, "BNSD", scale=0.3, **kwargs)[:3]
        want, mx, sm = _ref(*(t.double().numpy() for t in (q, k, v)), 0.3, blocked)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5, err_msg=str(kwargs.keys()))
        np.testing.assert_allclose(smax[..., 0].numpy(), mx, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ssum[..., 0].numpy(), sm, rtol=1e-5, atol=1e-5)
    # sparse_mode 0 band with S1 == S2 (left-up aligned)
    q2 = _randn(1, 1, 6, d, seed=7)
    out = npu_fusion_attention(q2, q2, q2, 1, "BNSD", pre_tockens=1, next_tockens=1)[0]
    i, j = np.arange(6)[:, None], np.arange(6)[None]
    want = _ref(*(q2.double().numpy(),) * 3, 1.0, ((j > i + 1) | (j < i - 1))[None, None])[0]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


def test_fusion_attention_tnd_is_each_sequence_alone() -> None:
    n, d, qlens, kvlens = 2, 8, [2, 3, 4], [3, 3, 5]
    q, k, v = _randn(9, n, d, seed=8, dtype=torch.bfloat16), _randn(11, n, d, seed=9, dtype=torch.bfloat16), \
        _randn(11, n, d, seed=10, dtype=torch.bfloat16)
    cq, ck = np.cumsum(qlens).tolist(), np.cumsum(kvlens).tolist()
    out, smax, ssum, _, seed, offset, numels = npu_fusion_attention(
        q, k, v, n, "TND", atten_mask=torch.ones(2048, 2048, dtype=torch.bool).triu(1), sparse_mode=3,
        actual_seq_qlen=cq, actual_seq_kvlen=ck, scale=0.5)
    assert out.shape == (9, n, d) and out.dtype == torch.bfloat16 and smax.shape == ssum.shape == (9, n, 8)
    assert (seed, offset, numels) == (0, 0, n * sum(a * b for a, b in zip(qlens, kvlens, strict=True)))
    for (q0, q1), (k0, k1) in zip(zip([0, *cq[:-1]], cq, strict=True), zip([0, *ck[:-1]], ck, strict=True),
                                  strict=True):
        s1, s2 = q1 - q0, k1 - k0
        blocked = (np.arange(s2)[None] > np.arange(s1)[:, None] + s2 - s1)[None, None]
        seg = [t[a:e].double().numpy().transpose(1, 0, 2)[None] for t, a, e in ((q, q0, q1), (k, k0, k1),
                                                                              (v, k0, k1))]
        want, mx, _ = _ref(*seg, 0.5, blocked)
        np.testing.assert_allclose(out[q0:q1].double().numpy().transpose(1, 0, 2)[None], want, rtol=2e-2,
                                   atol=2e-2)
        np.testing.assert_allclose(smax[q0:q1, :, 0].numpy().T[None], mx, rtol=1e-5, atol=1e-5)


def test_fusion_attention_refuses_what_it_does_not_emulate() -> None:
    q = _randn(1, 2, 4, 8, seed=11, dtype=torch.float16)
    with pytest.raises(EmulatorUnsupported, match="EMU_UNSUPPORTED.*keep_prob=0.9 \\(dropout\\) is not emulated"):
        npu_fusion_attention(q, q, q, 2, "BNSD", keep_prob=0.9)
    with pytest.raises(ValueError, match="keep_prob must lie in"):
        npu_fusion_attention(q, q, q, 2, "BNSD", keep_prob=1.5)
    with pytest.raises(NotImplementedError, match="pse"):
        npu_fusion_attention(q, q, q, 2, "BNSD", pse=q)
    with pytest.raises(NotImplementedError, match="sparse_mode=5"):
        npu_fusion_attention(q, q, q, 2, "BNSD", sparse_mode=5)
    with pytest.raises(ValueError, match="needs the compressed"):
        npu_fusion_attention(q, q, q, 2, "BNSD", sparse_mode=3)
    with pytest.raises(ValueError, match="input_layout must be one of"):
        npu_fusion_attention(q, q, q, 2, "NSD")
    with pytest.raises(ValueError, match="actual_seq_qlen"):
        npu_fusion_attention(q[0].transpose(0, 1), q[0].transpose(0, 1), q[0].transpose(0, 1), 2, "TND")
    with pytest.raises(TypeError):  # the vendor's keyword spelling only
        npu_fusion_attention(q, q, q, 2, "BNSD", pre_tokens=1)  # type: ignore[call-arg]


def test_scaled_masked_softmax_formula_dtype_and_triu() -> None:
    x = _randn(2, 3, 5, 7, seed=12, dtype=torch.float16) * 4
    mask = torch.from_numpy(np.random.default_rng(1).random((2, 1, 5, 7)) < 0.4)
    y = npu_scaled_masked_softmax(x, mask, 0.5)
    assert y.dtype == torch.float16 and y.shape == x.shape
    s = np.where(np.broadcast_to(mask.numpy(), x.shape), -10000.0, x.double().numpy() * 0.5)
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(y.double().numpy(), e / e.sum(-1, keepdims=True), rtol=2e-3, atol=1e-3)
    full = torch.ones(5, 7, dtype=torch.bool)  # every score masked: -10000 everywhere, a uniform row
    np.testing.assert_allclose(npu_scaled_masked_softmax(x.float(), full).numpy(), np.full(x.shape, 1 / 7),
                               rtol=1e-6)
    tri = npu_scaled_masked_softmax(x.float(), None, 1.0, True)  # type: ignore[arg-type]
    t = np.where(np.arange(7)[None] > np.arange(5)[:, None], -10000.0, x.double().numpy())
    e = np.exp(t - t.max(-1, keepdims=True))
    np.testing.assert_allclose(tri.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="mask must be bool"):
        npu_scaled_masked_softmax(x, mask.to(torch.uint8))
    with pytest.raises(ValueError, match="4-D"):
        npu_scaled_masked_softmax(x[0], mask[0])
    with pytest.raises(ValueError, match="does not broadcast"):
        npu_scaled_masked_softmax(x, torch.zeros(3, 5, 6, dtype=torch.bool))
