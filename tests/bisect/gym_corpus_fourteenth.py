"""A fourteenth corpus of single-line bugs in the real gym operators (session 42), written before reading
runtime/bisect's rules for it, in the five largest operators (flash_attention_score_grad, gated_delta_rule,
gqa_decode_attn, sum_lstm, mhc_sinkhorn), mostly on lines none of the thirteen corpora touches.

Every gym operator that can be scored as imported is used by an earlier corpus; the four that are not
(gather_pa_kv_cache, quant_batch_matmul, bn_training_reduce, swiglu_mlp) still cannot be (correlated inputs of 361 MB
caches, a host-computed scale verify refuses, no golden function: tests/gym/test_gym_operators.py), so "not used
before" is read as regions of the large kernels no corpus planted in: flash_attention_score_grad's dK/dV pass (its
``ao`` view, its loop bound, its ``dk`` scale) and the helper's ``dP`` product, the dQ pass' ``ds`` cast;
gqa_decode_attn's ``p`` cast, its one-trip output and the running sum's write-back; gated_delta_rule's query scale and
decay mask; sum_lstm's GELU helper's operand, the helper RMSNorm's reduction axis, the cell write's cast and the batch
loop's bound; mhc_sinkhorn's trip count and first column normalisation.

Written as a model slips, at the places the brief names, not aimed at any rule:

- a wrong offset in a view in the middle of a two-level loop nest (the dK/dV pass' ``ao_i`` at the outer tile's
  offset ``s2_off``), a copy-paste operand inside a helper called from both passes (``dP = dY @ K^T``);
- a tail bug ``(t + 3) // s`` (mhc_sinkhorn's tile count), a loop bound one short on the last of two passes
  (``s_loop - 1`` in the dK/dV pass) and on the batch loop;
- a reduction over the wrong axis inside a helper (the RMSNorm's mean of squares over rows of a one-row tile);
- a missing scale (``dk`` without ``scale_value``, the query without ``1/sqrt(D)``), a missing normalisation in a
  one-trip branch (``o_ij`` written where ``o_final`` was computed);
- casts to the wrong dtype (``ds`` to FP16 before a BF16 matmul, ``p`` to FP16 into a BF16 buffer, the cell state
  to BF16 into an FP16 output);
- a swapped division (``col_sum / (comb_flag + eps)``), a stale running state (``li[:] = l_ij``), a copy-paste
  operand in a helper (``sigmoid(x)`` for ``sigmoid(x_scaled)``), the strict lower mask for the inclusive one.

``GymBug`` format (tests/bisect/gym_corpus.py); lines are the vendor file's. ``bench/bisect_gym_corpus.py --corpus
fourteenth`` scores them (materialized with ``gym_corpus_fresh.materialize``, which prepares
flash_attention_score_grad's correlated inputs).
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # --- flash_attention_score_grad: b x heads x (dQ pass: s1 x s2 | dK/dV pass: s2 x s1), helper compute_tile ---
    GymBug("f14_fag_dkv_ao_outer", "flash_attention_score_grad", "view_offset_mid_kernel", 345,
           "pypto.view(ao_2d, [S_TILE, HEAD_DIM], [s1_off, 0]", "pypto.view(ao_2d, [S_TILE, HEAD_DIM], [s2_off, 0]"),
    GymBug("f14_fag_dk_noscale", "flash_attention_score_grad", "missing_scale", 378,
           "pypto.cast(pypto.mul(dk_acc, scale_value), pypto.DT_BF16)", "pypto.cast(dk_acc, pypto.DT_BF16)"),
    GymBug("f14_fag_dkv_loop_short", "flash_attention_score_grad", "last_pass_loop_bound", 337,
           "pypto.loop(s_loop, name=\"LOOP_s1_dkv\"", "pypto.loop(s_loop - 1, name=\"LOOP_s1_dkv\""),
    GymBug("f14_fag_dq_ds_fp16", "flash_attention_score_grad", "cast_wrong_dtype", 309,
           "pypto.cast(ds_ij, pypto.DT_BF16)", "pypto.cast(ds_ij, pypto.DT_FP16)"),
    GymBug("f14_fag_helper_dp_k", "flash_attention_score_grad", "helper_copy_paste_operand", 51,
           "pypto.matmul(dy_i, v_j,", "pypto.matmul(dy_i, k_j,"),
    # --- gqa_decode_attn: online softmax over KV tiles ---
    GymBug("f14_gqa_p_fp16", "gqa_decode_attn", "cast_wrong_dtype", 139, "pypto.cast(p_ij, pypto.DT_BF16)",
           "pypto.cast(p_ij, pypto.DT_FP16)"),
    GymBug("f14_gqa_li_stale", "gqa_decode_attn", "stale_state", 164, "li[:] = li_new", "li[:] = l_ij"),
    GymBug("f14_gqa_one_trip_unnormed", "gqa_decode_attn", "missing_normalisation", 148,
           "pypto.cast(o_final, pypto.DT_BF16)", "pypto.cast(o_ij, pypto.DT_BF16)"),
    # --- gated_delta_rule: one 128-row chunk per head (S = 16 padded) ---
    GymBug("f14_gdr_q_noscale", "gated_delta_rule", "missing_scale", 142, "pypto.mul(q_n, inv_sqrt_D)", "q_n"),
    GymBug("f14_gdr_mask_strict", "gated_delta_rule", "copy_paste_operand", 151,
           "pypto.mul(decay_pre, lower_incl_LL)", "pypto.mul(decay_pre, lower_strict_LL)"),
    GymBug("f14_gdr_pad_tail", "gated_delta_rule", "tail_bound", 243, "(L - S % L) % L", "(L - S % 16) % L"),
    # --- sum_lstm: helpers rms_norm_pure / gelu_activation_core, each called twice per row ---
    GymBug("f14_lstm_gelu_sig_x", "sum_lstm", "helper_copy_paste_operand", 87, "pypto.sigmoid(x_scaled)",
           "pypto.sigmoid(x)"),
    GymBug("f14_lstm_rms_axis", "sum_lstm", "helper_wrong_axis", 60, "pypto.sum(y, -1, keepdim=True)",
           "pypto.sum(y, 0, keepdim=True)"),
    GymBug("f14_lstm_c_bf16", "sum_lstm", "cast_wrong_dtype", 182, "pypto.cast(c_new_tile, x_dtype)",
           "pypto.cast(c_new_tile, pypto.DT_BF16)"),
    GymBug("f14_lstm_loop_short", "sum_lstm", "loop_bound", 122, "0, batch_size, 1,", "0, batch_size - 1, 1,"),
    # --- mhc_sinkhorn: [8, 4, 4] in one 32-row tile ---
    GymBug("f14_mhc_tail_count", "mhc_sinkhorn", "tail_bound", 66, "(t+s-1)//s", "(t+3)//s"),
    GymBug("f14_mhc_col_div_swap", "mhc_sinkhorn", "swapped_operands", 84, "comb_flag / (col_sum + eps)",
           "col_sum / (comb_flag + eps)"),
]
