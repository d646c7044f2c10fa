"""The fused operators of the ``torch_npu`` stand-in against independent references.

Why: a gym test's golden is computed with these operators; if the stand-in computed something other than the
vendor operator, the emulator would pass or fail kernels for the wrong reason. Each test checks one operator's
documented formula (torch_npu 2.14.0 ``_op_plugin_docs.py`` / ``_inductor/decomposition.py``) on small seeded
inputs against a reference written differently (numpy float64, explicit loops or einsum), the result structure
of the vendor meta registrations (tuple arity, shapes, dtypes), and the argument errors. The last tests run a
tiny script through ``python -m runtime.emulator``: two operators plus an unknown one, whose error is one line
at the script's own line with exit code 3.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch_npu stand-in's operators compute with torch")

from runtime.emulator import _torch_npu as stand_in  # noqa: E402
from runtime.emulator import _torch_npu_ops as ops  # noqa: E402
from runtime.emulator import _torch_npu_ops_fa as fa_ops  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=_gen(seed)).to(dtype)


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().double().numpy()


def _close(actual: torch.Tensor, expected: np.ndarray, tol: float) -> None:
    np.testing.assert_allclose(_np(actual), expected, rtol=tol, atol=tol)


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


# ---- normalisation ------------------------------------------------------------------------------------------


def _rms_ref(x: np.ndarray, gamma: np.ndarray, eps: float, one_plus: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rows = x.reshape(-1, gamma.size)
    y = np.empty_like(rows)
    rstd = np.empty(rows.shape[0])
    g = gamma.reshape(-1) + (1.0 if one_plus else 0.0)
    for r in range(rows.shape[0]):
        rstd[r] = 1.0 / math.sqrt(sum(v * v for v in rows[r]) / rows.shape[1] + eps)
        y[r] = rows[r] * rstd[r] * g
    return y.reshape(x.shape), rstd


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_rms_norm_formula_shapes_and_dtypes(dtype: torch.dtype, tol: float) -> None:
    x, g = _randn(3, 5, 16, seed=1, dtype=dtype), _randn(16, seed=2, dtype=dtype)
    y, rstd = ops.npu_rms_norm(x, g, epsilon=1e-5)
    ref_y, ref_rstd = _rms_ref(_np(x), _np(g), 1e-5)
    assert y.dtype == dtype and y.shape == x.shape
    assert rstd.dtype == torch.float32 and rstd.shape == (3, 5, 1)  # meta: x's leading dims, gamma's dims as 1
    _close(y, ref_y, tol)
    _close(rstd.reshape(-1), ref_rstd, 1e-5)


def test_rms_norm_over_a_two_dim_gamma_and_its_shape_check() -> None:
    x, g = _randn(4, 3, 8, seed=3), _randn(3, 8, seed=4)
    y, rstd = ops.npu_rms_norm(x, g)
    assert rstd.shape == (4, 1, 1)
    _close(y, _rms_ref(_np(x), _np(g), 1e-6)[0], 1e-5)
    with pytest.raises(ValueError, match="gamma shape"):
        ops.npu_rms_norm(x, _randn(4, seed=5))


def test_gemma_rms_norm_scales_by_one_plus_gamma() -> None:
    x, g = _randn(6, 32, seed=6, dtype=torch.float16), _randn(32, seed=7, dtype=torch.float16)
    y, rstd = ops.npu_gemma_rms_norm(x, g)
    assert y.dtype == torch.float16 and rstd.dtype == torch.float32 and rstd.shape == (6, 1)
    _close(y, _rms_ref(_np(x), _np(g), 1e-6, one_plus=True)[0], 4e-3)


def test_add_rms_norm_returns_y_rstd_and_the_sum() -> None:
    x1, x2 = _randn(2, 4, 32, seed=8, dtype=torch.bfloat16), _randn(2, 4, 32, seed=9, dtype=torch.bfloat16)
    g = _randn(32, seed=10, dtype=torch.bfloat16)
    y, rstd, xs = ops.npu_add_rms_norm(x1, x2, g, 1e-6)
    total = _np(x1) + _np(x2)
    ref_y, ref_rstd = _rms_ref(total, _np(g), 1e-6)
    assert (y.dtype, rstd.dtype, xs.dtype) == (torch.bfloat16, torch.float32, torch.bfloat16)
    assert y.shape == xs.shape == (2, 4, 32) and rstd.shape == (2, 4, 1)
    _close(y, ref_y, 3e-2)
    _close(rstd.reshape(-1), ref_rstd, 1e-5)
    _close(xs, total, 1e-2)
    with pytest.raises(ValueError, match="same shape"):
        ops.npu_add_rms_norm(x1, x2[:, :2], g)


# ---- activations --------------------------------------------------------------------------------------------


def test_swiglu_splits_along_dim() -> None:
    x = _randn(2, 6, 10, seed=11, dtype=torch.float16)
    out = ops.npu_swiglu(x)
    a, b = _np(x)[..., :5], _np(x)[..., 5:]
    assert out.shape == (2, 6, 5) and out.dtype == torch.float16
    _close(out, a * _sigmoid(a) * b, 3e-3)
    out1 = ops.npu_swiglu(x, dim=1)
    a, b = _np(x)[:, :3], _np(x)[:, 3:]
    assert out1.shape == (2, 3, 10)
    _close(out1, a * _sigmoid(a) * b, 3e-3)
    with pytest.raises(ValueError, match="even"):
        ops.npu_swiglu(_randn(3, 5))


def test_silu_fast_gelu_gelu_and_gelu_mul() -> None:
    x = _randn(4, 12, seed=12)
    v = _np(x)
    _close(ops.npu_silu(x), v * _sigmoid(v), 1e-6)
    _close(ops.npu_fast_gelu(x), v / (1.0 + np.exp(-1.702 * v)), 1e-6)
    # formula 1 of the doc (older devices) is the same function, read as CANN's FastGelu writes it: the doc's
    # rendering multiplies the last exponent by an extra x (exp(0.851 x (x - |x|))), which is not a GELU at all
    formula1 = v / (1 + np.exp(-1.702 * np.abs(v))) * np.exp(0.851 * (v - np.abs(v)))
    _close(ops.npu_fast_gelu(x), formula1, 1e-6)
    erf = np.vectorize(math.erf)
    gelu = 0.5 * v * (1 + erf(v / math.sqrt(2)))
    gelu_tanh = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    _close(ops.npu_gelu(x), gelu, 1e-6)
    _close(ops.npu_gelu(x, approximate="tanh"), gelu_tanh, 1e-6)
    h = ops.npu_gelu_mul(x, approximate="tanh")
    assert h.shape == (4, 6)
    _close(h, gelu_tanh[:, :6] * v[:, 6:], 1e-6)
    _close(ops.npu_gelu_mul(x), gelu[:, :6] * v[:, 6:], 1e-6)
    half = x.half()
    assert ops.npu_silu(half).dtype == ops.npu_fast_gelu(half).dtype == ops.npu_gelu(half).dtype == torch.float16
    with pytest.raises(ValueError, match="approximate"):
        ops.npu_gelu(x, approximate="fast")
    with pytest.raises(TypeError):
        ops.npu_gelu(x, "tanh")  # keyword-only, as in the schema


# ---- rotary embeddings --------------------------------------------------------------------------------------


def _rope_ref(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, mode: str) -> np.ndarray:
    cos, sin = np.broadcast_to(cos, x.shape), np.broadcast_to(sin, x.shape)
    out = np.empty_like(x)
    d = x.shape[-1]
    for idx in np.ndindex(*x.shape[:-1]):
        v = x[idx]
        turned = np.empty(d)
        for i in range(d):
            if mode == "half":
                turned[i] = -v[i + d // 2] if i < d // 2 else v[i - d // 2]
            else:  # interleave: pairs (2j, 2j+1) -> (-x[2j+1], x[2j])
                turned[i] = -v[i + 1] if i % 2 == 0 else v[i - 1]
        out[idx] = v * cos[idx] + turned * sin[idx]
    return out


@pytest.mark.parametrize("mode", ["half", "interleave"])
def test_rotary_mul_modes(mode: str) -> None:
    x = _randn(2, 3, 4, 8, seed=13)
    r1, r2 = _randn(1, 1, 4, 8, seed=14), _randn(1, 1, 4, 8, seed=15)
    out = ops.npu_rotary_mul(x, r1, r2, mode)
    assert out.shape == x.shape and out.dtype == x.dtype
    _close(out, _rope_ref(_np(x), _np(r1), _np(r2), mode), 1e-5)


def test_rotary_mul_matches_the_decomposition_and_takes_a_rotate_matrix() -> None:
    x = _randn(1, 2, 3, 8, seed=16, dtype=torch.float16)
    cos, sin = _randn(1, 2, 1, 8, seed=17, dtype=torch.float16), _randn(1, 2, 1, 8, seed=18, dtype=torch.float16)
    out = ops.npu_rotary_mul(x, cos, sin)
    assert out.dtype == torch.float16
    _close(out, _rope_ref(_np(x), _np(cos), _np(sin), "half"), 5e-3)
    n = 8  # the doc's example 2: an interleave rotation matrix
    rotate = torch.zeros(n, n)
    for i in range(0, n, 2):
        rotate[i, i + 1] = 1
        rotate[i + 1, i] = 1
    out = ops.npu_rotary_mul(x.float(), cos.float(), sin.float(), "interleave", rotate)
    xv = _np(x)
    _close(out, xv * _np(cos) + np.einsum("bnsd,de->bnse", xv, _np(rotate)) * _np(sin), 1e-5)
    with pytest.raises(NotImplementedError, match="rotary_mode='quarter'"):
        ops.npu_rotary_mul(x, cos, sin, "quarter")
    with pytest.raises(ValueError, match="4-D"):
        ops.npu_rotary_mul(x[0], cos[0], sin[0])


@pytest.mark.parametrize("layout,qshape,kshape,cshape", [("BSND", (2, 3, 4, 8), (2, 3, 2, 8), (2, 3, 1, 8)),
                                                         ("TND", (5, 2, 8), (5, 1, 8), (5, 1, 8)),
                                                         ("BNSD", (2, 4, 3, 8), (2, 2, 3, 8), (2, 1, 3, 8))])
def test_apply_rotary_pos_emb_updates_query_and_key_in_place(layout: str, qshape: tuple, kshape: tuple,
                                                             cshape: tuple) -> None:
    q = _randn(*qshape, seed=19, dtype=torch.float16)
    k = _randn(*kshape, seed=20, dtype=torch.float16)  # key may have fewer heads (GQA)
    cos, sin = _randn(*cshape, seed=21, dtype=torch.float16), _randn(*cshape, seed=22, dtype=torch.float16)
    q_ref = _rope_ref(_np(q), _np(cos), _np(sin), "half")
    k_ref = _rope_ref(_np(k), _np(cos), _np(sin), "half")
    q_out, k_out = ops.npu_apply_rotary_pos_emb(q, k, cos, sin, layout=layout)
    assert q_out is q and k_out is k  # the doc: query and key are updated in place
    assert q.dtype == k.dtype == torch.float16 and q.shape == qshape and k.shape == kshape
    _close(q, q_ref, 5e-3)
    _close(k, k_ref, 5e-3)


def test_apply_rotary_pos_emb_argument_errors() -> None:
    q, c = _randn(1, 2, 2, 8), _randn(1, 2, 1, 8)
    with pytest.raises(NotImplementedError, match="rotary_mode='quarter'"):
        ops.npu_apply_rotary_pos_emb(q, q.clone(), c, c, rotary_mode="quarter")
    with pytest.raises(NotImplementedError, match="layout='BHSD'"):
        ops.npu_apply_rotary_pos_emb(q, q.clone(), c, c, "BHSD")
    with pytest.raises(NotImplementedError, match=r"cos.shape\[-1\]=4"):
        ops.npu_apply_rotary_pos_emb(q, q.clone(), c[..., :4], c[..., :4])
    with pytest.raises(ValueError, match="3-D for layout TND"):
        ops.npu_apply_rotary_pos_emb(q, q.clone(), c, c, "TND")


def test_interleave_rope_deinterleaves_then_rotates_half() -> None:
    x = _randn(1, 2, 3, 8, seed=23)
    cos, sin = _randn(1, 1, 3, 8, seed=24), _randn(1, 1, 3, 8, seed=25)
    xv = _np(x)
    de = np.concatenate([xv[..., 0::2], xv[..., 1::2]], axis=-1)  # (x0 y0 x1 y1 ...) -> (x0 x1 ... y0 y1 ...)
    out = ops.npu_interleave_rope(x, cos, sin)
    assert out.shape == x.shape and out.dtype == x.dtype
    _close(out, _rope_ref(de, _np(cos), _np(sin), "half"), 1e-5)


# ---- quantisation -------------------------------------------------------------------------------------------


def _dyn_quant_ref(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows = x.reshape(-1, x.shape[-1])
    scale = np.array([max(abs(v) for v in r) / 127.0 for r in rows])
    y = np.array([[np.round(v / s) for v in r] for r, s in zip(rows, scale)])  # numpy rounds half to even
    return y.reshape(x.shape), scale.reshape(x.shape[:-1])


def test_dynamic_quant_per_token() -> None:
    x = _randn(2, 3, 16, seed=26, dtype=torch.float16)
    y, scale = ops.npu_dynamic_quant(x)
    assert y.dtype == torch.int8 and y.shape == x.shape
    assert scale.dtype == torch.float32 and scale.shape == (2, 3)  # meta: x's shape without its last dim
    ref_y, ref_scale = _dyn_quant_ref(_np(x))
    _close(scale, ref_scale, 1e-6)
    assert np.abs(_np(y) - ref_y).max() <= 1  # float32 vs float64 division at a .5 boundary
    assert (y.abs().amax(dim=-1) == 127).all()
    y2, _ = ops.npu_dynamic_quant(x, dst_type=torch.int8)
    y3, _ = ops.npu_dynamic_quant(x, dst_type=1)  # the ScalarType number of int8
    assert torch.equal(y, y2) and torch.equal(y, y3)


def test_dynamic_quant_smooth_scales_and_groups() -> None:
    x = _randn(5, 8, seed=27, dtype=torch.bfloat16)
    smooth = (_randn(8, seed=28).abs() + 0.5).to(torch.bfloat16)
    y, scale = ops.npu_dynamic_quant(x, smooth_scales=smooth)
    ref_y, ref_scale = _dyn_quant_ref(_np(x) * _np(smooth))
    _close(scale, ref_scale, 1e-6)
    assert np.abs(_np(y) - ref_y).max() <= 1
    groups = (_randn(2, 8, seed=29).abs() + 0.5).to(torch.bfloat16)
    y, scale = ops.npu_dynamic_quant(x, smooth_scales=groups, group_index=torch.tensor([2, 5], dtype=torch.int32))
    xv = _np(x).copy()
    xv[:2] *= _np(groups)[0]
    xv[2:] *= _np(groups)[1]
    _close(scale, _dyn_quant_ref(xv)[1], 1e-6)
    with pytest.raises(ValueError, match="end at the row count 5"):
        ops.npu_dynamic_quant(x, smooth_scales=groups, group_index=torch.tensor([2, 4], dtype=torch.int32))
    with pytest.raises(NotImplementedError, match="dst_type=torch.quint4x2"):
        ops.npu_dynamic_quant(x, dst_type=torch.quint4x2)
    with pytest.raises(NotImplementedError, match="quant_mode='pertensor'"):
        ops.npu_dynamic_quant(x, quant_mode="pertensor")
    with pytest.raises(TypeError):
        ops.npu_dynamic_quant(x, smooth)  # keyword-only, as in the schema


def test_quant_matmul_dequantises_per_channel() -> None:
    g = _gen(30)
    x1 = torch.randint(-5, 5, (2, 4, 16), dtype=torch.int8, generator=g)
    x2 = torch.randint(-5, 5, (16, 6), dtype=torch.int8, generator=g)
    scale = torch.rand(6, generator=g) * 0.1
    bias = torch.randint(-5, 5, (6,), dtype=torch.int32, generator=g)
    acc = np.einsum("bmk,kn->bmn", x1.numpy().astype(np.int64), x2.numpy().astype(np.int64))
    out = ops.npu_quant_matmul(x1, x2, scale, bias=bias, output_dtype=torch.float16)
    assert out.dtype == torch.float16 and out.shape == (2, 4, 6)
    _close(out, (acc + bias.numpy()) * _np(scale), 2e-3)
    offset = torch.rand(6, generator=g)
    out8 = ops.npu_quant_matmul(x1, x2, scale, offset=offset)  # output_dtype None: int8
    ref8 = np.clip(np.round(acc * _np(scale) + _np(offset)), -128, 127)
    assert out8.dtype == torch.int8 and np.abs(_np(out8) - ref8).max() <= 1
    pts = torch.rand(4, generator=g)
    outb = ops.npu_quant_matmul(x1[0], x2, scale, pertoken_scale=pts, output_dtype=torch.bfloat16)
    _close(outb, acc[0] * _np(scale) * _np(pts)[:, None], 1e-2)


def test_quant_matmul_unimplemented_arguments_are_named() -> None:
    x = torch.ones(2, 8, dtype=torch.int8)
    w = torch.ones(8, 4, dtype=torch.int8)
    with pytest.raises(NotImplementedError, match="scale.dtype=torch.int64"):
        ops.npu_quant_matmul(x, w, torch.ones(4, dtype=torch.int64))
    with pytest.raises(NotImplementedError, match="output_dtype=torch.int32"):
        ops.npu_quant_matmul(x, w, torch.ones(4), output_dtype=torch.int32)
    with pytest.raises(NotImplementedError, match="x1/x2 dtype"):
        ops.npu_quant_matmul(x.int(), w.int(), torch.ones(4))
    with pytest.raises(ValueError, match="do not multiply"):
        ops.npu_quant_matmul(x, w.T.contiguous(), torch.ones(4))


def test_moe_gating_top_k_softmax() -> None:
    x = _randn(3, 8, seed=31, dtype=torch.float16)
    y, expert, row = ops.npu_moe_gating_top_k_softmax(x, None, k=2)
    assert (y.dtype, expert.dtype, row.dtype) == (torch.float16, torch.int32, torch.int32)
    assert y.shape == expert.shape == row.shape == (3, 2)
    xv = _np(x)
    for r in range(3):
        p = np.exp(xv[r] - xv[r].max())
        p /= p.sum()
        order = sorted(range(8), key=lambda e, p=p: (-p[e], e))[:2]
        assert expert[r].tolist() == order
        _close(y[r], p[order], 2e-3)
        assert row[r].tolist() == [r, 3 + r]  # k-major: slot j of row r is j * rows + r
    y3, e3, r3 = ops.npu_moe_gating_top_k_softmax(x.reshape(1, 3, 8).float(), torch.zeros(1, 3, dtype=torch.bool), 2)
    assert y3.shape == (1, 3, 2) and torch.equal(e3[0], expert) and torch.equal(r3[0], row)
    with pytest.raises(NotImplementedError, match="finished"):
        ops.npu_moe_gating_top_k_softmax(x, torch.tensor([True, False, False]), k=2)
    with pytest.raises(ValueError, match="0 < k <= 8"):
        ops.npu_moe_gating_top_k_softmax(x, k=9)


def test_moe_finalize_routing_formula() -> None:
    rows, k, h, experts = 3, 2, 4, 5
    permuted = _randn(rows * k, h, seed=44)
    skip1, skip2 = _randn(rows, h, seed=45), _randn(rows, h, seed=46)
    bias, scales = _randn(experts, h, seed=47), _randn(rows, k, seed=48)
    src_to_dst = torch.tensor([4, 0, 2, 5, 1, 3], dtype=torch.int32)
    expert = torch.tensor([[1, 4], [0, 2], [3, 3]], dtype=torch.int32)
    out = ops.npu_moe_finalize_routing(permuted, skip1, skip2, bias, scales, src_to_dst, expert)
    ref = np.zeros((rows, h))
    for i in range(rows):
        for j in range(h):
            ref[i, j] = _np(skip1)[i, j] + _np(skip2)[i, j] + sum(
                _np(scales)[i, kk] * (_np(permuted)[int(src_to_dst[i + kk * rows]), j] + _np(bias)[expert[i, kk], j])
                for kk in range(k))
    assert out.shape == (rows, h) and out.dtype == torch.float32
    _close(out, ref, 1e-5)
    bare = ops.npu_moe_finalize_routing(permuted.half(), None, None, None, None, src_to_dst, None, 0, k)
    ref = np.array([[sum(_np(permuted)[int(src_to_dst[i + kk * rows]), j] for kk in range(k)) for j in range(h)]
                    for i in range(rows)])
    assert bare.dtype == torch.float16
    _close(bare, ref, 3e-3)
    with pytest.raises(NotImplementedError, match="drop_pad_mode=1"):
        ops.npu_moe_finalize_routing(permuted, None, None, None, scales, src_to_dst, None, 1)


def test_scatter_nd_update_out_of_place_and_in_place() -> None:
    data = _randn(4, 5, 6, seed=32)
    indices = torch.tensor([[0, 1], [3, 4], [2, 0]], dtype=torch.int32)
    updates = _randn(3, 6, seed=33)  # the doc's shape rule: indices (3, 2) on (4, 5, 6) -> updates (3, 6)
    before = data.clone()
    out = ops.npu_scatter_nd_update(data, indices, updates)
    ref = _np(before)
    for i, (a, b) in enumerate(indices.tolist()):
        ref[a, b, :] = _np(updates)[i]
    assert torch.equal(data, before) and out.dtype == data.dtype
    _close(out, ref, 0)
    same = ops.npu_scatter_nd_update_(data, indices, updates)
    assert same is data
    _close(data, ref, 0)
    with pytest.raises(ValueError, match=r"updates must have shape \(3, 6\)"):
        ops.npu_scatter_nd_update(data, indices, _randn(3, 5))
    with pytest.raises(ValueError, match="out of range"):
        ops.npu_scatter_nd_update(data, torch.tensor([[4, 0]]), _randn(1, 6))


def test_scatter_pa_kv_cache_nd_and_nz() -> None:
    t, n, d, bs, blocks = 3, 2, 16, 4, 3
    key, value = _randn(t, n, d, seed=42, dtype=torch.float16), _randn(t, n, d, seed=43, dtype=torch.float16)
    slots = torch.tensor([5, 0, 11], dtype=torch.int32)
    kc, vc = torch.zeros(blocks, bs, n, d, dtype=torch.float16), torch.zeros(blocks, bs, n, d, dtype=torch.float16)
    assert ops.npu_scatter_pa_kv_cache(key, value, kc, vc, slots, cache_mode="Norm") is None
    ref = np.zeros((blocks, bs, n, d))
    for i, s in enumerate(slots.tolist()):
        ref[s // bs, s % bs] = _np(key)[i]
    _close(kc, ref, 0)
    last = 16  # NZ: (blocks, N*D // 16, block_size, 16)
    kz, vz = torch.zeros(blocks, n * d // last, bs, last, dtype=torch.float16), torch.zeros(
        blocks, n * d // last, bs, last, dtype=torch.float16)
    ops.npu_scatter_pa_kv_cache(key, value, kz, vz, slots)
    ref = np.zeros((blocks, n * d // last, bs, last))
    for i, s in enumerate(slots.tolist()):
        for h, x in enumerate(_np(value)[i].reshape(-1)):
            ref[s // bs, h // last, s % bs, h % last] = x
    _close(vz, ref, 0)
    with pytest.raises(NotImplementedError, match="seq_lens"):
        ops.npu_scatter_pa_kv_cache(key, value, kc, vc, slots, seq_lens=torch.ones(1), cache_mode="Norm")
    with pytest.raises(ValueError, match=r"\[0, 11\]"):
        ops.npu_scatter_pa_kv_cache(key, value, kc, vc, torch.tensor([0, 1, 12]), cache_mode="Norm")


# ---- grouped matmul -----------------------------------------------------------------------------------------


def test_grouped_matmul_multi_multi_multi() -> None:
    xs = [_randn(3, 4, seed=34, dtype=torch.float16), _randn(2, 6, seed=35, dtype=torch.float16)]
    ws = [_randn(4, 5, seed=36, dtype=torch.float16), _randn(6, 7, seed=37, dtype=torch.float16)]
    bs = [_randn(5, seed=38, dtype=torch.float16), _randn(7, seed=39, dtype=torch.float16)]
    out = ops.npu_grouped_matmul(xs, ws, bias=bs)
    assert [t.shape for t in out] == [(3, 5), (2, 7)] and all(t.dtype == torch.float16 for t in out)
    for o, x, w, b in zip(out, xs, ws, bs):
        _close(o, np.einsum("mk,kn->mn", _np(x), _np(w)) + _np(b), 5e-3)


@pytest.mark.parametrize("group_list_type,group_list", [(0, [2, 2, 5]), (1, [2, 0, 3])])
def test_grouped_matmul_single_x_split_along_m(group_list_type: int, group_list: list[int]) -> None:
    x = _randn(5, 4, seed=40)
    w = _randn(3, 4, 6, seed=41)
    out = ops.npu_grouped_matmul([x], [w], group_list=torch.tensor(group_list), split_item=2, group_type=0,
                                 group_list_type=group_list_type)
    assert len(out) == 1 and out[0].shape == (5, 6) and out[0].dtype == torch.float32
    ref = np.empty((5, 6))
    starts = {0: [0, 2, 2], 1: [0, 2, 2]}[group_list_type]
    ends = [2, 2, 5]
    for g, (a, b) in enumerate(zip(starts, ends)):
        for m in range(a, b):
            ref[m] = _np(x)[m] @ _np(w)[g]
    _close(out[0], ref, 1e-5)
    per_group = ops.npu_grouped_matmul([x], list(w.unbind(0)), group_list=[2, 2, 5], split_item=0)
    assert [t.shape[0] for t in per_group] == [2, 0, 3]


def test_grouped_matmul_unimplemented_and_invalid() -> None:
    x, w = _randn(4, 4), _randn(4, 4)
    with pytest.raises(NotImplementedError, match="scale"):
        ops.npu_grouped_matmul([x], [w], scale=[torch.ones(4)])
    with pytest.raises(NotImplementedError, match="act_type=5"):
        ops.npu_grouped_matmul([x], [w], act_type=5)
    with pytest.raises(NotImplementedError, match="x/weight dtype"):
        ops.npu_grouped_matmul([x.to(torch.int8)], [w.to(torch.int8)])
    with pytest.raises(ValueError, match="cover x's 4 rows"):
        ops.npu_grouped_matmul([x], [w, w], group_list=torch.tensor([1, 3]), group_type=0, split_item=2)


# ---- attention ----------------------------------------------------------------------------------------------


def _attn_ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, allowed, q_lens=None,
              kv_lens=None) -> tuple[np.ndarray, np.ndarray]:
    """q (B, N, Sq, D), k/v (B, KV_N, Skv, D): per row, softmax over the allowed keys (float64 loops)."""
    b_, n_, sq, _ = q.shape
    group = n_ // k.shape[1]
    out = np.zeros((b_, n_, sq, v.shape[-1]))
    lse = np.zeros((b_, n_, sq, 1))
    for b in range(b_):
        for h in range(n_):
            for i in range(q_lens[b] if q_lens else sq):
                keys = [j for j in range(kv_lens[b] if kv_lens else k.shape[2]) if allowed(b, i, j)]
                scores = [scale * float(np.dot(q[b, h, i], k[b, h // group, j])) for j in keys]
                top = max(scores)
                weights = [math.exp(x - top) for x in scores]
                total = sum(weights)
                out[b, h, i] = sum(w * v[b, h // group, j] for w, j in zip(weights, keys)) / total
                lse[b, h, i, 0] = math.log(total) + top
    return out, lse


def _qkv(b: int, n: int, kvn: int, sq: int, skv: int, d: int, seed: int) -> tuple[torch.Tensor, ...]:
    """BNSD float16 query, key, value."""
    return (_randn(b, n, sq, d, seed=seed, dtype=torch.float16), _randn(b, kvn, skv, d, seed=seed + 1,
            dtype=torch.float16), _randn(b, kvn, skv, d, seed=seed + 2, dtype=torch.float16))


def test_fused_infer_attention_bsh_gqa_with_lse() -> None:
    q, k, v = _qkv(2, 4, 2, 3, 5, 8, seed=50)
    bsh = [t.permute(0, 2, 1, 3).flatten(2) for t in (q, k, v)]  # (B, S, N*D)
    out, lse = ops.npu_fused_infer_attention_score(*bsh, num_heads=4, num_key_value_heads=2, scale=0.35,
                                                   input_layout="BSH", softmax_lse_flag=True)
    ref, ref_lse = _attn_ref(_np(q), _np(k), _np(v), 0.35, lambda b, i, j: True)
    assert out.shape == (2, 3, 32) and out.dtype == torch.float16
    assert lse.shape == (2, 4, 3, 1) and lse.dtype == torch.float32
    _close(out.unflatten(2, (4, 8)).permute(0, 2, 1, 3), ref, 3e-3)
    _close(lse, ref_lse, 1e-4)
    _, no_lse = ops.npu_fused_infer_attention_score(*bsh, num_heads=4, num_key_value_heads=2, input_layout="BSH")
    assert no_lse.shape == (0,) and no_lse.dtype == torch.float32  # the meta registration without the flag


def test_fused_infer_attention_masks_and_sparse_modes() -> None:
    q, k, v = _qkv(2, 2, 2, 4, 4, 8, seed=53)
    causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)  # True = not computed
    out, _ = ops.npu_fused_infer_attention_score(q, k, v, atten_mask=causal, num_heads=2, scale=0.5,
                                                 input_layout="BNSD")
    ref, _ = _attn_ref(_np(q), _np(k), _np(v), 0.5, lambda b, i, j: j <= i)
    _close(out, ref, 3e-3)
    # sparse_mode 3 (rightDownCausal) with fewer queries than keys, the compressed 2048 mask, kv lengths
    q2, k2, v2 = _qkv(2, 2, 1, 3, 7, 8, seed=56)
    band = torch.triu(torch.ones(2048, 2048, dtype=torch.int8), diagonal=1)
    out, _ = ops.npu_fused_infer_attention_score(q2, k2, v2, atten_mask=band, actual_seq_lengths_kv=[7, 5],
                                                 num_heads=2, num_key_value_heads=1, scale=0.3,
                                                 input_layout="BNSD", sparse_mode=3)
    kv_lens = [7, 5]
    ref, _ = _attn_ref(_np(q2), _np(k2), _np(v2), 0.3, lambda b, i, j: j <= i + kv_lens[b] - 3, kv_lens=kv_lens)
    _close(out, ref, 3e-3)
    out, _ = ops.npu_fused_infer_attention_score(q2, k2, v2, atten_mask=band, num_heads=2, num_key_value_heads=1,
                                                 scale=0.3, input_layout="BNSD", sparse_mode=2)
    _close(out, _attn_ref(_np(q2), _np(k2), _np(v2), 0.3, lambda b, i, j: j <= i)[0], 3e-3)


def test_fused_infer_attention_output_layouts_and_query_lengths() -> None:
    q, k, v = _qkv(1, 2, 2, 3, 4, 8, seed=59)
    out, _ = ops.npu_fused_infer_attention_score(q, k, v, num_heads=2, input_layout="BNSD_BSND",
                                                 actual_seq_lengths=[2])
    ref, _ = _attn_ref(_np(q), _np(k), _np(v), 1.0, lambda b, i, j: True, q_lens=[2])
    assert out.shape == (1, 3, 2, 8)  # BNSD in, BSND out
    _close(out.permute(0, 2, 1, 3), ref, 3e-3)  # rows past the query length are 0
    bsnd = [t.permute(0, 2, 1, 3) for t in (q, k, v)]
    out, _ = ops.npu_fused_infer_attention_score(*bsnd, num_heads=2, input_layout="BSND")
    _close(out.permute(0, 2, 1, 3), _attn_ref(_np(q), _np(k), _np(v), 1.0, lambda b, i, j: True)[0], 3e-3)


def test_incre_flash_attention_over_a_paged_cache() -> None:
    b, n, kvn, d, bs = 2, 4, 2, 8, 4
    lens = [5, 9]
    q, k, v = _qkv(b, n, kvn, 1, 12, d, seed=62)
    # scatter each sequence's keys/values into blocks of a shared (blocks, block_size, H) cache, shuffled
    table = torch.tensor([[4, 1, 0], [2, 5, 3]], dtype=torch.int32)
    kc = torch.zeros(6, bs, kvn * d, dtype=torch.float16)
    vc = torch.zeros_like(kc)
    for bi in range(b):
        for j in range(12):
            kc[table[bi, j // bs], j % bs] = k[bi, :, j].flatten()
            vc[table[bi, j // bs], j % bs] = v[bi, :, j].flatten()
    q_bsh = q.permute(0, 2, 1, 3).flatten(2)
    out = ops.npu_incre_flash_attention(q_bsh, kc, vc, actual_seq_lengths=lens, block_table=table, block_size=bs,
                                        num_heads=n, num_key_value_heads=kvn, scale_value=1 / math.sqrt(d),
                                        input_layout="BSH")
    ref, _ = _attn_ref(_np(q), _np(k), _np(v), 1 / math.sqrt(d), lambda bi, i, j: True, kv_lens=lens)
    assert out.shape == q_bsh.shape and out.dtype == torch.float16
    _close(out.unflatten(2, (n, d)).permute(0, 2, 1, 3), ref, 3e-3)
    fia, _ = ops.npu_fused_infer_attention_score(q_bsh, kc, vc, actual_seq_lengths_kv=lens, block_table=table,
                                                 block_size=bs, num_heads=n, num_key_value_heads=kvn,
                                                 scale=1 / math.sqrt(d), input_layout="BSH")
    assert torch.equal(fia, out)
    with pytest.raises(ValueError, match="S must be 1"):
        ops.npu_incre_flash_attention(_randn(1, 2, 8, dtype=torch.float16), kc, vc, num_heads=1)


def test_prompt_flash_attention_next_tokens_default_is_causal_with_a_mask() -> None:
    q, k, v = _qkv(1, 2, 2, 4, 4, 8, seed=65)
    mask = torch.zeros(4, 4, dtype=torch.bool)  # nothing masked: the band (next_tokens=0) alone makes it causal
    out = ops.npu_prompt_flash_attention(q, k, v, atten_mask=mask, num_heads=2, scale_value=0.4, input_layout="BNSD")
    _close(out, _attn_ref(_np(q), _np(k), _np(v), 0.4, lambda b, i, j: j <= i)[0], 3e-3)
    full = ops.npu_prompt_flash_attention(q, k, v, num_heads=2, scale_value=0.4, input_layout="BNSD")
    _close(full, _attn_ref(_np(q), _np(k), _np(v), 0.4, lambda b, i, j: True)[0], 3e-3)  # no mask: no band


def test_attention_unimplemented_arguments_are_named() -> None:
    q, k, v = _qkv(1, 2, 2, 2, 2, 8, seed=68)
    with pytest.raises(NotImplementedError, match="quant_scale2"):
        ops.npu_fused_infer_attention_score(q, k, v, num_heads=2, input_layout="BNSD", quant_scale2=torch.ones(1))
    with pytest.raises(NotImplementedError, match="input_layout='TND'"):
        ops.npu_fused_infer_attention_score(q[0], k[0], v[0], num_heads=2, input_layout="TND")
    with pytest.raises(NotImplementedError, match="sparse_mode=4"):
        ops.npu_fused_infer_attention_score(q, k, v, num_heads=2, input_layout="BNSD", sparse_mode=4,
                                            atten_mask=torch.zeros(2048, 2048, dtype=torch.bool))
    with pytest.raises(NotImplementedError, match="query.dtype=torch.int8"):
        ops.npu_fused_infer_attention_score(q.to(torch.int8), k.to(torch.int8), v.to(torch.int8), num_heads=2,
                                            input_layout="BNSD")
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        ops.npu_fused_infer_attention_score(q.float(), k.float(), v.float(), num_heads=2, input_layout="BNSD")
    with pytest.raises(ValueError, match="query has 2 heads, the head count argument says 3"):
        ops.npu_fused_infer_attention_score(q, k, v, num_heads=3, input_layout="BNSD")


# ---- layout, casts and sorting ------------------------------------------------------------------------------


def test_dtype_cast_converts_like_the_doc_example() -> None:
    y = ops.npu_dtype_cast(torch.tensor([0, 0.5, -1.0]), dtype=torch.int)
    assert y.dtype == torch.int32 and y.tolist() == [0, 0, -1]  # the doc's example: truncation toward zero
    x = _randn(3, 4, seed=60)
    for dtype in (5, torch.float16):  # the ScalarType number or the torch dtype
        h = ops.npu_dtype_cast(x, dtype)
        assert h.dtype == torch.float16 and h.shape == x.shape
        _close(h, _np(x).astype(np.float16).astype(np.float64), 0)
    assert ops.npu_dtype_cast(x, torch.bfloat16, input_dtype=torch.float32).dtype == torch.bfloat16
    for dtype in (285, 290, torch.float8_e4m3fn):
        with pytest.raises(NotImplementedError, match="npu_dtype_cast: dtype="):
            ops.npu_dtype_cast(x, dtype)
    with pytest.raises(NotImplementedError, match="npu_dtype_cast: input_dtype="):
        ops.npu_dtype_cast(x.to(torch.uint8), torch.float16, input_dtype=296)


def test_transpose_and_confusion_transpose_follow_the_doc_examples() -> None:
    x = _randn(2, 3, 5, seed=61)
    y = ops.npu_transpose(x, (2, 0, 1))
    assert y.shape == (5, 2, 3) and y.is_contiguous()
    np.testing.assert_array_equal(_np(y), np.transpose(_np(x), (2, 0, 1)))
    assert torch.equal(ops.npu_transpose(x, (-1, 0, 1), require_contiguous=False), y)
    with pytest.raises(ValueError, match="not a permutation"):
        ops.npu_transpose(x, (0, 0, 1))

    x = _randn(2, 3, 4, 6, seed=62)
    y1 = ops.npu_confusion_transpose(x, (0, 2, 1, 3), (2, 4, 18), True)
    assert y1.shape == (2, 4, 18) and y1.is_contiguous()
    np.testing.assert_array_equal(_np(y1), np.transpose(_np(x), (0, 2, 1, 3)).reshape(2, 4, 18))
    y2 = ops.npu_confusion_transpose(x, (0, 2, 1), (2, 12, 6), False)
    assert y2.shape == (2, 6, 12)
    np.testing.assert_array_equal(_np(y2), np.transpose(_np(x).reshape(2, 12, 6), (0, 2, 1)))
    with pytest.raises(ValueError, match="does not hold"):
        ops.npu_confusion_transpose(x, (0, 2, 1), (2, 12, 5), False)
    with pytest.raises(ValueError, match="not a permutation"):
        ops.npu_confusion_transpose(x, (0, 2, 1), (2, 4, 18), True)


def test_broadcast_expands_and_is_contiguous() -> None:
    x = torch.tensor([[1], [2], [3]])
    y = ops.npu_broadcast(x, [3, 4])
    assert y.tolist() == [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]] and y.is_contiguous()  # the doc's example
    z = ops.npu_broadcast(x, [2, 3, 4])  # new dims go in front
    assert z.shape == (2, 3, 4) and z.dtype == x.dtype and torch.equal(z[1], y)
    with pytest.raises(ValueError, match=r"cannot broadcast \(3, 1\) to \(2, 4\)"):
        ops.npu_broadcast(x, [2, 4])


def test_sort_v2_sorts_the_last_dim_without_indices() -> None:
    x = _randn(3, 7, seed=63, dtype=torch.float16)
    np.testing.assert_array_equal(_np(ops.npu_sort_v2(x)), np.sort(_np(x), axis=-1))
    down = ops.npu_sort_v2(x, dim=1, descending=True)
    assert down.dtype == torch.float16
    np.testing.assert_array_equal(_np(down), np.sort(_np(x), axis=-1)[:, ::-1])
    with pytest.raises(ValueError, match="only the last dim"):
        ops.npu_sort_v2(x, dim=0)


# ---- more normalisation and activations ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float16, 2e-3)])
def test_layer_norm_eval_formula(dtype: torch.dtype, tol: float) -> None:
    x, w, b = _randn(4, 3, 8, seed=64, dtype=dtype), _randn(3, 8, seed=65, dtype=dtype), _randn(3, 8, seed=66, dtype=dtype)
    y = ops.npu_layer_norm_eval(x, [3, 8], w, b, 1e-5)
    assert y.dtype == dtype and y.shape == x.shape
    rows = _np(x).reshape(4, -1)
    mean = rows.mean(axis=1, keepdims=True)
    var = ((rows - mean) ** 2).mean(axis=1, keepdims=True)
    ref = ((rows - mean) / np.sqrt(var + 1e-5)).reshape(x.shape) * _np(w) + _np(b)
    _close(y, ref, tol)
    _close(ops.npu_layer_norm_eval(x, (8,)), ((_np(x) - _np(x).mean(-1, keepdims=True))
                                              / np.sqrt(_np(x).var(-1, keepdims=True) + 1e-5)), tol)
    with pytest.raises(ValueError, match="trailing dims"):
        ops.npu_layer_norm_eval(x, [4, 8])
    with pytest.raises(ValueError, match="weight must have shape"):
        ops.npu_layer_norm_eval(x, [8], w)


def _gelu_ref(v: np.ndarray, approximate: int) -> np.ndarray:
    if approximate == 0:
        return 0.5 * v * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))
    return 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))


@pytest.mark.parametrize("approximate", [0, 1])
def test_geglu_activates_the_right_half_by_default(approximate: int) -> None:
    x = _randn(3, 4, 6, seed=67, dtype=torch.float16)
    y, gelu = ops.npu_geglu(x, dim=1, approximate=approximate)
    assert y.shape == gelu.shape == (3, 2, 6) and y.dtype == gelu.dtype == torch.float16
    left, right = _np(x)[:, :2], _np(x)[:, 2:]
    _close(gelu, _gelu_ref(right, approximate), 2e-3)
    _close(y, _gelu_ref(right, approximate) * left, 4e-3)
    y_l, gelu_l = ops.npu_geglu(x, dim=1, approximate=approximate, activate_left=True)
    _close(gelu_l, _gelu_ref(left, approximate), 2e-3)
    _close(y_l, _gelu_ref(left, approximate) * right, 4e-3)


def test_geglu_argument_errors() -> None:
    x = _randn(2, 6, seed=68)
    assert ops.npu_geglu(x)[0].shape == (2, 3)  # dim=-1 and approximate=1 (tanh) by default
    assert ops.npu_geglu(x, dim=0, approximate=0)[0].shape == (1, 6)
    with pytest.raises(ValueError, match="must be even"):
        ops.npu_geglu(_randn(3, 6, seed=69), dim=0)
    with pytest.raises(ValueError, match="approximate must be 0"):
        ops.npu_geglu(x, approximate=2)
    with pytest.raises(ValueError, match="out of range"):
        ops.npu_geglu(x, dim=2)


@pytest.mark.parametrize("xshape,gshape", [((4, 16), (16,)), ((2, 3, 4, 8), (4, 8))])
def test_rms_norm_backward_is_the_gradient_of_rms_norm(xshape: tuple, gshape: tuple) -> None:
    x, g, dy = _randn(*xshape, seed=70), _randn(*gshape, seed=71), _randn(*xshape, seed=72)
    _, rstd = ops.npu_rms_norm(x, g, 1e-6)
    dx, dgamma = ops.npu_rms_norm_backward(dy, x, g, rstd)
    assert dx.shape == x.shape and dx.dtype == x.dtype
    assert dgamma.shape == g.shape and dgamma.dtype == torch.float32  # the meta registration
    xd, gd = x.double().requires_grad_(), g.double().requires_grad_()
    dims = tuple(range(len(xshape) - len(gshape), len(xshape)))
    (xd * torch.rsqrt(xd.pow(2).mean(dim=dims, keepdim=True) + 1e-6) * gd).backward(dy.double())
    _close(dx, xd.grad.numpy(), 1e-4)
    _close(dgamma, gd.grad.numpy(), 1e-4)
    h = x.half()
    assert ops.npu_rms_norm_backward(dy.half(), h, g.half(), ops.npu_rms_norm(h, g.half())[1])[0].dtype == torch.float16
    with pytest.raises(ValueError, match="rstd"):
        ops.npu_rms_norm_backward(dy, x, g, rstd[:1])


# ---- quantisation -------------------------------------------------------------------------------------------


def test_anti_quant_formula_and_dtypes() -> None:
    out = ops.npu_anti_quant(torch.tensor([1, 2, 3, 4], dtype=torch.int8), torch.tensor([2.0]),
                             offset=torch.tensor([2.0]), dst_dtype=torch.float16)  # the doc's example
    assert out.dtype == torch.float16 and out.tolist() == [6.0, 8.0, 10.0, 12.0]
    x = torch.randint(-128, 128, (3, 5), generator=_gen(73), dtype=torch.int8)
    scale, offset = _randn(5, seed=74), _randn(5, seed=75)
    y = ops.npu_anti_quant(x, scale, offset=offset, dst_dtype=15)
    assert y.dtype == torch.bfloat16 and y.shape == x.shape
    _close(y, (_np(x) + _np(offset)) * _np(scale), 2e-2)
    assert ops.npu_anti_quant(x, scale).dtype == torch.float16  # dst_dtype default
    with pytest.raises(NotImplementedError, match="npu_anti_quant: x.dtype"):
        ops.npu_anti_quant(x.to(torch.int32), scale)
    with pytest.raises(NotImplementedError, match="src_dtype"):
        ops.npu_anti_quant(x, scale, src_dtype=torch.quint4x2)
    with pytest.raises(ValueError, match="dst_dtype must be float16 or bfloat16"):
        ops.npu_anti_quant(x, scale, dst_dtype=torch.float32)
    with pytest.raises(ValueError, match="scale must be 1-D"):
        ops.npu_anti_quant(x, _randn(4, seed=76))
    with pytest.raises(ValueError, match="offset must have scale's shape"):
        ops.npu_anti_quant(x, scale, offset=offset[:1])


def test_quantize_div_mode_per_channel_with_zero_points() -> None:
    x = _randn(2, 3, 4, seed=77) * 50
    scales = torch.tensor([0.5, 1.0, 0.25])
    zp = torch.tensor([1, -3, 0], dtype=torch.int8)
    y = ops.npu_quantize(x, scales, zp, torch.qint8)  # axis=1, div_mode=True
    assert y.dtype == torch.int8 and y.shape == x.shape
    ref = np.clip(np.rint(_np(x) / _np(scales)[None, :, None] + _np(zp)[None, :, None]), -128, 127)
    np.testing.assert_array_equal(_np(y), ref)
    u = ops.npu_quantize(x, scales, None, torch.quint8)
    assert u.dtype == torch.uint8
    np.testing.assert_array_equal(_np(u), np.clip(np.rint(_np(x) / _np(scales)[None, :, None]), 0, 255))
    assert ops.npu_quantize(x, scales, None, 3).dtype == torch.int32
    assert ops.npu_quantize(torch.tensor([2.5, 3.5, -2.5]), torch.tensor([1.0]), None, torch.qint8,
                            axis=0).tolist() == [2, 4, -2]  # half to even


def test_quantize_mul_mode_axes() -> None:
    x = _randn(2, 3, 12, seed=78)
    scale = torch.full((12,), 3.0)
    y = ops.npu_quantize(x, scale, None, torch.qint8, -1, False)  # the doc's example call
    np.testing.assert_array_equal(_np(y), np.clip(np.rint(_np(x) * 3.0), -128, 127))
    s2, z2 = _randn(3, seed=79).abs() * 40, _randn(3, seed=80)
    y2 = ops.npu_quantize(x, s2, z2, torch.qint8, -2, False)  # the second-to-last dim
    np.testing.assert_array_equal(_np(y2), np.clip(np.rint(_np(x) * _np(s2)[:, None] + _np(z2)[:, None]), -128, 127))
    y3 = ops.npu_quantize(x, scale.reshape(1, 1, 12), None, torch.qint8, 1, False)  # axis > -2: the last dim
    assert torch.equal(y3, y)


def test_quantize_unimplemented_and_invalid() -> None:
    x = _randn(4, 8, seed=81)
    with pytest.raises(NotImplementedError, match="npu_quantize: dtype="):
        ops.npu_quantize(x, torch.ones(8), None, torch.quint4x2, -1, False)
    with pytest.raises(NotImplementedError, match="zero_points"):
        ops.npu_quantize(x, torch.ones(8), torch.full((8,), 0.5), torch.qint8)
    with pytest.raises(ValueError, match="div_mode=False dtype must be"):
        ops.npu_quantize(x, torch.ones(8), None, torch.quint8, -1, False)
    with pytest.raises(ValueError, match="scales"):
        ops.npu_quantize(x, torch.ones(3), None, torch.qint8)
    with pytest.raises(ValueError, match="axis must lie"):
        ops.npu_quantize(x, torch.ones(8), None, torch.qint8, -3, False)


def _wqbmm_ref(x: torch.Tensor, w: torch.Tensor, scale: np.ndarray, offset: np.ndarray) -> np.ndarray:
    return _np(x) @ ((_np(w) + offset) * scale)


def test_weight_quant_batchmatmul_per_tensor_channel_and_group() -> None:
    m, k, n = 3, 64, 5
    x = _randn(m, k, seed=82, dtype=torch.float16)
    w = torch.randint(-8, 8, (k, n), generator=_gen(83), dtype=torch.int8)
    scale, offset = _randn(1, n, seed=84, dtype=torch.float16) * 0.1, _randn(1, n, seed=85, dtype=torch.float16)
    bias = _randn(n, seed=86, dtype=torch.float16)
    y = ops.npu_weight_quant_batchmatmul(x, w, scale, offset, bias=bias)
    assert y.shape == (m, n) and y.dtype == torch.float16  # the meta registration
    _close(y, _wqbmm_ref(x, w, _np(scale), _np(offset)) + _np(bias), 2e-2)
    s1 = torch.tensor([0.05], dtype=torch.bfloat16)
    y1 = ops.npu_weight_quant_batchmatmul(x.bfloat16(), w, s1)
    assert y1.dtype == torch.bfloat16
    _close(y1, _wqbmm_ref(x.bfloat16(), w, _np(s1), np.zeros(1)), 5e-2)
    sg, og = _randn(2, n, seed=87, dtype=torch.float16) * 0.1, _randn(2, n, seed=88, dtype=torch.float16)
    yg = ops.npu_weight_quant_batchmatmul(x, w, sg, og, antiquant_group_size=32)
    _close(yg, _wqbmm_ref(x, w, np.repeat(_np(sg), 32, axis=0), np.repeat(_np(og), 32, axis=0)), 2e-2)


def test_weight_quant_batchmatmul_unimplemented_and_invalid() -> None:
    x = _randn(2, 64, seed=89, dtype=torch.float16)
    w = torch.zeros(64, 4, dtype=torch.int8)
    s = torch.ones(4, dtype=torch.float16)
    with pytest.raises(NotImplementedError, match="quant_scale"):
        ops.npu_weight_quant_batchmatmul(x, w, s, quant_scale=torch.ones(4))
    with pytest.raises(NotImplementedError, match="weight.dtype"):
        ops.npu_weight_quant_batchmatmul(x, w.to(torch.int32), s)
    with pytest.raises(NotImplementedError, match="antiquant_scale.dtype"):
        ops.npu_weight_quant_batchmatmul(x, w, s.to(torch.int64))
    with pytest.raises(ValueError, match="antiquant_group_size must be a multiple of 32"):
        ops.npu_weight_quant_batchmatmul(x, w, torch.ones(4, 4, dtype=torch.float16), antiquant_group_size=16)
    with pytest.raises(ValueError, match="must have x's dtype"):
        ops.npu_weight_quant_batchmatmul(x, w, s.float())
    with pytest.raises(ValueError, match="agree on K"):
        ops.npu_weight_quant_batchmatmul(x, w[:32], s)


# ---- MoE routing and sampling -------------------------------------------------------------------------------


def test_moe_init_routing_doc_example() -> None:
    x = torch.tensor([[0.1] * 4, [0.2] * 4, [0.3] * 4])
    row_idx = torch.tensor([[0, 3], [1, 4], [2, 5]], dtype=torch.int32)
    expert_idx = torch.tensor([[1, 2], [0, 1], [0, 2]], dtype=torch.int32)
    expanded_x, expanded_row_idx, expanded_expert_idx = ops.npu_moe_init_routing(x, row_idx, expert_idx, 3)
    assert expanded_x.shape == (6, 4) and expanded_x.dtype == torch.float32
    assert expanded_row_idx.dtype == expanded_expert_idx.dtype == torch.int32
    assert expanded_expert_idx.tolist() == [0, 0, 1, 1, 2, 2]
    # sorted_row_idx = [1, 2, 0, 4, 3, 5]; expanded_row_idx[sorted_row_idx[i]] = i
    assert expanded_row_idx.tolist() == [2, 0, 1, 4, 3, 5]
    assert expanded_x[:, 0].tolist() == pytest.approx([0.2, 0.3, 0.1, 0.2, 0.1, 0.3])
    short = ops.npu_moe_init_routing(x, row_idx, expert_idx, 2)
    assert short[0].shape == (4, 4) and torch.equal(short[0], expanded_x[:4]) and torch.equal(short[1], expanded_row_idx)


def test_moe_gating_init_compute_tokens_and_finalize_compose() -> None:
    rows, experts, k, h = 5, 4, 2, 3
    x = _randn(rows, h, seed=90)
    scores, expert_idx, row_idx = ops.npu_moe_gating_top_k_softmax(_randn(rows, experts, seed=91), k=k)
    expanded_x, expanded_row_idx, expanded_expert_idx = ops.npu_moe_init_routing(x, row_idx, expert_idx, rows)
    tokens = ops.npu_moe_compute_expert_tokens(expanded_expert_idx, experts)
    assert tokens.dtype == torch.int32 and int(tokens[-1]) == rows * k
    weights = _randn(experts, h, h, seed=92)
    expert_out = torch.cat([expanded_x[a:b] @ weights[e] for e, (a, b) in
                            enumerate(zip([0, *tokens.tolist()[:-1]], tokens.tolist()))])
    out = ops.npu_moe_finalize_routing(expert_out, None, None, None, scores, expanded_row_idx, expert_idx)
    ref = sum(_np(scores)[:, j:j + 1] * np.einsum("rh,rho->ro", _np(x), _np(weights)[_np(expert_idx)[:, j].astype(int)])
              for j in range(k))
    _close(out, ref, 1e-5)


def test_moe_init_routing_and_compute_expert_tokens_errors() -> None:
    x = _randn(2, 4, seed=93)
    idx = torch.tensor([[0, 1], [1, 0]], dtype=torch.int32)
    with pytest.raises(ValueError, match="permutation"):
        ops.npu_moe_init_routing(x, torch.zeros(2, 2, dtype=torch.int32), idx, 2)
    with pytest.raises(ValueError, match="must both be"):
        ops.npu_moe_init_routing(x, idx[:1], idx, 2)
    sorted_experts = torch.tensor([0, 0, 0, 1, 1, 2], dtype=torch.int32)
    assert ops.npu_moe_compute_expert_tokens(sorted_experts, 3).tolist() == [3, 5, 6]  # the doc's example input
    assert ops.npu_moe_compute_expert_tokens(torch.tensor([1, 1, 3], dtype=torch.int32), 5).tolist() == [0, 2, 2, 3, 3]
    with pytest.raises(ValueError, match="non-decreasing"):
        ops.npu_moe_compute_expert_tokens(torch.tensor([1, 0], dtype=torch.int32), 3)
    with pytest.raises(ValueError, match="non-decreasing"):
        ops.npu_moe_compute_expert_tokens(sorted_experts, 2)
    with pytest.raises(ValueError, match="num_expert must lie"):
        ops.npu_moe_compute_expert_tokens(sorted_experts, 0)


def _top_k_top_p_ref(logits: np.ndarray, p: np.ndarray | None, k: np.ndarray | None) -> np.ndarray:
    """The doc's nine steps, row by row, with python lists and float64."""
    out = np.full_like(logits, -np.inf)
    for b, row in enumerate(logits):
        order = sorted(range(len(row)), key=lambda v: row[v])  # stable ascending
        vals = [float(row[v]) for v in order]
        if k is not None:
            kth = vals[len(vals) - int(k[b])]
            vals = [-math.inf if v < kth else v for v in vals]
        if p is not None:
            top = max(vals)
            exps = [math.exp(v - top) for v in vals]
            total, acc = sum(exps), 0.0
            for i in range(len(vals)):
                acc += exps[i] / total
                if acc <= 1 - p[b] and i != len(vals) - 1:
                    vals[i] = -math.inf
        for i, v in enumerate(order):
            out[b, v] = vals[i]
    return out


