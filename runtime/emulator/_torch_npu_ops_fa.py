"""``torch_npu.npu_fusion_attention`` (training FlashAttention, forward) and ``npu_scaled_masked_softmax`` on the CPU.

Why: s43 left both ``NotProvidedError``: a golden that calls them stopped at its first line under the emulator. A
golden is only worth comparing against when it is the vendor's operator, so both follow torch_npu's documented
interface. Source of the signatures and semantics (read, nothing copied; torch_npu is not installed on this
machine, so they come from the torch_npu 2.x op-plugin sources and docs as known to the author - the
``op_plugin_functions.yaml`` schema, ``_op_plugin_docs.py`` and the meta registrations of
``op_plugin/meta/_meta_registrations.py`` - and are pinned by tests/emulator/test_torch_npu_ops_s44.py):

* ``npu_fusion_attention(query, key, value, head_num, input_layout, pse=None, padding_mask=None, atten_mask=None,
  scale=1.0, keep_prob=1.0, pre_tockens=2147483647, next_tockens=2147483647, inner_precise=0, prefix=None,
  actual_seq_qlen=None, actual_seq_kvlen=None, sparse_mode=0, gen_mask_parallel=True, sync=False) ->
  (attention_out, softmax_max, softmax_sum, softmax_out, seed, offset, numels)`` (the vendor's spelling
  ``tockens``). The meta registration's shapes: ``attention_out`` like ``query`` (with value's D), ``softmax_max``
  and ``softmax_sum`` FP32 ``(B, N, S1, 8)`` (TND: ``(T, N, 8)``; the device repeats each row's value over the
  8 lanes), ``softmax_out`` an empty tensor of query's dtype, then three ints. ``softmax_max`` is the row max of
  the scaled, masked scores and ``softmax_sum`` the row sum of ``exp(s - max)`` - what the backward
  (``npu_fusion_attention_grad``, the gym's flash_attention_score_grad) recomputes ``p`` from.
* ``npu_scaled_masked_softmax(x, mask, scale=1.0, fixed_triu_mask=False) -> y``: ``softmax(masked_fill(x * scale,
  mask, -10000))`` over the last dim, in x's dtype; ``fixed_triu_mask`` makes the op build the upper-triangle
  causal mask itself (``mask`` is then not read). The masked value -10000 is the Megatron fused-softmax convention
  the operator reproduces and the value of op-plugin's CPU reference in its unit test; the doc does not state it.

Computed in float32 (float64 is not what the device does) and cast once to the output dtype, as a CPU torch
reference written ``.float()`` ... ``.to(dtype)`` rounds. Dropout (``keep_prob < 1``) is not emulated: its mask comes
from the device's Philox stream, which the CPU cannot reproduce, so a result would not be the device's; it raises one
``EMU_UNSUPPORTED`` at the script's line. Other modes not implemented raise ``NotImplementedError`` naming the
argument (`_unsupported`), invalid inputs ``ValueError``.
"""

from __future__ import annotations

from typing import Any

import torch

from runtime.emulator._errors import EmulatorUnsupported
from runtime.emulator._location import user_location
from runtime.emulator._torch_npu_ops import _INT_MAX, _unsupported

__all__ = ["OPS", "npu_fusion_attention", "npu_fusion_attention_grad", "npu_scaled_masked_softmax"]

_MASKED_SOFTMAX_FILL = -10000.0
"""What ``npu_scaled_masked_softmax`` writes at a masked score (the module doc says where it comes from)."""

