"""s45's additions to the ``torch_npu`` stand-in, against independent references: ``npu_fusion_attention_grad``
against the attention backward written out in numpy float64 (P, dV = P^T dO, dS = P * (dP - rowsum(dP * P)), dQ,
dK summed over each GQA group), ``npu_add_layer_norm`` against numpy's LayerNorm of the sum, and the
``torch.npu.mstx`` markers and ``_lazy_init`` a performance script calls.

Why: each of these names stopped a script with ``NotProvidedError`` before (the golden of a FlashAttention backward
operator, an add+LayerNorm fusion, a profiled run), and a golden gradient of another formula would decide a
kernel's verdict for the wrong reason.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch_npu stand-in's operators compute with torch")

from runtime.emulator._errors import EmulatorUnsupported  # noqa: E402
from runtime.emulator._torch_npu_ops import OPS, npu_add_layer_norm  # noqa: E402
from runtime.emulator._torch_npu_ops_fa import OPS as FA_OPS  # noqa: E402
from runtime.emulator._torch_npu_ops_fa import npu_fusion_attention, npu_fusion_attention_grad  # noqa: E402
from runtime.emulator._torch_npu_runtime import mstx_module, runtime_names  # noqa: E402


def _randn(*shape: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _attention_grad(q: np.ndarray, k: np.ndarray, v: np.ndarray, do: np.ndarray, scale: float,
                    blocked: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B, N, S1, D) x (B, Nkv, S2, D): float64 gradients of softmax(scale q k^T, masked) v, head by head."""
    b_, n, _, _ = q.shape
    group = n // k.shape[1]
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for b in range(b_):
        for h in range(n):
            kv = h // group
            s = scale * q[b, h] @ k[b, kv].T
            if blocked is not None:
                s = np.where(blocked, -np.inf, s)
            p = np.exp(s - s.max(axis=-1, keepdims=True))
            p /= p.sum(axis=-1, keepdims=True)
            dv[b, kv] += p.T @ do[b, h]
            dp = do[b, h] @ v[b, kv].T
            ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
            dq[b, h] = scale * ds @ k[b, kv]
            dk[b, kv] += scale * ds.T @ q[b, h]
    return dq, dk, dv


@pytest.mark.parametrize(("layout", "causal"), [("BNSD", False), ("BNSD", True), ("BSH", True)])
def test_fusion_attention_grad_is_the_attention_backward(layout: str, causal: bool) -> None:
    """GQA (4 query heads on 2 key/value heads), float32: dq/dk/dv equal the float64 backward to float32 rounding;
    the forward's statistics are accepted as the device's are; dpse is empty."""
    b, n, nkv, s, d, scale = 2, 4, 2, 12, 16, 0.25
    q, k, v, do = (_randn(b, h, s, d, seed=i) for i, h in enumerate((n, nkv, nkv, n)))
    mask = torch.ones(2048, 2048, dtype=torch.bool).triu(1) if causal else None
    kw = {"atten_mask": mask, "sparse_mode": 2} if causal else {}

    def to_layout(t: torch.Tensor) -> torch.Tensor:
        return t.permute(0, 2, 1, 3).flatten(2).contiguous() if layout == "BSH" else t

    def from_layout(t: torch.Tensor, heads: int) -> np.ndarray:
        if layout == "BSH":
            t = t.unflatten(2, (heads, d)).permute(0, 2, 1, 3)
        return t.double().numpy()

    args = [to_layout(t) for t in (q, k, v, do)]
    out, smax, ssum = npu_fusion_attention(*args[:3], n, layout, scale=scale, **kw)[:3]
    dq, dk, dv, dpse = npu_fusion_attention_grad(*args, n, layout, scale_value=scale, softmax_max=smax,
                                                 softmax_sum=ssum, attention_in=out, **kw)
    blocked = np.triu(np.ones((s, s), bool), 1) if causal else None
    want = _attention_grad(*(t.double().numpy() for t in (q, k, v, do)), scale, blocked)
    for got, ref, heads in zip((dq, dk, dv), want, (n, nkv, nkv), strict=True):
        assert got.dtype == torch.float32 and got.shape == args[0 if heads == n else 1].shape
        np.testing.assert_allclose(from_layout(got, heads), ref, rtol=1e-4, atol=1e-5)
    assert dpse.numel() == 0


def test_fusion_attention_grad_keeps_the_dtype_and_refuses_dropout() -> None:
    q = _randn(1, 2, 8, 16, seed=7, dtype=torch.bfloat16)
    grads = npu_fusion_attention_grad(q, q, q, q, 2, "BNSD", scale_value=0.5)
    assert [g.dtype for g in grads[:3]] == [torch.bfloat16] * 3
    with pytest.raises(EmulatorUnsupported, match="keep_prob"):
        npu_fusion_attention_grad(q, q, q, q, 2, "BNSD", keep_prob=0.9)
    with pytest.raises(ValueError, match="dy"):
        npu_fusion_attention_grad(q, q, q, q[:, :, :4], 2, "BNSD")
    assert FA_OPS["npu_fusion_attention_grad"] is npu_fusion_attention_grad


def test_add_layer_norm_is_layer_norm_of_the_sum() -> None:
    """(y, mean, rstd, x): y in x1's dtype, mean/rstd FP32 with gamma's dims kept as 1, x the rounded sum."""
    x1, x2 = _randn(3, 5, 32, seed=1, dtype=torch.float16), _randn(3, 5, 32, seed=2, dtype=torch.float16)
    gamma, beta = _randn(32, seed=3, dtype=torch.float16), _randn(32, seed=4, dtype=torch.float16)
    y, mean, rstd, x = npu_add_layer_norm(x1, x2, gamma, beta, 1e-5, additional_output=True)
    s = x1.double().numpy() + x2.double().numpy()
    mu = s.mean(-1, keepdims=True)
    r = 1 / np.sqrt(((s - mu) ** 2).mean(-1, keepdims=True) + 1e-5)
    ref = (s - mu) * r * gamma.double().numpy() + beta.double().numpy()
    assert y.dtype == x.dtype == torch.float16 and mean.dtype == rstd.dtype == torch.float32
    assert mean.shape == rstd.shape == (3, 5, 1)
    np.testing.assert_allclose(y.double().numpy(), ref, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(mean.double().numpy(), mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd.double().numpy(), r, rtol=1e-5)
    np.testing.assert_array_equal(x.numpy(), (x1.float() + x2.float()).half().numpy())
    with pytest.raises(ValueError, match="beta"):
        npu_add_layer_norm(x1, x2, gamma, beta[:16])
    assert OPS["npu_add_layer_norm"] is npu_add_layer_norm


def test_mstx_markers_and_lazy_init_are_accepted() -> None:
    names = runtime_names(torch, lambda: "Ascend910B1")
    names["_lazy_init"]()
    mstx = names["mstx"]
    first, second = mstx.range_start("load"), mstx.range_start("run", None)
    assert first != second and mstx.range_end(first) is None and mstx.mark("step") is None

    @mstx_module().mstx_range("phase")
    def f(a: int) -> int:
        return a + 1

    assert f(1) == 2
