"""CPU implementations of the fused ``torch_npu`` operators a gym test's golden reference calls.

Why this exists: gym test scripts compute their expected output with fused ``torch_npu.npu_*`` operators
(``npu_rms_norm``, ``npu_swiglu``, ``npu_rotary_mul`` ...). Under ``python -m runtime.emulator`` there is no
NPU, so the ``torch_npu`` stand-in (:mod:`runtime.emulator._torch_npu`) serves these functions instead. A golden
is only worth comparing against when it is the operator the vendor documents, so every function here follows
the torch_npu 2.14.0 sources, read for their semantics (nothing is copied):

* the argument names, positional order and defaults of ``csrc/aten/npu_native_functions*.yaml`` (the schemas
  the real Python functions are generated from);
* the result structure (tuple arity, shapes, dtypes) of ``op_plugin/meta/_meta_registrations.py``;
* the formulas of ``_op_plugin_docs.py`` and, where it has one, of ``_inductor/decomposition.py``.

The math is done in float32 (int64 for integer accumulation) and cast to the documented output dtype once, as
the device's vector units do. An argument value or mode combination the vendor documents but this module does
not implement raises ``NotImplementedError`` naming the operator and the argument: a golden computed with some
other semantics would be silently wrong. Inputs the vendor documents as invalid raise ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

__all__ = [
    "OPS", "npu_add_layer_norm", "npu_add_rms_norm", "npu_anti_quant", "npu_apply_adam_w", "npu_apply_rotary_pos_emb", "npu_bmmV2",
    "npu_broadcast", "npu_confusion_transpose", "npu_dtype_cast", "npu_dynamic_quant", "npu_fast_gelu",
    "npu_fused_infer_attention_score", "npu_geglu", "npu_gelu", "npu_gelu_mul", "npu_gemma_rms_norm",
    "npu_grouped_matmul", "npu_incre_flash_attention", "npu_interleave_rope", "npu_layer_norm_eval",
    "npu_linear", "npu_moe_compute_expert_tokens", "npu_moe_finalize_routing", "npu_moe_gating_top_k_softmax",
    "npu_moe_init_routing", "npu_prompt_flash_attention", "npu_quant_matmul", "npu_quantize", "npu_rms_norm",
    "npu_rms_norm_backward", "npu_rotary_mul", "npu_scatter_nd_update", "npu_scatter_nd_update_",
    "npu_scatter_pa_kv_cache", "npu_silu", "npu_sort_v2", "npu_swiglu", "npu_top_k_top_p", "npu_transpose",
    "npu_weight_quant_batchmatmul",
]

# torch_npu passes dtypes either as torch.dtype or as the ScalarType enum value (the meta registrations'
# TORCH_DTYPE_ENUM_VALUE_TO_SCALAR_TYPE_MAP); the values a golden can reach here
_DTYPE_ENUM: dict[int, torch.dtype] = {
    0: torch.uint8, 1: torch.int8, 2: torch.int16, 3: torch.int32, 4: torch.int64, 5: torch.float16,
    6: torch.float32, 7: torch.float64, 11: torch.bool, 15: torch.bfloat16, 16: torch.quint4x2,
    23: torch.float8_e5m2, 24: torch.float8_e4m3fn, 291: torch.float8_e5m2, 292: torch.float8_e4m3fn,
}


def _unsupported(op: str, arg: str, value: Any, supported: str) -> NotImplementedError:
    return NotImplementedError(f"torch_npu.{op}: {arg}={value!r} is not implemented by the emulator's "
                               f"torch_npu stand-in (supported: {supported})")


def _reject(op: str, **given: Any) -> None:
    """Arguments of a mode not implemented here must be left at None."""
    for name, value in given.items():
        if value is not None:
            raise _unsupported(op, name, "<given>", "None")


def _dtype_arg(op: str, arg: str, value: Any) -> torch.dtype | None:
    """A ``ScalarType?`` argument as a torch dtype (None stays None)."""
    if value is None or isinstance(value, torch.dtype):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value in _DTYPE_ENUM:
        return _DTYPE_ENUM[value]
    raise _unsupported(op, arg, value, "a torch.dtype or its ScalarType number")


def _rstd_dims(op: str, x: torch.Tensor, gamma: torch.Tensor) -> tuple[int, ...]:
    """The trailing dims normalised over: gamma's shape is x's shape from some dim on (``gamma = x[n:]``)."""
    if gamma.dim() == 0 or gamma.dim() > x.dim() or tuple(x.shape[x.dim() - gamma.dim():]) != tuple(gamma.shape):
        raise ValueError(f"torch_npu.{op}: gamma shape {tuple(gamma.shape)} must equal the trailing dims of the "
                         f"input shape {tuple(x.shape)}")
    return tuple(range(x.dim() - gamma.dim(), x.dim()))


def _rms(op: str, x32: torch.Tensor, gamma: torch.Tensor, epsilon: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(x32 * rstd, rstd) in float32, rstd kept with size-1 normalised dims (the meta registration's shape)."""
    dims = _rstd_dims(op, x32, gamma)
    rstd = torch.rsqrt(x32.pow(2).mean(dim=dims, keepdim=True) + epsilon)
    return x32 * rstd, rstd