_FA_LAYOUTS = ("BSH", "SBH", "BSND", "BNSD", "TND")
_FA_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def _heads_first(op: str, name: str, t: torch.Tensor, layout: str, heads: int | None, d: int | None) -> torch.Tensor:
    """``t`` in ``layout`` as FP32 (B, N, S, D) (TND: (1, N, T, D)). ``heads`` (query) or the head dim ``d``
    (key/value, whose head count follows from it) splits an H."""
    want = 3 if layout in ("BSH", "SBH", "TND") else 4
    if t.dim() != want:
        raise ValueError(f"torch_npu.{op}: {name} must be {want}-D for input_layout {layout}, not {t.dim()}-D")
    t = t.float()
    if layout in ("BSH", "SBH"):
        if layout == "SBH":
            t = t.transpose(0, 1)
        h = t.shape[2]
        split = heads if heads is not None else (h // d if d else 0)
        if split <= 0 or h % split:
            raise ValueError(f"torch_npu.{op}: {name}'s H={h} does not split into "
                             f"{heads if heads is not None else f'heads of D={d}'}")
        return t.unflatten(2, (split, h // split)).permute(0, 2, 1, 3)
    if layout == "BSND":
        return t.permute(0, 2, 1, 3)
    if layout == "TND":
        return t.permute(1, 0, 2).unsqueeze(0)
    return t


def _to_layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    """(B, N, S, D) back to ``layout``."""
    if layout in ("BSH", "SBH"):
        t = t.permute(0, 2, 1, 3).flatten(2)
        return t.transpose(0, 1) if layout == "SBH" else t
    if layout == "BSND":
        return t.permute(0, 2, 1, 3)
    if layout == "TND":
        return t.squeeze(0).permute(1, 0, 2)
    return t


def _cumulative(op: str, name: str, value: Any, total: int) -> list[tuple[int, int]]:
    """TND's ``actual_seq_qlen`` / ``actual_seq_kvlen``: cumulative ends (the doc's ``[2, 5, 9]`` for lengths 2, 3,
    4), the last one the token count; as (start, end) per sequence."""
    if value is None:
        raise ValueError(f"torch_npu.{op}: input_layout TND needs {name} (the cumulative sequence ends)")
    ends = [int(v) for v in (value.tolist() if isinstance(value, torch.Tensor) else value)]
    starts = [0, *ends[:-1]]
    if not ends or any(e < s for s, e in zip(starts, ends, strict=True)) or ends[-1] != total:
        raise ValueError(f"torch_npu.{op}: {name}={ends} must be non-decreasing cumulative ends reaching T={total}")
    return list(zip(starts, ends, strict=True))


def _blocked(op: str, sparse_mode: int, s1: int, s2: int, pre: int, nxt: int) -> torch.Tensor | None:
    """The positions ``sparse_mode`` masks in an (s1, s2) score block (True = not computed), None for none."""
    qi = torch.arange(s1).unsqueeze(1)
    kj = torch.arange(s2).unsqueeze(0)
    if sparse_mode == 0:
        if pre >= s1 - 1 and nxt >= s2 - 1:
            return None
        if s1 != s2:  # where the band sits when S1 != S2 in mode 0 is not documented
            raise _unsupported(op, "pre_tockens/next_tockens", (pre, nxt),
                               "the defaults, or S1 == S2, with sparse_mode=0 (sparse_mode=4 for a band)")
        return (kj > qi + nxt) | (kj < qi - pre)
    if sparse_mode == 1:
        return None
    if sparse_mode == 2:  # leftUpCausal
        return kj > qi
    if sparse_mode == 3:  # rightDownCausal: query i sees keys up to i + S2 - S1
        return kj > qi + (s2 - s1)
    diag = kj - qi - (s2 - s1)  # 4: band around the right-down diagonal
    return (diag > nxt) | (diag < -pre)


def _mask_bnss(op: str, mask: torch.Tensor, batch: int, heads: int, s1: int, s2: int) -> torch.Tensor:
    """An explicit atten_mask as bool (B|1, N|1, S1, S2), True = not computed: (S1, S2), (B|1, 1|N, S1, S2)."""
    if mask.dtype not in (torch.bool, torch.uint8, torch.int8):
        raise ValueError(f"torch_npu.{op}: atten_mask must be bool or uint8 (1 = not computed), not {mask.dtype}")
    m = mask != 0
    if m.dim() == 2:
        m = m[None, None]
    if m.dim() != 4 or m.shape[0] not in (1, batch) or m.shape[1] not in (1, heads) or tuple(m.shape[2:]) != (s1, s2):
        raise ValueError(f"torch_npu.{op}: atten_mask shape {tuple(mask.shape)} is none of (S1, S2), (B, N, S1, S2), "
                         f"(B, 1, S1, S2), (1, 1, S1, S2) for B={batch}, N={heads}, S1={s1}, S2={s2}")
    return m


def _dropout_unsupported(op: str, keep_prob: float) -> EmulatorUnsupported:
    file, line = user_location()
    return EmulatorUnsupported(
        "EMU_UNSUPPORTED", f"torch_npu.{op}: keep_prob={keep_prob!r} (dropout) is not emulated: the device draws "
        "the dropout mask from its own Philox stream (seed/offset of the NPU generator), which the CPU cannot "
        "reproduce, so no result here would be the device's; run with keep_prob=1.0", file=file, line=line, op=op)


def npu_fusion_attention(
        query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, head_num: int, input_layout: str,
        pse: torch.Tensor | None = None, padding_mask: torch.Tensor | None = None,
        atten_mask: torch.Tensor | None = None, scale: float = 1.0, keep_prob: float = 1.0,
        pre_tockens: int = _INT_MAX, next_tockens: int = _INT_MAX, inner_precise: int = 0, prefix: Any = None,
        actual_seq_qlen: Any = None, actual_seq_kvlen: Any = None, sparse_mode: int = 0,
        gen_mask_parallel: bool = True, sync: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int, int, int]:
    """``softmax(scale * q k^T + mask) v`` per batch and head (the module doc has the interface).

    Implemented: float16 / bfloat16 / float32 inputs; layouts BSH, SBH, BSND, BNSD and TND (sequences packed along
    T, cut by the cumulative ``actual_seq_qlen`` / ``actual_seq_kvlen``); GQA/MQA (key/value with fewer heads,
    ``head_num`` a multiple of theirs); ``atten_mask`` (bool/uint8, 1 = not computed) of shape (S1, S2), (B, N, S1,
    S2), (B, 1, S1, S2) or (1, 1, S1, S2) with ``sparse_mode`` 0 (plus a ``pre_tockens``/``next_tockens`` band when
    S1 == S2) and 1; ``sparse_mode`` 2 (leftUpCausal), 3 (rightDownCausal), 4 (band around the right-down
    diagonal), which take the compressed (2048, 2048) mask as the device does and mask analytically - per sequence
    under TND. A row with nothing to attend to is 0 with softmax_max -inf and softmax_sum 0 (a choice: the doc is
    silent). ``seed``/``offset`` are 0 and ``numels`` is B*N*S1*S2 (TND: N * sum(S1_i * S2_i)), the element count
    op-plugin's kernel sizes its dropout mask with. ``inner_precise``, ``gen_mask_parallel``, ``sync`` change no
    value on the CPU. Not implemented (one clear error each): dropout (``EMU_UNSUPPORTED``), ``pse``,
    ``padding_mask``, ``prefix`` and sparse modes 5-8, an explicit mask under TND."""
    op = "npu_fusion_attention"
    if not 0.0 < float(keep_prob) <= 1.0 and float(keep_prob) != 0.0:
        raise ValueError(f"torch_npu.{op}: keep_prob must lie in [0, 1], not {keep_prob}")
    if float(keep_prob) != 1.0:
        raise _dropout_unsupported(op, keep_prob)
    for name, given in (("pse", pse), ("padding_mask", padding_mask), ("prefix", prefix)):
        if given is not None:
            raise _unsupported(op, name, "<given>", "None (position encodings, padding masks and the prefix modes "
                               "are not implemented)")
    if input_layout not in _FA_LAYOUTS:
        raise ValueError(f"torch_npu.{op}: input_layout must be one of {', '.join(_FA_LAYOUTS)}, not "
                         f"{input_layout!r}")
    if sparse_mode not in (0, 1, 2, 3, 4):
        raise _unsupported(op, "sparse_mode", sparse_mode, "0, 1, 2, 3, 4")
    if query.dtype not in _FA_DTYPES or key.dtype != query.dtype or value.dtype != query.dtype:
        raise ValueError(f"torch_npu.{op}: query/key/value must share one of float16, bfloat16, float32, not "
                         f"{query.dtype}/{key.dtype}/{value.dtype}")
    if int(head_num) <= 0:
        raise ValueError(f"torch_npu.{op}: head_num must be > 0, not {head_num}")
    if sparse_mode in (2, 3, 4) and atten_mask is None:
        raise ValueError(f"torch_npu.{op}: sparse_mode={sparse_mode} needs the compressed (2048, 2048) atten_mask")
    tnd = input_layout == "TND"
    if not tnd and (actual_seq_qlen is not None or actual_seq_kvlen is not None):
        raise _unsupported(op, "actual_seq_qlen/actual_seq_kvlen", "<given>", "None unless input_layout is TND")
    if tnd and atten_mask is not None and sparse_mode in (0, 1):
        raise _unsupported(op, "atten_mask", "<explicit mask>", "None, or sparse_mode 2/3/4, with input_layout TND")
    heads = int(head_num)
    q = _heads_first(op, "query", query, input_layout, heads if input_layout != "TND" else None, None)
    if q.shape[1] != heads:
        raise ValueError(f"torch_npu.{op}: query has {q.shape[1]} heads, head_num is {heads}")
    d = q.shape[-1]
    k = _heads_first(op, "key", key, input_layout, None, d)
    v = _heads_first(op, "value", value, input_layout, None, d if input_layout not in ("BSH", "SBH") else
                     (value.shape[2] // k.shape[1] if k.shape[1] else None))
    kv_heads = k.shape[1]
    if k.shape[-1] != d or k.shape[:3] != v.shape[:3] or k.shape[0] != q.shape[0] or heads % kv_heads:
        raise ValueError(f"torch_npu.{op}: key {tuple(key.shape)} / value {tuple(value.shape)} do not fit query "
                         f"{tuple(query.shape)} with head_num={heads} (same B, D, and head_num a multiple of "
                         "their heads)")
    batch, _, s1_all, _ = q.shape
    s2_all = k.shape[2]
    if tnd:
        q_cuts = _cumulative(op, "actual_seq_qlen", actual_seq_qlen, s1_all)
        kv_cuts = _cumulative(op, "actual_seq_kvlen", actual_seq_kvlen, s2_all)
        if len(q_cuts) != len(kv_cuts):
            raise ValueError(f"torch_npu.{op}: actual_seq_qlen and actual_seq_kvlen name {len(q_cuts)} and "
                             f"{len(kv_cuts)} sequences")
        blocks = [(0, qc, kc) for qc, kc in zip(q_cuts, kv_cuts, strict=True)]
    else:
        blocks = [(b, (0, s1_all), (0, s2_all)) for b in range(batch)]
    mask = None
    if atten_mask is not None and sparse_mode in (0, 1):
        mask = _mask_bnss(op, atten_mask, batch, heads, s1_all, s2_all)
    group = heads // kv_heads
    out = torch.zeros(batch, heads, s1_all, v.shape[-1])
    row_max = torch.zeros(batch, heads, s1_all, 1)
    row_sum = torch.zeros(batch, heads, s1_all, 1)
    numels = 0
    for b, (q0, q1), (k0, k1) in blocks:
        s1, s2 = q1 - q0, k1 - k0
        numels += heads * s1 * s2
        if s1 == 0:
            continue
        blocked = _blocked(op, sparse_mode, s1, s2, int(pre_tockens), int(next_tockens))
        if mask is not None:
            mb = mask[b if mask.shape[0] > 1 else 0]
            blocked = mb if blocked is None else mb | blocked
        # (N, s1, s2) scores: each query head against its key/value group's head
        kb = k[b, :, k0:k1].repeat_interleave(group, dim=0)
        vb = v[b, :, k0:k1].repeat_interleave(group, dim=0)
        s = float(scale) * (q[b, :, q0:q1] @ kb.transpose(-1, -2))
        if blocked is not None:
            s = s.masked_fill(blocked, float("-inf"))
        m = s.amax(dim=-1, keepdim=True) if s2 else torch.full((heads, s1, 1), float("-inf"))
        dead = torch.isneginf(m)
        p = torch.exp(s - torch.where(dead, torch.zeros_like(m), m))
        total = p.sum(dim=-1, keepdim=True)
        out[b, :, q0:q1] = torch.where(dead, torch.zeros(1), (p / torch.where(dead, torch.ones(1), total)) @ vb)
        row_max[b, :, q0:q1] = m
        row_sum[b, :, q0:q1] = total
    attention_out = _to_layout(out, input_layout).to(query.dtype)
    if tnd:  # (T, N, 8)
        softmax_max = row_max[0].permute(1, 0, 2).expand(-1, -1, 8).contiguous()
        softmax_sum = row_sum[0].permute(1, 0, 2).expand(-1, -1, 8).contiguous()
    else:
        softmax_max = row_max.expand(-1, -1, -1, 8).contiguous()
        softmax_sum = row_sum.expand(-1, -1, -1, 8).contiguous()
    return attention_out, softmax_max, softmax_sum, torch.empty(0, dtype=query.dtype), 0, 0, numels


def npu_scaled_masked_softmax(x: torch.Tensor, mask: torch.Tensor, scale: float = 1.0,
                              fixed_triu_mask: bool = False) -> torch.Tensor:
    """``softmax(masked_fill(x * scale, mask, -10000), dim=-1)`` in FP32, returned in x's dtype (the module doc).

    ``x``: float16 / bfloat16 / float32, 4-D (B, N, S1, S2) as documented; ``mask``: bool (True = masked), its
    shape broadcastable to x's; ``fixed_triu_mask=True`` masks ``j > i`` instead (mask not read)."""
    op = "npu_scaled_masked_softmax"
    if x.dtype not in _FA_DTYPES:
        raise ValueError(f"torch_npu.{op}: x must be float16, bfloat16 or float32, not {x.dtype}")
    if x.dim() != 4:
        raise ValueError(f"torch_npu.{op}: x must be 4-D (B, N, S1, S2), not {x.dim()}-D")
    if fixed_triu_mask:
        s1, s2 = x.shape[-2:]
        blocked = torch.ones(s1, s2, dtype=torch.bool).triu(1)
    else:
        if mask is None:
            raise ValueError(f"torch_npu.{op}: mask is required unless fixed_triu_mask=True")
        if mask.dtype != torch.bool:
            raise ValueError(f"torch_npu.{op}: mask must be bool (True = masked), not {mask.dtype}")
        try:
            torch.broadcast_shapes(tuple(mask.shape), tuple(x.shape))
        except RuntimeError:
            raise ValueError(f"torch_npu.{op}: mask shape {tuple(mask.shape)} does not broadcast to x's "
                             f"{tuple(x.shape)}") from None
        blocked = mask
    y = (x.float() * float(scale)).masked_fill(blocked, _MASKED_SOFTMAX_FILL)
    return torch.softmax(y, dim=-1).to(x.dtype)


def npu_fusion_attention_grad(
        query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, dy: torch.Tensor, head_num: int,
        input_layout: str, *, pse: torch.Tensor | None = None, padding_mask: torch.Tensor | None = None,
        atten_mask: torch.Tensor | None = None, softmax_max: torch.Tensor | None = None,
        softmax_sum: torch.Tensor | None = None, softmax_in: torch.Tensor | None = None,
        attention_in: torch.Tensor | None = None, scale_value: float = 1.0, keep_prob: float = 1.0,
        pre_tockens: int = _INT_MAX, next_tockens: int = _INT_MAX, inner_precise: int = 0, seed: int = 0,
        offset: int = 0, numels: int = 0, prefix: Any = None, actual_seq_qlen: Any = None,
        actual_seq_kvlen: Any = None, sparse_mode: int = 0, gen_mask_parallel: bool = True, sync: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(dq, dk, dv, dpse)`` of :func:`npu_fusion_attention`'s output for the upstream gradient ``dy`` (s45).

    Interface: op-plugin's ``npu_fusion_attention_grad`` schema (everything after ``input_layout`` keyword-only;
    ``scale_value`` where the forward says ``scale``). The gradients are of the forward this module computes (same
    layouts, GQA, masks and sparse modes, same refusals), taken by torch autograd in float32 and cast once to
    query's dtype - the exact-math gradient the device's backward approximates. The device recomputes the
    probabilities from the forward's ``softmax_max`` / ``softmax_sum`` and ``attention_in``; here they are accepted
    and not read (recomputed from q, k, v in float32), so a caller passing the device forward's rounded statistics
    gets the gradient of the unrounded forward (differences at the dtype's rounding). ``dpse`` is an empty tensor of
    query's dtype (``pse`` is not implemented, as in the forward). Dropout (``keep_prob < 1``) raises one
    ``EMU_UNSUPPORTED`` as in the forward: its mask is the device's Philox stream."""
    op = "npu_fusion_attention_grad"
    if float(keep_prob) != 1.0:
        raise _dropout_unsupported(op, keep_prob)
    if dy.shape != query.shape[:-1] + value.shape[-1:] and dy.shape != query.shape:
        raise ValueError(f"torch_npu.{op}: dy {tuple(dy.shape)} must have the attention output's shape (query "
                         f"{tuple(query.shape)} with value's last dim)")
    with torch.enable_grad():
        q, k, v = (t.detach().float().requires_grad_(True) for t in (query, key, value))
        out = npu_fusion_attention(q, k, v, head_num, input_layout, pse=pse, padding_mask=padding_mask,
                                   atten_mask=atten_mask, scale=scale_value, keep_prob=1.0, pre_tockens=pre_tockens,
                                   next_tockens=next_tockens, inner_precise=inner_precise, prefix=prefix,
                                   actual_seq_qlen=actual_seq_qlen, actual_seq_kvlen=actual_seq_kvlen,
                                   sparse_mode=sparse_mode)[0]
        dq, dk, dv = torch.autograd.grad(out, (q, k, v), dy.detach().float().reshape(out.shape), allow_unused=True)
    grads = tuple(torch.zeros_like(t, dtype=torch.float32) if g is None else g for g, t in
                  ((dq, query), (dk, key), (dv, value)))
    return (grads[0].to(query.dtype), grads[1].to(query.dtype), grads[2].to(query.dtype),
            torch.empty(0, dtype=query.dtype))


OPS: dict[str, Any] = {f.__name__: f for f in (npu_fusion_attention, npu_fusion_attention_grad,
                                                npu_scaled_masked_softmax)}
"""This module's operators, by their torch_npu name (merged into the stand-in's by ``_torch_npu.build_module``)."""