def test_top_k_top_p_follows_the_documented_steps() -> None:
    logits = _randn(4, 10, seed=94)
    logits[0, 3] = logits[0, 7] = 5.0  # a tie at the top
    k = torch.tensor([1, 3, 10, 2], dtype=torch.int32)
    p = torch.tensor([0.5, 0.9, 0.3, 1.0])
    for kk, pp in ((k, p), (k, None), (None, p)):
        out = ops.npu_top_k_top_p(logits, pp, kk)
        assert out.shape == logits.shape and out.dtype == logits.dtype
        ref = _top_k_top_p_ref(_np(logits), None if pp is None else _np(pp), None if kk is None else _np(kk))
        np.testing.assert_array_equal(np.isinf(_np(out)), np.isinf(ref))
        np.testing.assert_allclose(_np(out)[~np.isinf(ref)], ref[~np.isinf(ref)], rtol=0, atol=0)
    top1 = ops.npu_top_k_top_p(logits, None, k)
    assert int(torch.isfinite(top1[0]).sum()) == 2  # both tied maxima survive k=1
    assert ops.npu_top_k_top_p(logits.half(), p.half(), k).dtype == torch.float16
    with pytest.raises(ValueError, match="cannot both be None"):
        ops.npu_top_k_top_p(logits)
    with pytest.raises(ValueError, match="k must lie"):
        ops.npu_top_k_top_p(logits, None, torch.tensor([0, 1, 1, 1], dtype=torch.int32))
    with pytest.raises(ValueError, match="p must be"):
        ops.npu_top_k_top_p(logits, p.half(), None)


