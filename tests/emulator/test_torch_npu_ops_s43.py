"""s43's fused operators of the ``torch_npu`` stand-in (``npu_apply_adam_w``, ``npu_bmmV2``, ``npu_linear``) against
independent references (the scripts calling them through ``torch_npu`` are in tests/gym/test_scripts_s43.py).

Why: the fused AdamW step is the golden of the gym's ApplyAdamWV2 kernel, so a formula other than the vendor's
would pass or fail that kernel for the wrong reason. The references are the torch_npu 2.14.0 doc formula written
in numpy float64 (with ``beta1_power = beta1^(t-1)``), numpy products, and the argument errors the doc implies.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch_npu stand-in's operators compute with torch")

from runtime.emulator import _torch_npu_ops as ops  # noqa: E402


def _randn(*shape: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _adamw_np(var, m, v, grad, mgn, b1p, b2p, lr, wd, b1, b2, eps, amsgrad, maximize):
    g = -grad if maximize else grad
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    if amsgrad:
        v = np.maximum(mgn, v)
    m_hat, v_hat = m / (1 - b1p * b1), v / (1 - b2p * b2)
    return var - lr / (np.sqrt(v_hat) + eps) * m_hat - lr * wd * var, m, v


@pytest.mark.parametrize("amsgrad, maximize", [(False, False), (True, False), (False, True), (True, True)])
def test_apply_adam_w_is_the_doc_formula_in_place(amsgrad: bool, maximize: bool) -> None:
    var, m, grad = _randn(6, 5, seed=1), _randn(6, 5, seed=2) * 0.1, _randn(6, 5, seed=3)
    v, mgn = _randn(6, 5, seed=4).abs() * 0.01, _randn(6, 5, seed=5).abs() * 0.02
    args = (0.9**2, 0.999**2, 1e-2, 0.1, 0.9, 0.999, 1e-8)
    want = _adamw_np(*(t.double().numpy() for t in (var, m, v, grad, mgn)), *args, amsgrad, maximize)
    out = (var, m, v)
    got = ops.npu_apply_adam_w(*args, grad, mgn if amsgrad else None, amsgrad, maximize, out=out)
    assert all(a is b for a, b in zip(got, out, strict=True))  # the out tensors, updated in place
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w, rtol=2e-6, atol=1e-7)
    if amsgrad:  # the max is kept in v (the doc), and it can differ from the plain moment
        assert bool((v.double().numpy() >= mgn.double().numpy() - 1e-12).all())


def test_apply_adam_w_bf16_keeps_dtypes_and_checks_its_arguments() -> None:
    var, m, v = (_randn(4, 8, seed=s, dtype=torch.bfloat16) for s in (1, 2, 3))
    v = v.abs()
    grad = _randn(4, 8, seed=4, dtype=torch.bfloat16)
    out = ops.npu_apply_adam_w(1.0, 1.0, 1e-3, 0.0, 0.9, 0.999, 1e-8, grad, None, None, None, out=(var, m, v))
    assert [t.dtype for t in out] == [torch.bfloat16] * 3
    with pytest.raises(ValueError, match="amsgrad=True needs max_grad_norm"):
        ops.npu_apply_adam_w(1.0, 1.0, 1e-3, 0.0, 0.9, 0.999, 1e-8, grad, None, True, False, out=(var, m, v))
    with pytest.raises(ValueError, match="grad must have var's shape and dtype"):
        ops.npu_apply_adam_w(1.0, 1.0, 1e-3, 0.0, 0.9, 0.999, 1e-8, grad.float(), None, False, False,
                             out=(var, m, v))
    i = torch.zeros(4, 8, dtype=torch.int32)
    with pytest.raises(NotImplementedError, match="npu_apply_adam_w: var.dtype"):
        ops.npu_apply_adam_w(1.0, 1.0, 1e-3, 0.0, 0.9, 0.999, 1e-8, i, None, False, False, out=(i, i.clone(),
                                                                                                   i.clone()))
    with pytest.raises(TypeError, match="out"):  # `out` is required, as in the vendor's schema
        ops.npu_apply_adam_w(1.0, 1.0, 1e-3, 0.0, 0.9, 0.999, 1e-8, grad, None, False, False)  # type: ignore[call-arg]


def test_bmm_v2_and_linear_against_numpy() -> None:
    a, b = _randn(3, 4, 5, seed=1, dtype=torch.float16), _randn(3, 5, 2, seed=2, dtype=torch.float16)
    got = ops.npu_bmmV2(a, b, [])
    assert got.dtype == torch.float16 and tuple(got.shape) == (3, 4, 2)
    want = np.einsum("bik,bkj->bij", a.double().numpy(), b.double().numpy())
    np.testing.assert_allclose(got.double().numpy(), want, rtol=2e-3, atol=2e-3)
    ia = torch.randint(-50, 50, (2, 3, 4), generator=torch.Generator().manual_seed(3), dtype=torch.int32)
    ib = torch.randint(-50, 50, (2, 4, 3), generator=torch.Generator().manual_seed(4), dtype=torch.int32)
    assert torch.equal(ops.npu_bmmV2(ia, ib, []), torch.from_numpy(ia.numpy() @ ib.numpy()))
    with pytest.raises(ValueError, match="dtypes differ"):
        ops.npu_bmmV2(a, b.float(), [])
    x, w, bias = _randn(2, 16, seed=5), _randn(4, 16, seed=6), _randn(4, seed=7)
    np.testing.assert_allclose(ops.npu_linear(x, w, bias).numpy(), x.numpy() @ w.numpy().T + bias.numpy(),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ops.npu_linear(x, w).numpy(), x.numpy() @ w.numpy().T, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="must be 2D"):
        ops.npu_linear(x[None], w)
    with pytest.raises(NotImplementedError, match="npu_linear: input.dtype"):
        ops.npu_linear(x.to(torch.int8), w.to(torch.int8))
    assert {"npu_apply_adam_w", "npu_bmmV2", "npu_linear"} <= set(ops.OPS)
