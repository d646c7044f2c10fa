"""A seventeenth corpus of single-line bugs in the harder real gym operators (session 45), planted at test time
(nothing of the vendor's code is copied here; ``GymBug`` format of tests/bisect/gym_corpus.py, lines are the vendor
file's).

Written before reading runtime/bisect's rules for them, in the operators the session-44 helper called hard
(gated_delta_rule, flash_attention_score_grad) and four others with running state or several outputs
(gqa_decode_attn, sum_lstm, apply_adam_w_v2; mhc_sinkhorn: see below), each at its ``runs.tsv`` size, on lines or of
kinds no earlier corpus plants there, as a model slips (the kinds the brief names):

- a wrong transpose: gated_delta_rule's ``qkt`` as ``k @ q^T``; the dK/dV pass' ``dV = P^T dY`` without ``a_trans``;
- a mask sign: gated_delta_rule's inclusive mask built as ``eye - strict``; the softmax recompute ``exp(max - s)``;
- a wrong operand that drops a scale: gated_delta_rule's state update decaying the beta-scaled key ``k_b``;
- a stale carry: the dQ accumulator overwritten (``dq_acc[:] = dq_tile``); AdamW's bias correction of the old
  moment (``m_tile / bc1``); LSTM's cell update without the forget term (``prev_cell + i * g``);
- an off-by-one tail: the dQ pass' valid column count ``s - s2 * S_TILE - 1``;
- an accumulation order: the online softmax's two rescale factors swapped (``oi * beta + o_ij * alpha``);
- a wrong axis: GQA's query heads grouped ``[GROUPS, Nkv]`` then transposed (interleaved heads for contiguous ones),
  the LSTM RMSNorm's mean divided by ``x.shape[0]`` (the batch tile, 1) instead of the hidden size;
- swapped constants and the wrong value written: AdamW's ``m * (1 - b1)``; the update written where the new weight
  was computed.

mhc_sinkhorn has no row: its SPEC runs one [8, 4, 4] tile, so a tail or tile-offset bug changes nothing, and every
other statement of its 40 lines is planted by an earlier corpus (or its change - an ``eps`` of 1e-6 moved - lies
inside the tolerance).

Scored by ``bench/bisect_gym_corpus.py --corpus seventeenth`` and ``tests/bisect/test_seventeenth_corpus_s45.py``.
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # --- apply_adam_w_v2: fp32, [7168, 2048] ---
    GymBug("g17_adam_b1_swapped", "apply_adam_w_v2", "swapped_constants", 78, "pypto.mul(m_tile, beta1)",
           "pypto.mul(m_tile, one_m_b1)"),
    GymBug("g17_adam_mhat_stale", "apply_adam_w_v2", "stale_carry", 85, "pypto.div(m_new, bc1,",
           "pypto.div(m_tile, bc1,"),
    GymBug("g17_adam_out_update", "apply_adam_w_v2", "wrong_value_written", 95, "pypto.assemble(w_new,",
           "pypto.assemble(update,"),
    # --- sum_lstm: [32, 4 x 4096] fp16, helpers rms_norm_pure / gelu_activation_core ---
    GymBug("g17_lstm_forget_dropped", "sum_lstm", "stale_carry", 181, "pypto.add(term1, term2)",
           "pypto.add(prev_cell_tile, term2)"),
    GymBug("g17_lstm_mean_axis0", "sum_lstm", "wrong_axis", 59, "1.0 / x.shape[-1]", "1.0 / x.shape[0]"),
    # --- gqa_decode_attn: online softmax over 64-wide KV tiles, 4 KV heads x 8 query heads ---
    GymBug("g17_gqa_rescale_swap", "gqa_decode_attn", "accumulation_order", 158,
           "pypto.add(pypto.mul(oi, alpha), pypto.mul(o_ij, beta))",
           "pypto.add(pypto.mul(oi, beta), pypto.mul(o_ij, alpha))"),
    GymBug("g17_gqa_group_interleave", "gqa_decode_attn", "wrong_axis", 98, "pypto.reshape(q, [Nkv, GROUPS, D])",
           "pypto.transpose(pypto.reshape(q, [GROUPS, Nkv, D]), 0, 1)"),
    # --- flash_attention_score_grad: dQ pass (s1 x s2) and dK/dV pass (s2 x s1), helper compute_tile ---
    GymBug("g17_fag_dq_stale", "flash_attention_score_grad", "stale_carry", 318, "dq_acc[:] = dq_acc + dq_tile",
           "dq_acc[:] = dq_tile"),
    GymBug("g17_fag_dv_no_trans", "flash_attention_score_grad", "wrong_transpose", 366,
           "pypto.matmul(p_bf16, dy_i, pypto.DT_FP32, a_trans=True)", "pypto.matmul(p_bf16, dy_i, pypto.DT_FP32)"),
    GymBug("g17_fag_p_sign", "flash_attention_score_grad", "mask_sign", 45, "pypto.exp(pypto.sub(s_ij, smax_i))",
           "pypto.exp(pypto.sub(smax_i, s_ij))"),
    GymBug("g17_fag_dq_tail", "flash_attention_score_grad", "off_by_one_tail", 299,
           "(s - s2_idx * S_TILE).min(S_TILE)", "(s - s2_idx * S_TILE - 1).min(S_TILE)"),
    # --- gated_delta_rule: one 128-row chunk per head (S = 16 padded), 32 heads ---
    GymBug("g17_gdr_qkt_transposed", "gated_delta_rule", "wrong_transpose", 174,
           "pypto.matmul(q_s, k_n, pypto.DT_FP32, b_trans=True)", "pypto.matmul(k_n, q_s, pypto.DT_FP32, b_trans=True)"),
    GymBug("g17_gdr_mask_sign", "gated_delta_rule", "mask_sign", 148, "pypto.add(eye_LL, lower_strict_LL)",
           "pypto.sub(eye_LL, lower_strict_LL)"),
    GymBug("g17_gdr_kdecay_kb", "gated_delta_rule", "wrong_operand_scale", 188,
           "pypto.mul(k_n, pypto.exp(g_last_minus_gc))", "pypto.mul(k_b, pypto.exp(g_last_minus_gc))"),
]