# ---- the stand-in module ------------------------------------------------------------------------------------


def test_every_operator_is_exported_under_its_vendor_name() -> None:
    assert set(ops.OPS) == {n for n in ops.__all__ if n != "OPS"}
    assert all(name == fn.__name__ and fn.__doc__ for name, fn in ops.OPS.items())


def test_unknown_names_raise_a_clear_attribute_error() -> None:
    getattr_ = stand_in._module_getattr(["npu_rms_norm", "npu_swiglu"])
    with pytest.raises(stand_in.NotProvidedError, match=r"^torch_npu.npu_foo is not provided by the emulator's "
                       r"torch_npu stand-in \(provided: npu_rms_norm, npu_swiglu\)$"):
        getattr_("npu_foo")
    assert issubclass(stand_in.NotProvidedError, AttributeError)
    with pytest.raises(AttributeError) as exc:
        getattr_("__wrapped__")
    assert type(exc.value) is AttributeError
    ns = stand_in._NpuOpsNamespace({"npu_swiglu": ops.npu_swiglu})
    x = _randn(2, 4)
    assert torch.equal(ns.npu_swiglu(x), ops.npu_swiglu(x)) and torch.equal(ns.npu_swiglu.default(x), ns.npu_swiglu(x))
    assert not hasattr(ns, "npu_bar")
    with pytest.raises(stand_in.NotProvidedError, match=r"torch.ops.npu.npu_bar is not provided .*npu_swiglu"):
        ns.npu_bar  # noqa: B018