def npu_rms_norm(self: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_rms_norm(self, gamma, epsilon=1e-06) -> (y, rstd)``: ``y = x * rsqrt(mean(x^2) + eps) * gamma``.

    Follows the inductor decomposition (FP32 math, ``y`` in x's dtype); ``rstd`` is FP32 and reduced over
    gamma's trailing dims, kept as size 1 (the meta registration; the decomposition covers a 1-D gamma only).
    """
    normed, rstd = _rms("npu_rms_norm", self.float(), gamma, epsilon)
    return (normed * gamma.float()).to(self.dtype), rstd


def npu_gemma_rms_norm(self: torch.Tensor, gamma: torch.Tensor,
                       epsilon: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_gemma_rms_norm(input, gamma, epsilon=1e-06) -> (y, rstd)``: the Gemma variant of RmsNorm, whose
    weight is stored as an offset from 1: ``y = x * rsqrt(mean(x^2) + eps) * (1 + gamma)`` (CANN GemmaRmsNorm).
    Shapes and dtypes as the meta registration: ``y`` in x's dtype, ``rstd`` FP32 with gamma's dims as size 1."""
    normed, rstd = _rms("npu_gemma_rms_norm", self.float(), gamma, epsilon)
    return (normed * (1.0 + gamma.float())).to(self.dtype), rstd


def npu_add_rms_norm(x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor,
                     epsilon: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``npu_add_rms_norm(x1, x2, gamma, epsilon=1e-06) -> (y, rstd, x)``: RmsNorm of the residual sum.

    ``x = x1 + x2`` (computed in FP32, returned in x1's dtype), ``y = rms_norm(x) * gamma`` in x1's dtype, ``rstd``
    FP32 with gamma's dims as size 1: the three outputs of the meta registration, in its order. The sum is
    normalised at FP32 precision (before its rounding to x1's dtype), as the fused kernel keeps it in registers.
    """
    if x1.shape != x2.shape:
        raise ValueError(f"torch_npu.npu_add_rms_norm: x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)} must have the "
                         "same shape")
    x = x1.float() + x2.float()
    normed, rstd = _rms("npu_add_rms_norm", x, gamma, epsilon)
    return (normed * gamma.float()).to(x1.dtype), rstd, x.to(x1.dtype)


def npu_swiglu(self: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """``npu_swiglu(self, dim=-1)``: ``A * sigmoid(A) * B`` with ``A, B = chunk(x, 2, dim)`` (the decomposition);
    the output has ``floor(size/2)`` along ``dim`` (the meta registration), in x's dtype."""
    size = self.shape[dim]
    if size % 2:
        raise ValueError(f"torch_npu.npu_swiglu: dimension {dim} of size {size} must be even (it is split in two)")
    a, b = torch.chunk(self.float(), 2, dim=dim)
    return (F.silu(a) * b).to(self.dtype)


def npu_silu(self: torch.Tensor) -> torch.Tensor:
    """``npu_silu(self)``: Swish ``x * sigmoid(x)`` (the doc), in x's dtype."""
    x = self.float()
    return (x * torch.sigmoid(x)).to(self.dtype)


def npu_fast_gelu(self: torch.Tensor) -> torch.Tensor:
    """``npu_fast_gelu(input)``: ``x / (1 + exp(-1.702 x))`` (the doc's formula 2, A2/A3; its formula 1 for older
    devices, ``x / (1 + exp(-1.702|x|)) * exp(0.851 (x - |x|))``, is the same function written without
    overflow), in x's dtype."""
    x = self.float()
    return (x / (1.0 + torch.exp(-1.702 * x))).to(self.dtype)


def _gelu32(op: str, x: torch.Tensor, approximate: str) -> torch.Tensor:
    if approximate == "none":
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
    if approximate == "tanh":
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))
    raise ValueError(f"torch_npu.{op}: approximate must be 'none' or 'tanh', not {approximate!r}")


def npu_gelu(self: torch.Tensor, *, approximate: str = "none") -> torch.Tensor:
    """``npu_gelu(self, *, approximate='none')``: GELU, erf form (``'none'``) or tanh form (``'tanh'``), in x's
    dtype (meta: ``empty_like``)."""
    return _gelu32("npu_gelu", self.float(), approximate).to(self.dtype)


def npu_gelu_mul(input: torch.Tensor, *, approximate: str = "none") -> torch.Tensor:  # noqa: A002 - vendor name
    """``npu_gelu_mul(input, *, approximate='none')``: ``gelu(x[..., :d]) * x[..., d:]`` for a last dim of 2d
    (the doc), in x's dtype."""
    size = input.shape[-1]
    if size % 2:
        raise ValueError(f"torch_npu.npu_gelu_mul: the last dimension ({size}) must be even")
    a, b = torch.chunk(input.float(), 2, dim=-1)
    return (_gelu32("npu_gelu_mul", a, approximate) * b).to(input.dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = torch.chunk(x, 2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _rotate_interleave(x: torch.Tensor) -> torch.Tensor:
    """``(x0, x1, x2, x3 ...) -> (-x1, x0, -x3, x2 ...)``: the doc's ``stack((-x2, x1), -1)`` regrouped."""
    return torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)


def _rope(op: str, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mode: str,
          rotate: torch.Tensor | None = None) -> torch.Tensor:
    if x.shape[-1] % 2:
        raise ValueError(f"torch_npu.{op}: the last dimension D={x.shape[-1]} must be even")
    x32 = x.float()
    if rotate is not None:
        if rotate.dim() != 2 or tuple(rotate.shape) != (x.shape[-1], x.shape[-1]):
            raise ValueError(f"torch_npu.{op}: rotate must be a ({x.shape[-1]}, {x.shape[-1]}) matrix, "
                             f"not {tuple(rotate.shape)}")
        turned = x32 @ rotate.float()
    elif mode == "half":
        turned = _rotate_half(x32)
    elif mode == "interleave":
        turned = _rotate_interleave(x32)
    else:
        raise _unsupported(op, "rotary_mode", mode, "'half', 'interleave'")
    return (x32 * cos.float() + turned * sin.float()).to(x.dtype)


def npu_rotary_mul(self: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor, rotary_mode: str = "half",
                   rotate: torch.Tensor | None = None) -> torch.Tensor:
    """``npu_rotary_mul(self, r1, r2, rotary_mode='half', rotate=None)``: ``r1 * x + r2 * x_new`` (the doc and
    the decomposition), ``x_new`` = ``rotate_half(x)`` ('half'), the pairwise ``(-x[2i+1], x[2i])`` ('interleave')
    or ``x @ rotate`` when the developer's rotation matrix is given; r1/r2 broadcast; output in x's dtype."""
    if self.dim() != 4:
        raise ValueError(f"torch_npu.npu_rotary_mul: input must be 4-D (BNSD, BSND or SBND), not {self.dim()}-D")
    return _rope("npu_rotary_mul", self, r1, r2, rotary_mode, rotate)


_APPLY_ROPE_LAYOUTS = {"BSND": 4, "SBND": 4, "BNSD": 4, "TND": 3}


def npu_apply_rotary_pos_emb(query: torch.Tensor, key: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                             layout: str = "BSND",
                             rotary_mode: str = "half") -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_apply_rotary_pos_emb(query, key, cos, sin, layout='BSND', rotary_mode='half') -> (query, key)``.

    ``out = x * cos + rotate(x) * sin`` for both query and key; cos/sin carry N = 1 and broadcast over the heads.
    The doc says the outputs are query and key *updated in place*, so they are written back into the inputs and
    returned (shapes/dtypes as the meta registration). Modes 'half' and 'interleave' (same rotation as
    ``npu_rotary_mul``); 'quarter' and a cos/sin D smaller than the heads' D (partial rotation, Ascend 950) are
    not implemented.
    """
    op = "npu_apply_rotary_pos_emb"
    if not isinstance(layout, str) or layout not in _APPLY_ROPE_LAYOUTS:
        raise _unsupported(op, "layout", layout, "'BSND', 'SBND', 'BNSD', 'TND'")
    if rotary_mode not in ("half", "interleave"):
        raise _unsupported(op, "rotary_mode", rotary_mode, "'half', 'interleave'")
    ndim = _APPLY_ROPE_LAYOUTS[layout]
    for name, t in (("query", query), ("key", key), ("cos", cos), ("sin", sin)):
        if t.dim() != ndim:
            raise ValueError(f"torch_npu.{op}: {name} must be {ndim}-D for layout {layout}, not {t.dim()}-D")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"torch_npu.{op}: query and key must have the same D ({query.shape[-1]} != {key.shape[-1]})")
    if cos.shape != sin.shape:
        raise ValueError(f"torch_npu.{op}: cos {tuple(cos.shape)} and sin {tuple(sin.shape)} must have the same shape")
    if cos.shape[-1] != query.shape[-1]:
        raise _unsupported(op, "cos.shape[-1]", cos.shape[-1], f"the heads' D = {query.shape[-1]}")
    q = _rope(op, query, cos, sin, rotary_mode)
    k = _rope(op, key, cos, sin, rotary_mode)
    query.copy_(q)
    key.copy_(k)
    return query, key


def npu_interleave_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """``npu_interleave_rope(x, cos, sin)``: RoPE of a head stored interleaved (x0 y0 x1 y1 ..., DeepSeek MLA).

    torch_npu 2.14.0 documents only the schema and the meta (``empty_like(x)``); the formula is CANN's
    InterleaveRope: de-interleave the last dim (``x.reshape(..., D/2, 2).transpose(-1, -2).reshape(..., D)``),
    then ``q * cos + rotate_half(q) * sin``. Output in x's dtype.
    """
    if x.dim() != 4:
        raise ValueError(f"torch_npu.npu_interleave_rope: x must be 4-D (B, N, S, D), not {x.dim()}-D")
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"torch_npu.npu_interleave_rope: the last dimension D={d} must be even")
    q = x.float().unflatten(-1, (d // 2, 2)).transpose(-1, -2).flatten(-2)
    return (q * cos.float() + _rotate_half(q) * sin.float()).to(x.dtype)


_QUANT_MAX = {torch.int8: 127.0}


def npu_dynamic_quant(input: torch.Tensor, *, smooth_scales: torch.Tensor | None = None,  # noqa: A002
                      group_index: torch.Tensor | None = None, dst_type: Any = None, quant_mode: str = "pertoken",
                      dst_type_max: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_dynamic_quant(input, *, smooth_scales=None, group_index=None, dst_type=None, quant_mode='pertoken',
    dst_type_max=0.0) -> (y, scale)``: symmetric per-token dynamic quantisation (the doc).

    ``scale = rowMax(|x * smooth|) / DTYPE_MAX``, ``y = round(x * smooth / scale)`` (round half to even, the
    device's rint); ``y`` int8 with x's shape, ``scale`` FP32 with x's shape minus its last dim (the meta
    registration). MoE: ``group_index`` (cumulative row ends) picks the row of a 2-D ``smooth_scales`` for each
    row group. An all-zero row has scale 0 and quantises to 0. Only ``dst_type`` int8 (None) and
    ``quant_mode='pertoken'`` are implemented (int4 packing, FP8/HiFloat8, per-tensor/per-channel are not).
    """
    op = "npu_dynamic_quant"
    dtype = _dtype_arg(op, "dst_type", dst_type) or torch.int8
    if dtype not in _QUANT_MAX:
        raise _unsupported(op, "dst_type", dst_type, "None or torch.int8")
    if quant_mode != "pertoken":
        raise _unsupported(op, "quant_mode", quant_mode, "'pertoken'")
    if dst_type_max != 0.0:
        raise _unsupported(op, "dst_type_max", dst_type_max, "0.0 (the dtype's own maximum)")
    if input.dim() < 2:
        raise ValueError(f"torch_npu.{op}: input must have more than one dimension, not {input.dim()}")
    x = input.float()
    if smooth_scales is not None:
        h = input.shape[-1]
        if group_index is None:
            if smooth_scales.dim() != 1 or smooth_scales.shape[0] != h:
                raise ValueError(f"torch_npu.{op}: smooth_scales must be 1-D of x's last dim ({h}) without "
                                 f"group_index, not {tuple(smooth_scales.shape)}")
            x = x * smooth_scales.float()
        else:
            x = x * _group_rows(op, x.reshape(-1, h).shape[0], smooth_scales, group_index, h).reshape(x.shape)
    elif group_index is not None:
        raise ValueError(f"torch_npu.{op}: group_index needs smooth_scales")
    scale = x.abs().amax(dim=-1) / _QUANT_MAX[dtype]
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    y = torch.round(x / safe.unsqueeze(-1)).clamp(-128, 127).to(dtype)
    return y, scale


def _group_rows(op: str, rows: int, smooth: torch.Tensor, group_index: torch.Tensor, h: int) -> torch.Tensor:
    """(rows, h): the smooth_scales row of each input row (group i covers rows group_index[i-1]:group_index[i])."""
    if smooth.dim() != 2 or smooth.shape[1] != h or group_index.dim() != 1 or group_index.shape[0] != smooth.shape[0]:
        raise ValueError(f"torch_npu.{op}: with group_index, smooth_scales must be (groups, {h}) and group_index "
                         f"(groups,), not {tuple(smooth.shape)} and {tuple(group_index.shape)}")
    ends = [int(v) for v in group_index.tolist()]
    if any(b < a for a, b in zip([0, *ends], ends)) or (ends and ends[-1] != rows):
        raise ValueError(f"torch_npu.{op}: group_index {ends} must be non-decreasing and end at the row count {rows}")
    counts = torch.tensor([b - a for a, b in zip([0, *ends], ends)])
    return smooth.float().repeat_interleave(counts, dim=0)


def npu_moe_gating_top_k_softmax(x: torch.Tensor, finished: torch.Tensor | None = None,
                                 k: int = 1) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``npu_moe_gating_top_k_softmax(x, finished=None, k=1) -> (y, expert_idx, row_idx)``: softmax over the
    experts (last dim), then the top k (the doc).

    ``y`` in x's dtype, ``expert_idx`` and ``row_idx`` int32, all of x's shape with k as last dim (the meta
    registration). Values are sorted descending, ties to the lower expert index. ``row_idx[r, j] = j * rows + r``
    (rows = the flattened leading dims): the source row of each routed slot in the k-major order
    ``npu_moe_init_routing`` expands tokens in (its doc's example pairs 3 rows, k = 2 with
    ``row_idx = [[0, 3], [1, 4], [2, 5]]`` and reads ``x[row_idx % num_rows]``). Rows marked ``finished`` are not implemented (the doc does not
    define what they output); an all-False ``finished`` is accepted.
    """
    op = "npu_moe_gating_top_k_softmax"
    if x.dim() not in (2, 3):
        raise ValueError(f"torch_npu.{op}: x must be 2-D or 3-D, not {x.dim()}-D")
    experts = x.shape[-1]
    if not 0 < k <= experts or k > 1024:
        raise ValueError(f"torch_npu.{op}: k must satisfy 0 < k <= {experts} (x's last dim) and k <= 1024, not {k}")
    if finished is not None:
        if tuple(finished.shape) != tuple(x.shape[:-1]):
            raise ValueError(f"torch_npu.{op}: finished must have shape {tuple(x.shape[:-1])}, "
                             f"not {tuple(finished.shape)}")
        if bool(finished.any()):
            raise _unsupported(op, "finished", "<rows marked True>", "None or all False")
    probs = torch.softmax(x.float(), dim=-1)
    values, idx = torch.sort(probs, dim=-1, descending=True, stable=True)
    values, idx = values[..., :k], idx[..., :k]
    rows = math.prod(x.shape[:-1])
    row_idx = (torch.arange(k, dtype=torch.int64).unsqueeze(0) * rows
               + torch.arange(rows, dtype=torch.int64).unsqueeze(1)).reshape(*x.shape[:-1], k)
    return values.to(x.dtype), idx.to(torch.int32), row_idx.to(torch.int32)


def npu_moe_finalize_routing(expanded_permuted_rows: torch.Tensor, skip1: torch.Tensor | None,
                             skip2: torch.Tensor | None, bias: torch.Tensor | None, scales: torch.Tensor | None,
                             expanded_src_to_dst_row: torch.Tensor, export_for_source_row: torch.Tensor | None,
                             drop_pad_mode: int | None = 0, k: int | None = 1) -> torch.Tensor:
    """``npu_moe_finalize_routing(expanded_permuted_rows, skip1, skip2, bias, scales, expanded_src_to_dst_row,
    export_for_source_row, drop_pad_mode=0, k=1)``: combines the experts' outputs back per token (the doc):

    ``out[i] = skip1[i] + skip2[i] + sum_k scales[i, k] * (rows[src_to_dst[i + k * num_rows]] + bias[e])`` with
    ``e = export_for_source_row[i, k]``; absent skips/bias count 0, absent scales 1 (then ``k`` gives K).
    Output (num_rows, H) in the rows' dtype (the meta registration). Only ``drop_pad_mode`` 0 (drop-less, the
    doc's only value; the meta's drop-pad modes 1-3 are not implemented).
    """
    op = "npu_moe_finalize_routing"
    if drop_pad_mode not in (0, None):
        raise _unsupported(op, "drop_pad_mode", drop_pad_mode, "0")
    if expanded_permuted_rows.dim() != 2:
        raise ValueError(f"torch_npu.{op}: expanded_permuted_rows must be 2-D (NUM_ROWS * K, H), not "
                         f"{expanded_permuted_rows.dim()}-D")
    total = expanded_src_to_dst_row.numel()
    if scales is not None:
        num_rows, top_k = scales.shape
    else:
        if not k or k <= 0 or total % k:
            raise ValueError(f"torch_npu.{op}: without scales, k must divide the {total} routed rows, not {k}")
        top_k, num_rows = k, total // k
    if num_rows * top_k != total or expanded_src_to_dst_row.dim() != 1:
        raise ValueError(f"torch_npu.{op}: expanded_src_to_dst_row must be 1-D of NUM_ROWS * K = "
                         f"{num_rows * top_k}, not {tuple(expanded_src_to_dst_row.shape)}")
    if bias is not None and export_for_source_row is None:
        raise ValueError(f"torch_npu.{op}: bias needs export_for_source_row (the expert of each routed row)")
    rows = expanded_permuted_rows.float()
    dst = expanded_src_to_dst_row.long().reshape(top_k, num_rows)  # [k, i] = entry i + k * num_rows
    if bool(((dst < 0) | (dst >= rows.shape[0])).any()):
        raise ValueError(f"torch_npu.{op}: expanded_src_to_dst_row values must lie in [0, {rows.shape[0] - 1}]")
    gathered = rows[dst]  # (K, num_rows, H)
    if bias is not None:
        assert export_for_source_row is not None
        gathered = gathered + bias.float()[export_for_source_row.long().T]
    weights = torch.ones(top_k, num_rows, 1) if scales is None else scales.float().T.unsqueeze(-1)
    out = (gathered * weights).sum(dim=0)
    for skip in (skip1, skip2):
        if skip is not None:
            out = out + skip.float()
    return out.to(expanded_permuted_rows.dtype)


def _scatter_nd(op: str, out: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
    if indices.dim() < 2:
        raise ValueError(f"torch_npu.{op}: indices must be at least 2-D, not {indices.dim()}-D")
    if indices.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"torch_npu.{op}: indices must be int32 or int64, not {indices.dtype}")
    a = indices.shape[-1]
    if a > out.dim():
        raise ValueError(f"torch_npu.{op}: indices' last dim ({a}) exceeds the input's rank ({out.dim()})")
    want = tuple(indices.shape[:-1]) + tuple(out.shape[a:])
    if tuple(updates.shape) != want:
        raise ValueError(f"torch_npu.{op}: updates must have shape {want} (indices' shape without its last dim, "
                         f"then the input's shape from dim {a}), not {tuple(updates.shape)}")
    if updates.dtype != out.dtype:
        raise ValueError(f"torch_npu.{op}: updates ({updates.dtype}) must have the input's dtype ({out.dtype})")
    idx = indices.long()
    for d in range(a):
        col = idx[..., d]
        if bool(((col < 0) | (col >= out.shape[d])).any()):
            raise ValueError(f"torch_npu.{op}: indices out of range for dim {d} of size {out.shape[d]}")
    out[tuple(idx.unbind(-1))] = updates
    return out


def npu_scatter_nd_update(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
    """``npu_scatter_nd_update(input, indices, updates)``: a copy of input with ``out[indices[i]] = updates[i]``
    (indices' last dim indexes input's leading dims; the doc); input is unchanged."""
    return _scatter_nd("npu_scatter_nd_update", self.clone(), indices, updates)


def npu_scatter_nd_update_(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
    """``npu_scatter_nd_update_(input, indices, updates)``: the same update written into input, which is returned."""
    return _scatter_nd("npu_scatter_nd_update_", self, indices, updates)


def npu_scatter_pa_kv_cache(key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor,
                            value_cache: torch.Tensor, slot_mapping: torch.Tensor, *,
                            compress_lens: torch.Tensor | None = None,
                            compress_seq_offsets: torch.Tensor | None = None, seq_lens: torch.Tensor | None = None,
                            cache_mode: str | None = "PA_NZ") -> None:
    """``npu_scatter_pa_kv_cache(key, value, key_cache, value_cache, slot_mapping, *, ..., cache_mode='PA_NZ')``:
    writes token t's key/value into the paged caches at slot ``slot_mapping[t]`` (block ``slot // block_size``,
    row ``slot % block_size``), in place; returns None (schema ``-> ()``). The doc's scenarios 1 and 2:

    * ``cache_mode`` 'PA_NZ' (default): key (T, N, Dk), cache (blocks, N*Dk // last, block_size, last), the NZ
      layout: element h of a token's flattened key goes to ``[block, h // last, row, h % last]``;
    * ``cache_mode`` None / 'Norm' (ND): key (T, N, Dk), cache (blocks, block_size, N, Dk).

    Scenario 3 (4-D key, compress_lens / compress_seq_offsets / seq_lens) is not implemented.
    """
    op = "npu_scatter_pa_kv_cache"
    _reject(op, compress_lens=compress_lens, compress_seq_offsets=compress_seq_offsets, seq_lens=seq_lens)
    if cache_mode not in (None, "Norm", "PA_NZ"):
        raise _unsupported(op, "cache_mode", cache_mode, "None, 'Norm', 'PA_NZ'")
    if key.dim() != 3 or value.dim() != 3:
        raise _unsupported(op, "key.dim()", key.dim(), "3 (scenarios 1 and 2; the 4-D compress scenario is not "
                           "implemented)")
    tokens = key.shape[0]
    if value.shape[:2] != key.shape[:2] or slot_mapping.dim() != 1 or slot_mapping.shape[0] != tokens:
        raise ValueError(f"torch_npu.{op}: key {tuple(key.shape)}, value {tuple(value.shape)} and slot_mapping "
                         f"{tuple(slot_mapping.shape)} must share the token count")
    slots = slot_mapping.long()
    for name, src, cache in (("key", key, key_cache), ("value", value, value_cache)):
        if cache.dim() != 4 or cache.dtype != src.dtype:
            raise ValueError(f"torch_npu.{op}: {name}_cache must be 4-D of {name}'s dtype, not "
                             f"{cache.dim()}-D {cache.dtype}")
        flat = src.reshape(tokens, -1)
        if cache_mode == "PA_NZ":
            blocks, chunks, block_size, last = cache.shape
            if chunks * last != flat.shape[1]:
                raise ValueError(f"torch_npu.{op}: the NZ {name}_cache {tuple(cache.shape)} does not hold "
                                 f"N*D = {flat.shape[1]} per token")
        else:
            blocks, block_size = cache.shape[:2]
            if tuple(cache.shape[2:]) != tuple(src.shape[1:]):
                raise ValueError(f"torch_npu.{op}: the ND {name}_cache {tuple(cache.shape)} does not match "
                                 f"{name} {tuple(src.shape)}")
        if bool(((slots < 0) | (slots >= blocks * block_size)).any()):
            raise ValueError(f"torch_npu.{op}: slot_mapping values must lie in [0, {blocks * block_size - 1}]")
        block, row = slots // block_size, slots % block_size
        if cache_mode == "PA_NZ":
            cache[block, :, row, :] = flat.reshape(tokens, chunks, last)
        else:
            cache[block, row] = src


def _int_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Exact int8 x int8 -> int64 product (float64 holds every partial sum of int8 products exactly up to
    k = 2^38, far above the documented k <= 65535)."""
    return torch.matmul(a.double(), b.double()).to(torch.int64)


_QMM_OUT = (torch.int8, torch.float16, torch.bfloat16)


def npu_quant_matmul(x1: torch.Tensor, x2: torch.Tensor, scale: torch.Tensor, *, offset: torch.Tensor | None = None,
                     pertoken_scale: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                     output_dtype: Any = None, x1_dtype: Any = None, x2_dtype: Any = None,
                     pertoken_scale_dtype: Any = None, scale_dtype: Any = None,
                     group_sizes: Sequence[int] | None = None, y_scale: torch.Tensor | None = None) -> torch.Tensor:
    """``npu_quant_matmul(x1, x2, scale, *, offset=None, pertoken_scale=None, bias=None, output_dtype=None, ...)``:
    int8 x int8 matmul with dequantisation (the doc's int8 rows of its dtype table).

    ``acc = x1 @ x2`` (exact integers, batch dims broadcast), then ``(acc + bias) * scale [* pertoken_scale]
    [+ offset]`` in FP32 with an int32 bias, or ``acc * scale [* pertoken_scale] + bias`` with a floating bias;
    ``scale``/``offset`` are per-channel (n,) or (1,), ``pertoken_scale`` (m,). ``output_dtype`` None/int8 rounds
    half to even and saturates; float16/bfloat16 cast. Not implemented: the int64 ``scale`` of
    ``npu_trans_quant_param``, int4 (int32-packed) and FP8/FP4 inputs, int32 output, the ``*_dtype``,
    ``group_sizes`` and ``y_scale`` arguments.
    """
    op = "npu_quant_matmul"
    for name, value in (("x1_dtype", x1_dtype), ("x2_dtype", x2_dtype), ("pertoken_scale_dtype", pertoken_scale_dtype),
                        ("scale_dtype", scale_dtype), ("group_sizes", group_sizes), ("y_scale", y_scale)):
        if value is not None:
            raise _unsupported(op, name, value, "None")
    if x1.dtype != torch.int8 or x2.dtype != torch.int8:
        raise _unsupported(op, "x1/x2 dtype", (x1.dtype, x2.dtype), "int8 x int8")
    out_dtype = _dtype_arg(op, "output_dtype", output_dtype) or torch.int8
    if out_dtype not in _QMM_OUT:
        raise _unsupported(op, "output_dtype", output_dtype, "None, torch.int8, torch.float16, torch.bfloat16")
    if scale.dtype not in (torch.float32, torch.bfloat16):
        raise _unsupported(op, "scale.dtype", scale.dtype, "float32, bfloat16 (int64 from npu_trans_quant_param "
                           "is not decoded)")
    if not 2 <= x1.dim() <= 6 or not 2 <= x2.dim() <= 6:
        raise ValueError(f"torch_npu.{op}: x1 and x2 must be 2-D to 6-D, not {x1.dim()}-D and {x2.dim()}-D")
    k, n = x2.shape[-2], x2.shape[-1]
    if x1.shape[-1] != k:
        raise ValueError(f"torch_npu.{op}: x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)} do not multiply (k)")
    for name, t in (("scale", scale), ("offset", offset)):
        if t is not None and (t.dim() != 1 or t.shape[0] not in (1, n)):
            raise ValueError(f"torch_npu.{op}: {name} must be 1-D of size 1 or n={n}, not {tuple(t.shape)}")
    if offset is not None and out_dtype != torch.int8:
        raise ValueError(f"torch_npu.{op}: offset is only supported with an int8 output")
    if pertoken_scale is not None and (pertoken_scale.dim() != 1 or pertoken_scale.shape[0] != x1.shape[-2]):
        raise ValueError(f"torch_npu.{op}: pertoken_scale must be 1-D of size m={x1.shape[-2]}, "
                         f"not {tuple(pertoken_scale.shape)}")
    acc = _int_matmul(x1, x2)
    int_bias = bias is not None and bias.dtype == torch.int32
    if int_bias:
        assert bias is not None
        acc = acc + bias.to(torch.int64)
    y = acc.to(torch.float64).float() * scale.float()
    if pertoken_scale is not None:
        y = y * pertoken_scale.float().unsqueeze(-1)
    if bias is not None and not int_bias:
        y = y + bias.float()
    if offset is not None:
        y = y + offset.float()
    if out_dtype == torch.int8:
        return torch.round(y).clamp(-128, 127).to(torch.int8)
    return y.to(out_dtype)


def _as_list(op: str, name: str, value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple) and value and all(isinstance(t, torch.Tensor) for t in value):
        return list(value)
    raise ValueError(f"torch_npu.{op}: {name} must be a non-empty list of tensors")


def _group_bounds(op: str, group_list: Any, group_list_type: int | None, rows: int) -> list[tuple[int, int]]:
    """[(start, end)] rows of each group: group_list is cumulative ends (type 0) or sizes (type 1)."""
    values = [int(v) for v in (group_list.tolist() if isinstance(group_list, torch.Tensor) else group_list)]
    if group_list_type == 1:
        ends, total = [], 0
        for v in values:
            if v < 0:
                raise ValueError(f"torch_npu.{op}: group_list sizes must be non-negative, not {values}")
            total += v
            ends.append(total)
    elif group_list_type in (0, None):
        ends = values
        if any(b < a for a, b in zip([0, *ends], ends)) or (ends and ends[0] < 0):
            raise ValueError(f"torch_npu.{op}: group_list {values} must be a non-negative non-decreasing cumsum")
    else:
        raise ValueError(f"torch_npu.{op}: group_list_type must be 0 or 1, not {group_list_type}")
    if not ends or ends[-1] != rows:
        raise ValueError(f"torch_npu.{op}: group_list {values} must cover x's {rows} rows exactly")
    return list(zip([0, *ends[:-1]], ends))


def npu_grouped_matmul(x: Any, weight: Any, *, bias: Any = None, scale: Any = None, offset: Any = None,
                       antiquant_scale: Any = None, antiquant_offset: Any = None, per_token_scale: Any = None,
                       group_list: Any = None, activation_input: Any = None, activation_quant_scale: Any = None,
                       activation_quant_offset: Any = None, split_item: int | None = 0, group_type: int | None = None,
                       group_list_type: int | None = 0, act_type: int | None = 0,
                       tuning_config: Sequence[int] | None = None, output_dtype: Any = None, x_dtype: Any = None,
                       weight_dtype: Any = None, scale_dtype: Any = None,
                       per_token_scale_dtype: Any = None) -> list[torch.Tensor]:
    """``npu_grouped_matmul(x, weight, *, bias=None, ..., group_list=None, split_item=0, group_type=None,
    group_list_type=0, act_type=0, output_dtype=None, ...) -> list``: ``y_i = x_i @ weight_i + bias_i`` (the
    doc's formula 1, the non-quantised scenario), FP32 accumulation, output in x's dtype.

    The doc's scenarios (x / weight / y as single or multiple tensors):

    * multi-multi-multi (``group_type`` None or -1, no ``group_list``, ``split_item`` 0/1): one output per pair;
    * single x split along m by ``group_list`` (``group_type`` 0, or a ``List[int]`` group_list with
      ``group_type`` None), weight a list of (k, n) or one (g, k, n) tensor: ``split_item`` 2/3 gives one (m, n)
      tensor, 0/1 one tensor per group;
    * multi-multi-single (``split_item`` 2/3, no group_list): the results concatenated along m.

    ``group_list`` holds cumulative row ends (``group_list_type`` 0) or group sizes (1) and must cover x's rows.
    Not implemented: the quantised and anti-quantised scenarios (scale, offset, antiquant_*, per_token_scale,
    int8/int4 weights), activations (``act_type`` != 0, per-token quantisation only), group_type 1/2,
    an output_dtype other than x's, the ``*_dtype`` and ``tuning_config`` arguments.
    """
    op = "npu_grouped_matmul"
    for name, value in (("scale", scale), ("offset", offset), ("antiquant_scale", antiquant_scale),
                        ("antiquant_offset", antiquant_offset), ("per_token_scale", per_token_scale),
                        ("activation_input", activation_input), ("activation_quant_scale", activation_quant_scale),
                        ("activation_quant_offset", activation_quant_offset), ("x_dtype", x_dtype),
                        ("weight_dtype", weight_dtype), ("scale_dtype", scale_dtype),
                        ("per_token_scale_dtype", per_token_scale_dtype)):
        if value is not None:
            raise _unsupported(op, name, "<given>", "None (the non-quantised scenario)")
    if act_type not in (0, None):
        raise _unsupported(op, "act_type", act_type, "0 (no activation)")
    if group_type not in (None, -1, 0):
        raise _unsupported(op, "group_type", group_type, "None, -1, 0")
    xs, ws = _as_list(op, "x", x), _as_list(op, "weight", weight)
    floats = (torch.float16, torch.bfloat16, torch.float32)
    if any(t.dtype not in floats for t in xs + ws):
        raise _unsupported(op, "x/weight dtype", sorted({str(t.dtype) for t in xs + ws}),
                           "float16, bfloat16, float32 (the non-quantised scenario)")
    out_dtype = _dtype_arg(op, "output_dtype", output_dtype) or xs[0].dtype
    if out_dtype != xs[0].dtype:
        raise _unsupported(op, "output_dtype", output_dtype, f"None or x's dtype {xs[0].dtype}")
    split = 0 if split_item is None else split_item
    if split not in (0, 1, 2, 3):
        raise ValueError(f"torch_npu.{op}: split_item must be 0, 1, 2 or 3, not {split_item}")
    if len(ws) == 1 and ws[0].dim() == 3:  # one (g, k, n) weight: its groups
        ws = list(ws[0].unbind(0))
    biases = None if bias is None else _as_list(op, "bias", bias)
    if biases is not None and len(biases) == 1 and biases[0].dim() == 2:
        biases = list(biases[0].unbind(0))
    if biases is not None and len(biases) != len(ws):
        raise ValueError(f"torch_npu.{op}: bias has {len(biases)} tensors for {len(ws)} weights")

    if len(xs) == 1 and len(ws) > 1:  # single x split along m
        if group_list is None:
            raise ValueError(f"torch_npu.{op}: a single x with {len(ws)} weights needs group_list")
        if isinstance(group_list, torch.Tensor) and group_type != 0:
            raise ValueError(f"torch_npu.{op}: a tensor group_list splitting x needs group_type=0")
        if xs[0].dim() != 2:
            raise ValueError(f"torch_npu.{op}: a split x must be 2-D, not {xs[0].dim()}-D")
        bounds = _group_bounds(op, group_list, group_list_type, xs[0].shape[0])
        if len(bounds) != len(ws):
            raise ValueError(f"torch_npu.{op}: group_list has {len(bounds)} groups for {len(ws)} weights")
        xs = [xs[0][a:b] for a, b in bounds]
    elif len(xs) != len(ws):
        raise ValueError(f"torch_npu.{op}: x has {len(xs)} tensors and weight {len(ws)}")
    elif group_list is not None:
        if split in (0, 1) and any(t.dim() > 2 for t in xs):
            raise ValueError(f"torch_npu.{op}: group_list must be None when x's tensors are more than 2-D")
        bounds = _group_bounds(op, group_list, group_list_type, sum(t.shape[0] for t in xs))
        if [b - a for a, b in bounds] != [t.shape[0] for t in xs]:
            raise ValueError(f"torch_npu.{op}: group_list does not match the rows of x's tensors")

    outs = []
    for i, (xi, wi) in enumerate(zip(xs, ws)):
        if wi.dim() != 2 or xi.shape[-1] != wi.shape[0]:
            raise ValueError(f"torch_npu.{op}: x[{i}] {tuple(xi.shape)} and weight[{i}] {tuple(wi.shape)} do not "
                             "multiply (weights are (k, n))")
        yi = xi.float() @ wi.float()
        if biases is not None:
            yi = yi + biases[i].float()
        outs.append(yi.to(out_dtype))
    if split in (2, 3):
        if len({t.shape[-1] for t in outs}) != 1 or any(t.dim() != 2 for t in outs):
            raise ValueError(f"torch_npu.{op}: split_item {split} needs 2-D results with one n")
        return [torch.cat(outs, dim=0)]
    return outs


# ---- attention (FlashAttention inference: npu_fused_infer_attention_score, prompt / incremental) ------------

_INT_MAX = 2147483647
# input_layout -> (query/key/value layout, output layout) (the meta registration's layout map)
_FA_LAYOUTS = {
    "BSH": ("BSH", "BSH"), "BSND": ("BSND", "BSND"), "BNSD": ("BNSD", "BNSD"), "NSD": ("NSD", "NSD"),
    "BNSD_BSND": ("BNSD", "BSND"), "BSH_BNSD": ("BSH", "BNSD"), "BSND_BNSD": ("BSND", "BNSD"),
    "BSH_NBSD": ("BSH", "NBSD"), "BSND_NBSD": ("BSND", "NBSD"), "BNSD_NBSD": ("BNSD", "NBSD"),
}
_FA_LAYOUTS_NOT_IMPLEMENTED = ("TND", "NTD", "TND_NTD", "NTD_TND", "SH")


def _to_bnsd(op: str, name: str, t: torch.Tensor, layout: str, heads: int) -> torch.Tensor:
    """A query/key/value tensor in ``layout`` as FP32 (B, N, S, D)."""
    want = 3 if layout in ("BSH", "NSD") else 4
    if t.dim() != want:
        raise ValueError(f"torch_npu.{op}: {name} must be {want}-D for layout {layout}, not {t.dim()}-D")
    t = t.float()
    if layout == "BSH":
        if t.shape[2] % heads:
            raise ValueError(f"torch_npu.{op}: {name}'s H={t.shape[2]} is not a multiple of its {heads} heads")
        return t.unflatten(2, (heads, t.shape[2] // heads)).permute(0, 2, 1, 3)
    if layout == "NSD":
        t = t.unsqueeze(0)
    elif layout == "BSND":
        t = t.permute(0, 2, 1, 3)
    if t.shape[1] != heads:
        raise ValueError(f"torch_npu.{op}: {name} has {t.shape[1]} heads, the head count argument says {heads}")
    return t


def _from_bnsd(t: torch.Tensor, layout: str) -> torch.Tensor:
    if layout == "BSH":
        return t.permute(0, 2, 1, 3).flatten(2)
    if layout == "BSND":
        return t.permute(0, 2, 1, 3)
    if layout == "NBSD":
        return t.permute(1, 0, 2, 3)
    if layout == "NSD":
        return t.squeeze(0)
    return t


def _seq_lengths(op: str, name: str, value: Any, batch: int, full: int) -> list[int]:
    """Per-batch valid lengths: None = the full S; one value for every batch; else the first B values."""
    if value is None:
        return [full] * batch
    vals = [int(v) for v in (value.tolist() if isinstance(value, torch.Tensor) else value)]
    if len(vals) == 1:
        vals = vals * batch
    if len(vals) < batch:
        raise ValueError(f"torch_npu.{op}: {name} has {len(vals)} values for batch {batch} (1 or >= B)")
    vals = vals[:batch]
    if any(not 0 <= v <= full for v in vals):
        raise ValueError(f"torch_npu.{op}: {name} {vals} must lie in [0, {full}]")
    return vals


def _paged_kv(op: str, name: str, cache: torch.Tensor, block_table: torch.Tensor, block_size: int,
              kv_heads: int, lengths: list[int]) -> list[torch.Tensor]:
    """Per batch, the (KV_N, L_b, D) keys/values a page table maps: cache (blocks, block_size, H) or
    (blocks, KV_N, block_size, D)."""
    if cache.dim() == 3:
        if cache.shape[2] % kv_heads:
            raise ValueError(f"torch_npu.{op}: the paged {name}'s H={cache.shape[2]} is not a multiple of its "
                             f"{kv_heads} heads")
        blocks = cache.float().unflatten(2, (kv_heads, cache.shape[2] // kv_heads)).permute(0, 2, 1, 3)
    elif cache.dim() == 4:
        blocks = cache.float()
    else:
        raise _unsupported(op, f"{name}.dim()", cache.dim(), "3 (blocks, block_size, H) or 4 (blocks, KV_N, "
                           "block_size, D); the NZ 5-D cache is not implemented")
    if blocks.shape[1] != kv_heads:
        raise ValueError(f"torch_npu.{op}: the paged {name} has {blocks.shape[1]} heads, not {kv_heads}")
    bs = blocks.shape[2]
    if block_size and block_size != bs:
        raise ValueError(f"torch_npu.{op}: block_size={block_size} but the paged {name} has blocks of {bs}")
    if block_table.dim() != 2 or block_table.shape[0] != len(lengths):
        raise ValueError(f"torch_npu.{op}: block_table must be (B={len(lengths)}, max blocks per sequence), "
                         f"not {tuple(block_table.shape)}")
    out = []
    for b, length in enumerate(lengths):
        need = -(-length // bs)
        if need > block_table.shape[1]:
            raise ValueError(f"torch_npu.{op}: batch {b} needs {need} blocks, block_table has {block_table.shape[1]}")
        ids = block_table[b, :need].long()
        out.append(blocks[ids].permute(1, 0, 2, 3).flatten(1, 2)[:, :length])
    return out


def _mask4(op: str, mask: torch.Tensor, batch: int, heads: int, q_s: int) -> torch.Tensor:
    """atten_mask as bool (B' in (1, B), N' in (1, N), Sq', Skv'): True = not computed."""
    m = mask != 0
    if m.dim() == 2:  # (B, KV_S) when Q_S = 1, else (Q_S, KV_S)
        m = m[:, None, None, :] if q_s == 1 else m[None, None]
    elif m.dim() == 3:
        m = m.unsqueeze(1)
    elif m.dim() != 4:
        raise ValueError(f"torch_npu.{op}: atten_mask must be 2-D to 4-D, not {m.dim()}-D")
    if m.shape[0] not in (1, batch) or m.shape[1] not in (1, heads):
        raise ValueError(f"torch_npu.{op}: atten_mask shape {tuple(mask.shape)} does not broadcast over batch "
                         f"{batch} and {heads} heads")
    return m


def _attention(op: str, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *,
               atten_mask: torch.Tensor | None, actual_seq_lengths: Any, actual_seq_lengths_kv: Any,
               block_table: torch.Tensor | None, block_size: int, num_heads: int, num_key_value_heads: int,
               scale: float, pre_tokens: int, next_tokens: int, input_layout: str, sparse_mode: int,
               softmax_lse_flag: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """``softmax(scale * q k^T + mask) v`` per batch and head, FP32; returns (attention_out, softmax_lse)."""
    if input_layout in _FA_LAYOUTS_NOT_IMPLEMENTED:
        raise _unsupported(op, "input_layout", input_layout, ", ".join(repr(k) for k in _FA_LAYOUTS))
    if input_layout not in _FA_LAYOUTS:
        raise ValueError(f"torch_npu.{op}: unknown input_layout {input_layout!r}")
    if query.dtype == torch.int8:
        raise _unsupported(op, "query.dtype", query.dtype, "float16, bfloat16 (int8 quantised inputs are not "
                           "implemented)")
    if query.dtype not in (torch.float16, torch.bfloat16) or key.dtype != query.dtype or value.dtype != query.dtype:
        raise ValueError(f"torch_npu.{op}: query/key/value must all be float16 or bfloat16, not "
                         f"{query.dtype}/{key.dtype}/{value.dtype}")
    if num_heads <= 0:
        raise ValueError(f"torch_npu.{op}: num_heads must be > 0, not {num_heads}")
    kv_heads = num_key_value_heads or num_heads
    if num_heads % kv_heads:
        raise ValueError(f"torch_npu.{op}: num_heads={num_heads} must be a multiple of num_key_value_heads="
                         f"{kv_heads}")
    q_layout, out_layout = _FA_LAYOUTS[input_layout]
    q = _to_bnsd(op, "query", query, q_layout, num_heads)
    batch, _, q_s, _ = q.shape
    incremental = q_s == 1  # the doc: Q_S = 1 takes the IncreFlashAttention branch
    if block_table is not None:
        if actual_seq_lengths_kv is None:
            raise ValueError(f"torch_npu.{op}: page attention (block_table) needs actual_seq_lengths_kv")
        kv_full = int(block_table.shape[1]) * (key.shape[1] if key.dim() == 3 else key.shape[2])
        kv_lens = _seq_lengths(op, "actual_seq_lengths_kv", actual_seq_lengths_kv, batch, kv_full)
        keys = _paged_kv(op, "key", key, block_table, block_size, kv_heads, kv_lens)
        values = _paged_kv(op, "value", value, block_table, block_size, kv_heads, kv_lens)
    else:
        k_all = _to_bnsd(op, "key", key, q_layout, kv_heads)
        v_all = _to_bnsd(op, "value", value, q_layout, kv_heads)
        if k_all.shape[:3] != v_all.shape[:3] or k_all.shape[0] != batch:
            raise ValueError(f"torch_npu.{op}: key {tuple(key.shape)} and value {tuple(value.shape)} must share B "
                             f"(= query's {batch}), N and S")
        kv_lens = _seq_lengths(op, "actual_seq_lengths_kv", actual_seq_lengths_kv, batch, k_all.shape[2])
        keys = [k_all[b, :, :n] for b, n in enumerate(kv_lens)]
        values = [v_all[b, :, :n] for b, n in enumerate(kv_lens)]
    if keys[0].shape[-1] != q.shape[-1]:
        raise ValueError(f"torch_npu.{op}: query D={q.shape[-1]} and key D={keys[0].shape[-1]} differ")
    q_lens = [1] * batch if incremental else _seq_lengths(op, "actual_seq_lengths", actual_seq_lengths, batch, q_s)
    mask = None if atten_mask is None else _mask4(op, atten_mask, batch, num_heads, q_s)
    if not incremental:
        if sparse_mode in (2, 3) and atten_mask is None:
            raise ValueError(f"torch_npu.{op}: sparse_mode={sparse_mode} needs the (2048, 2048) atten_mask")
        if sparse_mode not in (0, 1, 2, 3):
            raise _unsupported(op, "sparse_mode", sparse_mode, "0, 1, 2, 3")
        if sparse_mode == 1 and atten_mask is None:
            raise ValueError(f"torch_npu.{op}: sparse_mode=1 (allMask) needs the full atten_mask")
    group = num_heads // kv_heads
    d_v = values[0].shape[-1]
    out = torch.zeros(batch, num_heads, q_s, d_v)
    lse = torch.zeros(batch, num_heads, q_s, 1)
    for b in range(batch):
        ql, kl = q_lens[b], kv_lens[b]
        qi = torch.arange(ql).unsqueeze(1)
        kj = torch.arange(kl).unsqueeze(0)
        blocked = torch.zeros(1, ql, kl, dtype=torch.bool)
        if incremental or sparse_mode in (0, 1):
            if mask is not None:
                mb = mask[b if mask.shape[0] > 1 else 0]
                if mb.shape[-2] < ql or mb.shape[-1] < kl:
                    raise ValueError(f"torch_npu.{op}: atten_mask {tuple(mask.shape)} (as 4-D) is smaller than "
                                     f"batch {b}'s ({ql}, {kl}) scores")
                blocked = blocked | mb[:, :ql, :kl]
                if not incremental and sparse_mode == 0 and (next_tokens < kl - 1 or pre_tokens < ql - 1):
                    if ql != kl:  # where a band is aligned when Q_S != KV_S is not documented
                        raise _unsupported(op, "pre_tokens/next_tokens", (pre_tokens, next_tokens),
                                           "the defaults, or Q_S == KV_S per batch, with sparse_mode=0")
                    blocked = blocked | (kj > qi + next_tokens) | (kj < qi - pre_tokens)
        elif sparse_mode == 2:  # leftUpCausal
            blocked = blocked | (kj > qi)
        else:  # 3: rightDownCausal
            blocked = blocked | (kj > qi + (kl - ql))
        for h in range(num_heads):
            s = scale * (q[b, h, :ql] @ keys[b][h // group].T)
            s = s.masked_fill(blocked[0 if blocked.shape[0] == 1 else h], float("-inf"))
            row_max = s.amax(dim=-1, keepdim=True)
            dead = torch.isneginf(row_max)  # a row with nothing to attend to: output 0 (the row-invalid fix)
            p = torch.exp(s - torch.where(dead, torch.zeros_like(row_max), row_max))
            total = p.sum(dim=-1, keepdim=True)
            out[b, h, :ql] = torch.where(dead, torch.zeros(1), (p / torch.where(dead, torch.ones(1), total))
                                         @ values[b][h // group])
            lse[b, h, :ql] = torch.where(dead, torch.full_like(row_max, float("-inf")), torch.log(total) + row_max)
    result = _from_bnsd(out, out_layout).to(query.dtype)
    return result, (lse if softmax_lse_flag else torch.empty(0))


def npu_fused_infer_attention_score(
        query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *, pse_shift: Any = None,
        atten_mask: torch.Tensor | None = None, actual_seq_lengths: Any = None, actual_seq_lengths_kv: Any = None,
        dequant_scale1: Any = None, quant_scale1: Any = None, dequant_scale2: Any = None, quant_scale2: Any = None,
        quant_offset2: Any = None, antiquant_scale: Any = None, antiquant_offset: Any = None,
        key_antiquant_scale: Any = None, key_antiquant_offset: Any = None, value_antiquant_scale: Any = None,
        value_antiquant_offset: Any = None, block_table: torch.Tensor | None = None, query_padding_size: Any = None,
        kv_padding_size: Any = None, key_shared_prefix: Any = None, value_shared_prefix: Any = None,
        actual_shared_prefix_len: Any = None, query_rope: Any = None, key_rope: Any = None,
        key_rope_antiquant_scale: Any = None, num_heads: int = 1, scale: float = 1.0, pre_tokens: int = _INT_MAX,
        next_tokens: int = _INT_MAX, input_layout: str = "BSH", num_key_value_heads: int = 0, sparse_mode: int = 0,
        inner_precise: int = 0, block_size: int = 0, antiquant_mode: int = 0, key_antiquant_mode: int = 0,
        value_antiquant_mode: int = 0, softmax_lse_flag: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_fused_infer_attention_score(query, key, value, *, ...) -> (attention_out, softmax_lse)``:
    ``softmax(scale * query @ key^T + atten_mask) @ value`` (the doc), FP32, output in query's dtype.

    Implemented (float16/bfloat16 inputs): layouts BSH, BSND, BNSD, NSD and the converting BNSD_BSND, BSH_BNSD,
    BSND_BNSD, *_NBSD (output shape as the meta registration); GQA (``num_key_value_heads``); ``atten_mask``
    (bool/int8/uint8, non-zero = not computed; (Q_S, KV_S), (1, Q_S, KV_S), (B|1, 1, Q_S, KV_S), or (B, KV_S)
    when Q_S = 1, larger aligned masks sliced); ``sparse_mode`` 0 (with ``pre_tokens``/``next_tokens`` as a band
    when Q_S == KV_S), 1 (allMask), 2 (leftUpCausal), 3 (rightDownCausal: token i sees keys up to
    ``i + KV_S - Q_S``), all ignored when Q_S = 1 as documented; right padding by ``actual_seq_lengths`` /
    ``actual_seq_lengths_kv``; page attention (``block_table`` over a (blocks, block_size, H) or
    (blocks, KV_N, block_size, D) cache). ``softmax_lse`` is ``log(sum(exp(s - max))) + max`` as (B, N, Q_S, 1)
    FP32 with ``softmax_lse_flag``, else the meta registration's empty tensor.

    Choices where the doc is silent: query rows past ``actual_seq_lengths`` are 0 (lse 0); a row whose scores are
    all masked is 0 with lse -inf (what ``inner_precise`` 2/3's row-invalid correction gives). Not implemented:
    quantisation (int8 inputs, dequant/quant scales), anti-quantisation, pse_shift, left padding, shared
    prefixes, MLA rope inputs, TND-family layouts, sparse_mode 4 and 9.
    """
    op = "npu_fused_infer_attention_score"
    _reject(op, pse_shift=pse_shift, dequant_scale1=dequant_scale1, quant_scale1=quant_scale1,
            dequant_scale2=dequant_scale2, quant_scale2=quant_scale2, quant_offset2=quant_offset2,
            antiquant_scale=antiquant_scale, antiquant_offset=antiquant_offset,
            key_antiquant_scale=key_antiquant_scale, key_antiquant_offset=key_antiquant_offset,
            value_antiquant_scale=value_antiquant_scale, value_antiquant_offset=value_antiquant_offset,
            query_padding_size=query_padding_size, kv_padding_size=kv_padding_size,
            key_shared_prefix=key_shared_prefix, value_shared_prefix=value_shared_prefix,
            actual_shared_prefix_len=actual_shared_prefix_len, query_rope=query_rope, key_rope=key_rope,
            key_rope_antiquant_scale=key_rope_antiquant_scale)
    if inner_precise not in (0, 1, 2, 3):
        raise ValueError(f"torch_npu.{op}: inner_precise must be 0..3, not {inner_precise}")
    return _attention(op, query, key, value, atten_mask=atten_mask, actual_seq_lengths=actual_seq_lengths,
                      actual_seq_lengths_kv=actual_seq_lengths_kv, block_table=block_table, block_size=block_size,
                      num_heads=num_heads, num_key_value_heads=num_key_value_heads, scale=scale,
                      pre_tokens=pre_tokens, next_tokens=next_tokens, input_layout=input_layout,
                      sparse_mode=sparse_mode, softmax_lse_flag=softmax_lse_flag)


def npu_prompt_flash_attention(
        query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *, padding_mask: Any = None,
        atten_mask: torch.Tensor | None = None, pse_shift: Any = None, actual_seq_lengths: Any = None,
        deq_scale1: Any = None, quant_scale1: Any = None, deq_scale2: Any = None, quant_scale2: Any = None,
        quant_offset2: Any = None, num_heads: int = 1, scale_value: float = 1.0, pre_tokens: int = _INT_MAX,
        next_tokens: int = 0, input_layout: str = "BSH", num_key_value_heads: int = 0,
        actual_seq_lengths_kv: Any = None, sparse_mode: int = 0) -> torch.Tensor:
    """``npu_prompt_flash_attention(query, key, value, *, ..., num_heads=1, scale_value=1.0, pre_tokens=INT_MAX,
    next_tokens=0, input_layout='BSH', ...)``: the full-sequence (prompt) branch of
    :func:`npu_fused_infer_attention_score`, with its own argument names and defaults (note ``next_tokens=0``:
    with sparse_mode 0 and a mask, a query token sees no later key). Returns attention_out only; the same
    implemented subset (quantisation, pse_shift and ``padding_mask`` are not implemented)."""
    op = "npu_prompt_flash_attention"
    _reject(op, padding_mask=padding_mask, pse_shift=pse_shift, deq_scale1=deq_scale1, quant_scale1=quant_scale1,
            deq_scale2=deq_scale2, quant_scale2=quant_scale2, quant_offset2=quant_offset2)
    return _attention(op, query, key, value, atten_mask=atten_mask, actual_seq_lengths=actual_seq_lengths,
                      actual_seq_lengths_kv=actual_seq_lengths_kv, block_table=None, block_size=0,
                      num_heads=num_heads, num_key_value_heads=num_key_value_heads, scale=scale_value,
                      pre_tokens=pre_tokens, next_tokens=next_tokens, input_layout=input_layout,
                      sparse_mode=sparse_mode, softmax_lse_flag=False)[0]


def npu_incre_flash_attention(
        query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *, padding_mask: Any = None,
        atten_mask: torch.Tensor | None = None, pse_shift: Any = None, actual_seq_lengths: Any = None,
        antiquant_scale: Any = None, antiquant_offset: Any = None, block_table: torch.Tensor | None = None,
        dequant_scale1: Any = None, quant_scale1: Any = None, dequant_scale2: Any = None, quant_scale2: Any = None,
        quant_offset2: Any = None, kv_padding_size: Any = None, num_heads: int = 1, scale_value: float = 1.0,
        input_layout: str = "BSH", num_key_value_heads: int = 0, block_size: int = 0,
        inner_precise: int = 1) -> torch.Tensor:
    """``npu_incre_flash_attention(query, key, value, *, ..., actual_seq_lengths=None, block_table=None,
    num_heads=1, scale_value=1.0, input_layout='BSH', num_key_value_heads=0, block_size=0, inner_precise=1)``:
    the decode (Q_S = 1) branch of :func:`npu_fused_infer_attention_score`; here ``actual_seq_lengths`` are the
    key/value lengths. Returns attention_out only; the same implemented subset."""
    op = "npu_incre_flash_attention"
    _reject(op, padding_mask=padding_mask, pse_shift=pse_shift, antiquant_scale=antiquant_scale,
            antiquant_offset=antiquant_offset, dequant_scale1=dequant_scale1, quant_scale1=quant_scale1,
            dequant_scale2=dequant_scale2, quant_scale2=quant_scale2, quant_offset2=quant_offset2,
            kv_padding_size=kv_padding_size)
    seq_dim = {"BSH": 1, "BSND": 1, "BNSD": 2}.get(input_layout)
    if seq_dim is None:
        raise _unsupported(op, "input_layout", input_layout, "'BSH', 'BSND', 'BNSD'")
    if query.dim() > seq_dim and query.shape[seq_dim] != 1:
        raise ValueError(f"torch_npu.{op}: query's S must be 1 (incremental decoding), not {query.shape[seq_dim]}")
    return _attention(op, query, key, value, atten_mask=atten_mask, actual_seq_lengths=None,
                      actual_seq_lengths_kv=actual_seq_lengths, block_table=block_table, block_size=block_size,
                      num_heads=num_heads, num_key_value_heads=num_key_value_heads, scale=scale_value,
                      pre_tokens=_INT_MAX, next_tokens=_INT_MAX, input_layout=input_layout, sparse_mode=0,
                      softmax_lse_flag=False)[0]


# ---- layout, casts and sorting ------------------------------------------------------------------------------

# the dtypes npu_dtype_cast converts between with torch's own cast (the packed int4 / HiFloat8 / FP4 carriers
# 285, 290, 296, 297 and the FP8 types are not implemented)
_CASTABLE = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
             torch.bfloat16, torch.float32, torch.float64)


def npu_dtype_cast(self: torch.Tensor, dtype: Any, input_dtype: Any = None) -> torch.Tensor:
    """``npu_dtype_cast(input, dtype, input_dtype=None)``: the tensor converted to ``dtype`` (the doc), same shape
    (the meta registration for the ordinary dtypes). Floating to integer truncates toward zero (the doc's example
    ``[0, 0.5, -1.] -> [0, 0, -1]``). ``input_dtype`` None (or x's own dtype) only: it exists to reinterpret
    packed FP4 inputs, which are not implemented, nor are the int4 / HiFloat8 / FP4 / FP8 outputs."""
    op = "npu_dtype_cast"
    supported = ", ".join(str(d) for d in _CASTABLE)
    out = _dtype_arg(op, "dtype", dtype)
    if out not in _CASTABLE:
        raise _unsupported(op, "dtype", dtype, supported)
    given = _dtype_arg(op, "input_dtype", input_dtype)
    if given is not None and given != self.dtype:
        raise _unsupported(op, "input_dtype", input_dtype, f"None or x's own dtype {self.dtype}")
    return self.to(out)


def _perm(op: str, perm: Sequence[int], ndim: int) -> list[int]:
    """``perm`` with negative dims resolved; a ValueError unless it is a permutation of ``range(ndim)``."""
    dims = [int(p) + ndim if int(p) < 0 else int(p) for p in perm]
    if sorted(dims) != list(range(ndim)):
        raise ValueError(f"torch_npu.{op}: perm {tuple(perm)} is not a permutation of the {ndim} input dims")
    return dims


def npu_transpose(self: torch.Tensor, perm: Sequence[int], require_contiguous: bool = True) -> torch.Tensor:
    """``npu_transpose(self, perm, require_contiguous=True)``: x with its dims permuted by ``perm``, contiguous
    (the doc; meta: ``empty_like(self.permute(perm))``). ``require_contiguous`` is a device-side performance hint
    and does not change the values."""
    return self.permute(_perm("npu_transpose", perm, self.dim())).contiguous()


def npu_confusion_transpose(self: torch.Tensor, perm: Sequence[int], shape: Sequence[int],
                            transpose_first: bool) -> torch.Tensor:
    """``npu_confusion_transpose(self, perm, shape, transpose_first)``: a fused permute and reshape (the doc):
    ``x.permute(perm).reshape(shape)`` when ``transpose_first``, else ``x.reshape(shape).permute(perm)`` (its
    examples: (2, 3, 4, 6) with perm (0, 2, 1, 3), shape (2, 4, 18), True -> (2, 4, 18); with perm (0, 2, 1),
    shape (2, 12, 6), False -> (2, 6, 12)). Contiguous, x's dtype."""
    op = "npu_confusion_transpose"
    if math.prod(shape) != self.numel():
        raise ValueError(f"torch_npu.{op}: shape {tuple(shape)} does not hold the input's {self.numel()} elements")
    if transpose_first:
        return self.permute(_perm(op, perm, self.dim())).reshape(tuple(shape)).contiguous()
    return self.reshape(tuple(shape)).permute(_perm(op, perm, len(shape))).contiguous()


def npu_broadcast(self: torch.Tensor, size: Sequence[int]) -> torch.Tensor:
    """``npu_broadcast(self, size)``: x expanded to ``size``, contiguous (the doc: size-1 dims are repeated, new
    dims are added in front; its example broadcasts (3, 1) to [3, 4]), x's dtype."""
    try:
        return self.expand(tuple(size)).contiguous()
    except RuntimeError as exc:
        raise ValueError(f"torch_npu.npu_broadcast: cannot broadcast {tuple(self.shape)} to {tuple(size)}") from exc


def npu_sort_v2(self: torch.Tensor, dim: int = -1, descending: bool = False) -> torch.Tensor:
    """``npu_sort_v2(self, dim=-1, descending=False)``: the values sorted along the last dim, without indices (the
    doc, which allows only the last dim). Exact in x's dtype (the doc's float32 example shows its values rounded
    to float16 precision; that rounding is not reproduced)."""
    if self.dim() == 0 or dim not in (-1, self.dim() - 1):
        raise ValueError(f"torch_npu.npu_sort_v2: only the last dim (dim=-1) is supported, not dim={dim} of a "
                         f"{self.dim()}-D input")
    return torch.sort(self, dim=-1, descending=descending).values


# ---- more normalisation and activations ---------------------------------------------------------------------


def npu_layer_norm_eval(input: torch.Tensor, normalized_shape: Sequence[int],  # noqa: A002 - vendor name
                        weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                        eps: float = 1e-5) -> torch.Tensor:
    """``npu_layer_norm_eval(input, normalized_shape, weight=None, bias=None, eps=1e-05)``: the same as
    ``torch.nn.functional.layer_norm`` (the doc): ``(x - mean) / sqrt(var + eps) * weight + bias`` over the
    trailing ``normalized_shape`` dims (biased variance); FP32 math, output in x's dtype (meta: ``empty_like``)."""
    shape = tuple(int(s) for s in normalized_shape)
    if not shape or len(shape) > input.dim() or tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise ValueError(f"torch_npu.npu_layer_norm_eval: normalized_shape {shape} must equal the trailing dims of "
                         f"the input shape {tuple(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise ValueError(f"torch_npu.npu_layer_norm_eval: {name} must have shape {shape}, not {tuple(t.shape)}")
    out = F.layer_norm(input.float(), shape, None if weight is None else weight.float(),
                       None if bias is None else bias.float(), eps)
    return out.to(input.dtype)


def npu_add_layer_norm(x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
                       epsilon: float = 1e-5,
                       additional_output: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``npu_add_layer_norm(x1, x2, gamma, beta, epsilon=1e-05, additional_output=False) -> (y, mean, rstd, x)``
    (s45): LayerNorm of the residual sum ``x = x1 + x2`` over gamma's trailing dims, ``y = (x - mean) * rstd *
    gamma + beta`` with the biased variance, as ``npu_add_rms_norm`` is RmsNorm of the sum. ``y`` and ``x`` in x1's
    dtype, ``mean`` / ``rstd`` FP32 with gamma's dims as size 1 (op-plugin's schema and meta registration as the
    author knows them; torch_npu is not installed here to check). The sum is normalised at FP32 precision, as
    ``npu_add_rms_norm``. ``x`` is returned whatever ``additional_output`` says (the flag only asks the device to
    write it; a script reads it only when it set the flag)."""
    op = "npu_add_layer_norm"
    if x1.shape != x2.shape:
        raise ValueError(f"torch_npu.{op}: x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)} must have the same shape")
    if tuple(beta.shape) != tuple(gamma.shape):
        raise ValueError(f"torch_npu.{op}: beta {tuple(beta.shape)} must have gamma's shape {tuple(gamma.shape)}")
    x = x1.float() + x2.float()
    dims = _rstd_dims(op, x, gamma)
    mean = x.mean(dim=dims, keepdim=True)
    rstd = torch.rsqrt((x - mean).pow(2).mean(dim=dims, keepdim=True) + epsilon)
    y = (x - mean) * rstd * gamma.float() + beta.float()
    return y.to(x1.dtype), mean, rstd, x.to(x1.dtype)


_GEGLU_APPROXIMATE = {0: "none", 1: "tanh"}


def npu_geglu(self: torch.Tensor, dim: int = -1, approximate: int = 1,
              activate_left: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_geglu(self, dim=-1, approximate=1, activate_left=False) -> (y, y_gelu)``: GeGLU (the doc).

    x is split in two halves along ``dim``; ``y_gelu = gelu(activated half)`` (``approximate`` 0: erf form,
    1: tanh form) and ``y = y_gelu * other half``, both in x's dtype with half of x's size along ``dim`` (the meta
    registration). The activated half is the right one by default and the left one with ``activate_left`` (the
    convention the same doc file spells out for the ``activate_left`` of ``npu_dequant_swiglu_quant``:
    ``False -> act(split(x)[1]) * split(x)[0]``).
    """
    op = "npu_geglu"
    if not 1 <= self.dim() <= 8:
        raise ValueError(f"torch_npu.{op}: x must be 1-D to 8-D, not {self.dim()}-D")
    if not -self.dim() <= dim < self.dim():
        raise ValueError(f"torch_npu.{op}: dim {dim} out of range [-{self.dim()}, {self.dim() - 1}]")
    if self.shape[dim] % 2:
        raise ValueError(f"torch_npu.{op}: dimension {dim} of size {self.shape[dim]} must be even")
    if approximate not in _GEGLU_APPROXIMATE:
        raise ValueError(f"torch_npu.{op}: approximate must be 0 (none) or 1 (tanh), not {approximate!r}")
    left, right = torch.chunk(self.float(), 2, dim=dim)
    act, other = (left, right) if activate_left else (right, left)
    gelu = _gelu32(op, act, _GEGLU_APPROXIMATE[approximate])
    return (gelu * other).to(self.dtype), gelu.to(self.dtype)


def npu_rms_norm_backward(dy: torch.Tensor, self: torch.Tensor, gamma: torch.Tensor,
                          rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_rms_norm_backward(dy, self, gamma, rstd) -> (dx, dgamma)``: the gradients of :func:`npu_rms_norm`
    (the inductor decomposition, generalised from a 1-D gamma to gamma's trailing dims as the forward does):

    ``dx = (dy * gamma - x * rstd * mean(dy * gamma * x * rstd)) * rstd`` (mean over gamma's dims) in x's dtype,
    ``dgamma = sum(dy * x * rstd)`` over the leading dims, FP32 with gamma's shape (the meta registration).
    ``rstd`` is the forward's, one value per normalised row.
    """
    op = "npu_rms_norm_backward"
    dims = _rstd_dims(op, self, gamma)
    if dy.shape != self.shape:
        raise ValueError(f"torch_npu.{op}: dy {tuple(dy.shape)} must have x's shape {tuple(self.shape)}")
    lead = tuple(self.shape[:self.dim() - gamma.dim()])
    if rstd.numel() != math.prod(lead):
        raise ValueError(f"torch_npu.{op}: rstd {tuple(rstd.shape)} must hold one value per row {lead}")
    r = rstd.float().reshape(lead + (1,) * gamma.dim())
    x, g, d = self.float(), gamma.float(), dy.float()
    dg = d * g
    dx = (dg - x * r * (dg * x * r).mean(dim=dims, keepdim=True)) * r
    dgamma = (d * x * r).sum(dim=tuple(range(len(lead)))) if lead else d * x * r
    return dx.to(self.dtype), dgamma.float()


# ---- quantisation -------------------------------------------------------------------------------------------


def npu_anti_quant(x: torch.Tensor, scale: torch.Tensor, *, offset: torch.Tensor | None = None,
                   dst_dtype: Any = None, src_dtype: Any = None) -> torch.Tensor:
    """``npu_anti_quant(x, scale, *, offset=None, dst_dtype=None, src_dtype=None)``: dequantisation (the doc):
    ``y = (x + offset) * scale`` with ``scale``/``offset`` 1-D of size 1 or x's last dim (offset absent = 0),
    FP32 math, output ``dst_dtype`` (default float16; float16 or bfloat16), x's shape (the meta registration).
    Only int8 x (``src_dtype`` None or int8): the int4-in-int32 packing (quint4x2) and FP8/HiFloat8 inputs are
    not implemented."""
    op = "npu_anti_quant"
    src = _dtype_arg(op, "src_dtype", src_dtype)
    if src not in (None, torch.int8):
        raise _unsupported(op, "src_dtype", src_dtype, "None or torch.int8")
    if x.dtype != torch.int8:
        raise _unsupported(op, "x.dtype", x.dtype, "int8 (int32-packed int4 and FP8 inputs are not implemented)")
    out_dtype = _dtype_arg(op, "dst_dtype", dst_dtype) or torch.float16
    if out_dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(f"torch_npu.{op}: dst_dtype must be float16 or bfloat16, not {dst_dtype!r}")
    if scale.dim() != 1 or scale.shape[0] not in (1, x.shape[-1] if x.dim() else 1):
        raise ValueError(f"torch_npu.{op}: scale must be 1-D of size 1 or x's last dim, not {tuple(scale.shape)}")
    if scale.dtype not in (torch.float32, torch.bfloat16):
        raise ValueError(f"torch_npu.{op}: scale must be float32 or bfloat16, not {scale.dtype}")
    y = x.float()
    if offset is not None:
        if offset.shape != scale.shape or offset.dtype != scale.dtype:
            raise ValueError(f"torch_npu.{op}: offset must have scale's shape and dtype ({tuple(scale.shape)}, "
                             f"{scale.dtype}), not ({tuple(offset.shape)}, {offset.dtype})")
        y = y + offset.float()
    return (y * scale.float()).to(out_dtype)


# npu_quantize's ``dtype``: the ScalarType numbers (and torch dtypes) of its documented outputs -> output dtype
_QUANTIZE_OUT: dict[Any, torch.dtype] = {
    12: torch.int8, torch.qint8: torch.int8, 1: torch.int8, torch.int8: torch.int8,
    13: torch.uint8, torch.quint8: torch.uint8, 0: torch.uint8, torch.uint8: torch.uint8,
    14: torch.int32, torch.qint32: torch.int32, 3: torch.int32, torch.int32: torch.int32,
}


def _per_axis(op: str, name: str, t: torch.Tensor, shape: torch.Size, axis: int) -> torch.Tensor:
    """``t`` (1-D of size 1 or shape[axis], or of x's rank with size 1 except at axis) viewed to broadcast."""
    ok = (t.dim() == 1 and t.shape[0] in (1, shape[axis])) or (
        t.dim() == len(shape) and all(s == 1 for i, s in enumerate(t.shape) if i != axis)
        and t.shape[axis] in (1, shape[axis]))
    if not ok:
        raise ValueError(f"torch_npu.{op}: {name} {tuple(t.shape)} must be 1-D of size 1 or {shape[axis]} (the input's "
                         f"dim {axis}), or of the input's rank with size 1 except at that dim")
    view = [1] * len(shape)
    view[axis] = t.numel()
    return t.float().reshape(view)


def npu_quantize(self: torch.Tensor, scales: torch.Tensor, zero_points: torch.Tensor | None, dtype: Any,
                 axis: int = 1, div_mode: bool = True) -> torch.Tensor:
    """``npu_quantize(input, scales, zero_points, dtype, axis=1, div_mode=True)``: static quantisation (the doc):
    ``y = input / scales + zero_points`` (``div_mode``) or ``input * scales + zero_points``, then rounded half to
    even (the device's rint) and saturated to the output dtype; x's shape (the meta registration).

    ``scales``/``zero_points`` vary along one dim and broadcast over the others: ``axis`` itself with
    ``div_mode``; without it the second-to-last dim for ``axis=-2`` and the last one for any ``axis > -2`` (the
    doc). ``dtype``: torch.qint8 -> int8, torch.quint8 -> uint8, torch.int32 -> int32 with ``div_mode``;
    torch.qint8 without. Not implemented: torch.quint4x2 (int4 packed in int32), and, with ``div_mode``,
    non-integral zero points (the doc leaves open whether they are added before or after rounding).
    """
    op = "npu_quantize"
    out = _QUANTIZE_OUT.get(dtype)
    if out is None:
        raise _unsupported(op, "dtype", dtype, "torch.qint8, torch.quint8, torch.int32 (quint4x2 packing is not "
                           "implemented)")
    if not div_mode and out != torch.int8:
        raise ValueError(f"torch_npu.{op}: with div_mode=False dtype must be torch.qint8 or torch.quint4x2, "
                         f"not {dtype!r}")
    if self.dim() == 0:
        raise ValueError(f"torch_npu.{op}: input must have at least one dimension")
    ndim = self.dim()
    if div_mode:
        if not -ndim <= axis < ndim:
            raise ValueError(f"torch_npu.{op}: axis {axis} out of range for a {ndim}-D input")
        ax = axis % ndim
    else:
        if axis < -2 or axis >= ndim or (axis == -2 and ndim < 2):
            raise ValueError(f"torch_npu.{op}: with div_mode=False axis must lie in [-2, {ndim - 1}], not {axis}")
        ax = ndim - 2 if axis == -2 else ndim - 1
    s = _per_axis(op, "scales", scales, self.shape, ax)
    y = self.float() / s if div_mode else self.float() * s
    if zero_points is not None:
        if not div_mode and (zero_points.shape != scales.shape or zero_points.dtype != scales.dtype):
            raise ValueError(f"torch_npu.{op}: zero_points must have scales' shape and dtype with div_mode=False")
        zp = _per_axis(op, "zero_points", zero_points, self.shape, ax)
        if div_mode and not bool((zp == torch.round(zp)).all()):
            raise _unsupported(op, "zero_points", "<non-integral values>", "integral zero points with div_mode=True")
        y = y + zp
    info = torch.iinfo(out)
    return torch.round(y).clamp(info.min, info.max).to(out)


def npu_weight_quant_batchmatmul(x: torch.Tensor, weight: torch.Tensor, antiquant_scale: torch.Tensor,
                                 antiquant_offset: torch.Tensor | None = None,
                                 quant_scale: torch.Tensor | None = None, quant_offset: torch.Tensor | None = None,
                                 bias: torch.Tensor | None = None, antiquant_group_size: int = 0,
                                 inner_precise: int = 0, weight_dtype: Any = None) -> torch.Tensor:
    """``npu_weight_quant_batchmatmul(x, weight, antiquant_scale, antiquant_offset=None, quant_scale=None,
    quant_offset=None, bias=None, antiquant_group_size=0, inner_precise=0)``: ``y = x @ W + bias`` with the int8
    weight dequantised as ``W = (weight + antiquant_offset) * antiquant_scale`` (the anti-quantisation formula of
    ``npu_anti_quant``'s doc), FP32 math, (M, N) output in x's dtype (the meta registration).

    x (M, K) float16/bfloat16, weight (K, N) int8. ``antiquant_scale``/``antiquant_offset``: per-tensor (1,) or
    (1, 1), per-channel (N,) or (1, N), or per-group (ceil(K / antiquant_group_size), N), the group size a
    multiple of 32 in [32, K-1]. ``inner_precise`` (a speed/precision switch) does not change the math here.
    Not implemented: int4 weights (int32-packed, or ``weight_dtype``), the int64 antiquant_scale / int32 offset
    of ``npu_trans_quant_param``, and output quantisation (``quant_scale``/``quant_offset``, int8 output).
    """
    op = "npu_weight_quant_batchmatmul"
    _reject(op, quant_scale=quant_scale, quant_offset=quant_offset, weight_dtype=weight_dtype)
    if weight.dtype != torch.int8:
        raise _unsupported(op, "weight.dtype", weight.dtype, "int8 (int32-packed int4 is not implemented)")
    if antiquant_scale.dtype == torch.int64:
        raise _unsupported(op, "antiquant_scale.dtype", antiquant_scale.dtype, "x's dtype (float16/bfloat16)")
    if x.dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(f"torch_npu.{op}: x must be float16 or bfloat16, not {x.dtype}")
    if antiquant_scale.dtype != x.dtype:
        raise ValueError(f"torch_npu.{op}: antiquant_scale ({antiquant_scale.dtype}) must have x's dtype ({x.dtype})")
    if x.dim() != 2 or weight.dim() != 2 or x.shape[1] != weight.shape[0]:
        raise ValueError(f"torch_npu.{op}: x (M, K) and weight (K, N) must be 2-D and agree on K, not "
                         f"{tuple(x.shape)} and {tuple(weight.shape)}")
    if inner_precise not in (0, 1):
        raise ValueError(f"torch_npu.{op}: inner_precise must be 0 or 1, not {inner_precise}")
    k, n = weight.shape

    def grid(name: str, t: torch.Tensor) -> torch.Tensor:
        """The (K, N) coefficient of each weight element."""
        if antiquant_group_size:
            groups = -(-k // antiquant_group_size)
            if t.shape != (groups, n):
                raise ValueError(f"torch_npu.{op}: per-group {name} must be (ceil(K / group_size), N) = "
                                 f"({groups}, {n}), not {tuple(t.shape)}")
            return t.float().repeat_interleave(antiquant_group_size, dim=0)[:k]
        if t.numel() == 1 and t.dim() in (1, 2):
            return t.float().reshape(1, 1)
        if tuple(t.shape) in ((n,), (1, n)):
            return t.float().reshape(1, n)
        raise ValueError(f"torch_npu.{op}: {name} must be (1,), (1, 1), ({n},) or (1, {n}) without "
                         f"antiquant_group_size, not {tuple(t.shape)}")

    if antiquant_group_size and (antiquant_group_size % 32 or not 32 <= antiquant_group_size <= k - 1):
        raise ValueError(f"torch_npu.{op}: antiquant_group_size must be a multiple of 32 in [32, K-1={k - 1}], "
                         f"not {antiquant_group_size}")
    w = weight.float()
    if antiquant_offset is not None:
        if antiquant_offset.dtype == torch.int32:
            raise _unsupported(op, "antiquant_offset.dtype", torch.int32, "antiquant_scale's dtype")
        if antiquant_offset.shape != antiquant_scale.shape or antiquant_offset.dtype != antiquant_scale.dtype:
            raise ValueError(f"torch_npu.{op}: antiquant_offset must have antiquant_scale's shape and dtype")
        w = w + grid("antiquant_offset", antiquant_offset)
    w = w * grid("antiquant_scale", antiquant_scale)
    y = x.float() @ w
    if bias is not None:
        if tuple(bias.shape) not in ((n,), (1, n), (1,)):
            raise ValueError(f"torch_npu.{op}: bias must be ({n},), (1, {n}) or (1,), not {tuple(bias.shape)}")
        y = y + bias.float().reshape(1, -1)
    return y.to(x.dtype)


# ---- MoE routing and sampling -------------------------------------------------------------------------------


def npu_moe_init_routing(x: torch.Tensor, row_idx: torch.Tensor, expert_idx: torch.Tensor,
                         active_num: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``npu_moe_init_routing(x, row_idx, expert_idx, active_num) -> (expanded_x, expanded_row_idx,
    expanded_expert_idx)``: groups the routed rows by expert (the doc):

    ``expanded_expert_idx, sorted_row_idx = keyValueSort(expert_idx, row_idx)`` (flattened, ascending by expert),
    ``expanded_row_idx[sorted_row_idx[i]] = i``, ``expanded_x[i] = x[sorted_row_idx[i] % NUM_ROWS]`` for the first
    ``min(NUM_ROWS, active_num) * K`` rows. Shapes as the meta registration: expanded_x
    (min(NUM_ROWS, active_num) * K, H) in x's dtype, the two index outputs (NUM_ROWS * K,) int32. Equal experts
    keep their flattened (row-major) order (a stable sort; the doc does not order ties, and a golden that routes
    back with ``npu_moe_finalize_routing`` does not depend on it). ``row_idx`` must be a permutation of
    ``0 .. NUM_ROWS*K-1`` (as ``npu_moe_gating_top_k_softmax`` returns it).
    """
    op = "npu_moe_init_routing"
    if x.dim() != 2:
        raise ValueError(f"torch_npu.{op}: x must be 2-D (NUM_ROWS, H), not {x.dim()}-D")
    if expert_idx.dim() != 2 or row_idx.shape != expert_idx.shape or expert_idx.shape[0] != x.shape[0]:
        raise ValueError(f"torch_npu.{op}: row_idx and expert_idx must both be (NUM_ROWS={x.shape[0]}, K), not "
                         f"{tuple(row_idx.shape)} and {tuple(expert_idx.shape)}")
    if active_num < 0:
        raise ValueError(f"torch_npu.{op}: active_num must be >= 0, not {active_num}")
    rows, k = expert_idx.shape
    flat_rows = row_idx.reshape(-1).long()
    if not torch.equal(torch.sort(flat_rows).values, torch.arange(rows * k)):
        raise ValueError(f"torch_npu.{op}: row_idx must be a permutation of 0..{rows * k - 1}")
    order = torch.sort(expert_idx.reshape(-1).long(), stable=True).indices
    sorted_rows = flat_rows[order]
    expanded_row_idx = torch.empty(rows * k, dtype=torch.int64)
    expanded_row_idx[sorted_rows] = torch.arange(rows * k)
    active = min(rows, active_num) * k
    expanded_x = x[sorted_rows[:active] % rows]
    return (expanded_x, expanded_row_idx.to(torch.int32),
            expert_idx.reshape(-1)[order].to(torch.int32))


def npu_moe_compute_expert_tokens(sorted_expert_for_source_row: torch.Tensor, num_expert: int) -> torch.Tensor:
    """``npu_moe_compute_expert_tokens(sorted_expert_for_source_row, num_expert)``: for each expert i, the binary
    search of i in the sorted expert list (the doc): the end of expert i's rows, i.e. the number of entries
    ``<= i`` (a cumulative count: the ``group_list`` a grouped matmul takes with ``group_list_type=0``).
    (num_expert,) in the input's dtype (the doc; the meta registration says int32, the only documented dtype)."""
    op = "npu_moe_compute_expert_tokens"
    src = sorted_expert_for_source_row
    if src.dim() != 1 or src.dtype != torch.int32:
        raise ValueError(f"torch_npu.{op}: sorted_expert_for_source_row must be 1-D int32, not "
                         f"{src.dim()}-D {src.dtype}")
    if not 0 < num_expert <= 2048:
        raise ValueError(f"torch_npu.{op}: num_expert must lie in (0, 2048], not {num_expert}")
    values = src.long()
    if src.numel() and (bool((values[1:] < values[:-1]).any()) or int(values.min()) < 0
                        or int(values.max()) >= num_expert):
        raise ValueError(f"torch_npu.{op}: sorted_expert_for_source_row must be non-decreasing in "
                         f"[0, {num_expert - 1}]")
    return torch.searchsorted(values, torch.arange(num_expert), right=True).to(src.dtype)


def npu_top_k_top_p(logits: torch.Tensor, p: torch.Tensor | None = None,
                    k: torch.Tensor | None = None) -> torch.Tensor:
    """``npu_top_k_top_p(logits, p=None, k=None)``: top-k then top-p filtering of each row (the doc's steps):

    sort the row ascending (stable); top-k: values below the k-th largest become -inf (ties with it are kept);
    top-p: ``softmax`` of the result, cumulated from the smallest, masks the positions whose cumulative
    probability is ``<= 1 - p`` (the largest one is always kept); the kept positions hold the original logits,
    put back in their original order. FP32 math, logits' shape and dtype (meta: ``empty_like``). Either filter is
    skipped when its argument is None; both None is invalid.
    """
    op = "npu_top_k_top_p"
    if logits.dim() != 2:
        raise ValueError(f"torch_npu.{op}: logits must be 2-D, not {logits.dim()}-D")
    if p is None and k is None:
        raise ValueError(f"torch_npu.{op}: p and k cannot both be None")
    batch, vocab = logits.shape
    values, indices = torch.sort(logits.float(), dim=-1, stable=True)
    if k is not None:
        if k.shape != (batch,) or k.dtype != torch.int32:
            raise ValueError(f"torch_npu.{op}: k must be int32 of shape ({batch},), not {k.dtype} {tuple(k.shape)}")
        kk = k.long()
        if batch and (int(kk.min()) < 1 or int(kk.max()) > min(1024, vocab)):
            raise ValueError(f"torch_npu.{op}: k must lie in [1, {min(1024, vocab)}]")
        kth = values.gather(1, (vocab - kk).unsqueeze(1))
        values = values.masked_fill(values < kth, float("-inf"))
    if p is not None:
        if p.shape != (batch,) or p.dtype != logits.dtype:
            raise ValueError(f"torch_npu.{op}: p must be of shape ({batch},) and logits' dtype, not "
                             f"{p.dtype} {tuple(p.shape)}")
        cumulative = torch.softmax(values, dim=-1).cumsum(dim=-1)
        drop = cumulative <= (1.0 - p.float()).unsqueeze(1)
        drop[:, -1] = False
        values = values.masked_fill(drop, float("-inf"))
    out = torch.empty_like(values).scatter_(1, indices, values)
    return out.to(logits.dtype)


# ---- matrix products and the fused AdamW step (s43) -----------------------------------------------------------

_FLOATS = (torch.float16, torch.bfloat16, torch.float32)


def npu_bmmV2(self: torch.Tensor, mat2: torch.Tensor, output_sizes: Sequence[int] = ()) -> torch.Tensor:  # noqa: N802
    """``npu_bmmV2(self, mat2, output_sizes)``: the (batched) product ``self @ mat2`` (the doc; ``output_sizes`` is
    only for the backward, and unused here). Float inputs multiply in float32 and cast to their dtype once (the cube
    unit accumulates in float32), int32 exactly in int64 then back to int32."""
    op = "npu_bmmV2"
    if self.dim() < 2 or mat2.dim() < 2:
        raise ValueError(f"torch_npu.{op}: both operands must be 2D or more, not {tuple(self.shape)} and "
                         f"{tuple(mat2.shape)}")
    if self.dtype != mat2.dtype:
        raise ValueError(f"torch_npu.{op}: the operands' dtypes differ ({self.dtype} and {mat2.dtype})")
    if self.dtype in _FLOATS:
        return torch.matmul(self.float(), mat2.float()).to(self.dtype)
    if self.dtype == torch.int32:
        return torch.matmul(self.long(), mat2.long()).to(torch.int32)
    raise _unsupported(op, "self.dtype", self.dtype, "float16, bfloat16, float32, int32")


def npu_linear(input: torch.Tensor, weight: torch.Tensor,  # noqa: A002 - vendor name
               bias: torch.Tensor | None = None) -> torch.Tensor:
    """``npu_linear(input, weight, bias=None)``: ``input @ weight.T + bias`` of a 2D ``input`` [m, k] and ``weight``
    [n, k] (the doc, meta: [m, n] in input's dtype); float32 math, cast once. The integer forms the doc lists are
    not implemented (their accumulation and output dtype are not documented)."""
    op = "npu_linear"
    if input.dim() != 2 or weight.dim() != 2:
        raise ValueError(f"torch_npu.{op}: input and weight must be 2D, not {tuple(input.shape)} and "
                         f"{tuple(weight.shape)}")
    if input.dtype not in (torch.float16, torch.float32):
        raise _unsupported(op, "input.dtype", input.dtype, "float16, float32")
    out = F.linear(input.float(), weight.float(), None if bias is None else bias.float())
    return out.to(input.dtype)


def npu_apply_adam_w(beta1_power: float, beta2_power: float, lr: float, weight_decay: float, beta1: float,
                     beta2: float, epsilon: float, grad: torch.Tensor, max_grad_norm: torch.Tensor | None = None,
                     amsgrad: bool | None = None, maximize: bool | None = None, *,
                     out: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``npu_apply_adam_w(beta1_power, beta2_power, lr, weight_decay, beta1, beta2, epsilon, grad, max_grad_norm,
    amsgrad, maximize, *, out=(var, m, v))``: one AdamW step in place on ``out`` (returned), the doc's formula with
    ``beta1_power = beta1^(t-1)``: g = -grad if maximize; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g;
    v = max(max_grad_norm, v) if amsgrad; var = var - lr / (sqrt(v / (1 - b2^t)) + eps) * m / (1 - b1^t)
    - lr * weight_decay * var. Float32 math, each output cast to its dtype once."""
    op = "npu_apply_adam_w"
    var, m, v = out
    for name, t in (("grad", grad), ("m", m), ("v", v)) + ((("max_grad_norm", max_grad_norm),) if amsgrad else ()):
        if t is None:
            raise ValueError(f"torch_npu.{op}: amsgrad=True needs max_grad_norm")
        if tuple(t.shape) != tuple(var.shape) or t.dtype != var.dtype:
            raise ValueError(f"torch_npu.{op}: {name} must have var's shape and dtype {tuple(var.shape)} "
                             f"{var.dtype}, not {tuple(t.shape)} {t.dtype}")
    if var.dtype not in _FLOATS:
        raise _unsupported(op, "var.dtype", var.dtype, "float16, bfloat16, float32")
    g = -grad.float() if maximize else grad.float()
    m32 = beta1 * m.float() + (1 - beta1) * g
    v32 = beta2 * v.float() + (1 - beta2) * g * g
    if amsgrad:
        assert max_grad_norm is not None  # checked above
        v32 = torch.maximum(max_grad_norm.float(), v32)
    m_hat = m32 / (1 - beta1_power * beta1)
    v_hat = v32 / (1 - beta2_power * beta2)
    theta = var.float()
    new = theta - lr / (v_hat.sqrt() + epsilon) * m_hat - lr * weight_decay * theta
    var.copy_(new)
    m.copy_(m32)
    v.copy_(v32)
    return var, m, v


OPS: dict[str, Any] = {f.__name__: f for f in (
    npu_add_layer_norm, npu_add_rms_norm, npu_anti_quant, npu_apply_adam_w, npu_apply_rotary_pos_emb, npu_bmmV2, npu_broadcast,
    npu_confusion_transpose, npu_dtype_cast, npu_dynamic_quant, npu_fast_gelu, npu_fused_infer_attention_score,
    npu_geglu, npu_gelu, npu_gelu_mul, npu_gemma_rms_norm, npu_grouped_matmul, npu_incre_flash_attention,
    npu_interleave_rope, npu_layer_norm_eval, npu_linear, npu_moe_compute_expert_tokens, npu_moe_finalize_routing,
    npu_moe_gating_top_k_softmax, npu_moe_init_routing, npu_prompt_flash_attention, npu_quant_matmul, npu_quantize,
    npu_rms_norm, npu_rms_norm_backward, npu_rotary_mul, npu_scatter_nd_update, npu_scatter_nd_update_,
    npu_scatter_pa_kv_cache, npu_silu, npu_sort_v2, npu_swiglu, npu_top_k_top_p, npu_transpose,
    npu_weight_quant_batchmatmul,
)}
"""The operators the stand-in exports, by their torch_npu name."""