def _run(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    (tmp_path / "s.py").write_text(textwrap.dedent(body))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "runtime.emulator", "--quiet", "s.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180, check=False)


@pytest.mark.slow
def test_a_script_calls_the_ops_and_stops_at_its_own_line_on_an_unknown_one(tmp_path: Path) -> None:
    proc = _run(tmp_path, """
        import torch, torch_npu
        x = torch.randn(2, 8, dtype=torch.float16, device="npu:0")
        y = torch_npu.npu_swiglu(x)
        q, scale = torch.ops.npu.npu_dynamic_quant(x)
        print("OK", tuple(y.shape), y.dtype, q.dtype, tuple(scale.shape), hasattr(torch_npu, "npu_nope"))
        out = torch_npu.npu_fused_infer_attention_score_v9(x, x, x)
        print("not reached")
    """)
    assert "OK (2, 4) torch.float16 torch.int8 (2,) False" in proc.stdout, proc.stderr
    assert "not reached" not in proc.stdout
    assert proc.returncode == 3, proc.stderr  # the script raised (docstring of runtime.emulator.__main__)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines == [f"ERROR {tmp_path / 's.py'}:7: NotProvidedError: torch_npu.npu_fused_infer_attention_score_v9 "
                     "is not provided by the emulator's torch_npu stand-in (provided: "
                     + ", ".join(sorted(["npu", "profiler", "version", "Format", "npu_format_cast", "npu_format_cast_",
                                         "get_npu_format", *ops.OPS, *fa_ops.OPS])) + ")"], proc.stderr
