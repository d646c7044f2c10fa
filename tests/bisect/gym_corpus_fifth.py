"""A fifth corpus of single-line bugs planted in the real gym operators, written blind to bisect's rules.

Written in session 25 by a helper that read the four earlier corpora only to avoid their lines, before reading
``runtime/bisect``: every bug is on a kernel / wrapper line none of ``gym_corpus``, ``gym_corpus_fresh``,
``gym_corpus_third``, ``gym_corpus_fourth`` touches. The kinds are accidents an LLM writing a PyPTO kernel makes: a
stale loop-local used for a global statistic, a wrong dtype in a cast, a floor for a ceiling in the host's tile
count, a missing max subtraction, the wrong tensor fed to a matmul, an accumulator initialised from the wrong value
(by a move that consumes it), a wrong variable in a formula, a wrong gate, the wrong module constant in an offset,
host-side argument / layout / return bugs, a shape read from the wrong axis, a valid_shape that ignores the tail, a
wrong parameter passed to topk, a mask initialised to the wrong value, an unroll-variant slice of the wrong extent,
a reshape with the two grouping axes swapped, a missing scale. Scored blind: 7 of 23 named (docs/bisect.md).

Same format as ``gym_corpus`` (``GymBug``: id, op, kind, 1-based vendor line, old, new); line numbers are the vendor
files' (``gym_corpus.OPS`` extended by ``gym_corpus_fresh``). ``bench/bisect_gym_corpus.py --corpus fifth`` scores
them (materialized with ``gym_corpus_fresh.materialize``).
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # attn_softmax: scores [1, S] bf16, S in {1, 128, 512, 1024}, tiles of 64, scale 0.0625
    GymBug("f5_as_p2_tile_max", "attn_softmax", "wrong_variable", 54, "pypto.sub(r, gmax)", "pypto.sub(r, tm)"),
    GymBug("f5_as_out_fp16", "attn_softmax", "wrong_dtype_cast", 74, "pypto.cast(r, pypto.DT_BF16)",
           "pypto.cast(r, pypto.DT_FP16)"),
    GymBug("f5_as_wrapper_floor", "attn_softmax", "wrapper_tail_bound", 87, "(S + S_TILE - 1) // S_TILE",
           "S // S_TILE"),
    GymBug("f5_as_p3_noscale", "attn_softmax", "missing_scale", 70, "pypto.mul(r, scale)", "pypto.mul(r, 1.0)"),
    GymBug("f5_as_sum_init", "attn_softmax", "wrong_accumulator_init", 58, "tsum[:] = ts", "tsum[:] = gmax"),
    GymBug("f5_as_wrapper_slice", "attn_softmax", "wrapper_slice", 100, "out_padded[:, :S]", "out_padded[:, -S:]"),
    # gqa_decode_attn: online softmax over KV tiles of 64
    GymBug("f5_gqa_no_max_sub", "gqa_decode_attn", "missing_shift", 134, "pypto.exp(pypto.sub(sij_scaled, m_ij))",
           "pypto.exp(sij_scaled)"),
    GymBug("f5_gqa_pv_k", "gqa_decode_attn", "wrong_operand", 141, "pypto.matmul(p_buf, v_tile,",
           "pypto.matmul(p_buf, k_tile,"),
    GymBug("f5_gqa_li_init", "gqa_decode_attn", "wrong_accumulator_init", 151, "li[:] = l_ij", "li[:] = m_ij"),
    # rms_norm: [1, 64, 256, 256] fp32
    GymBug("f5_rms_eps_var", "rms_norm", "wrong_variable", 55, "mean_sq + eps", "s + eps"),
    # sum_lstm: [32, 4H] fp16
    GymBug("f5_lstm_f_gate", "sum_lstm", "wrong_operand", 179, "pypto.mul(prev_cell_tile, f_gate)",
           "pypto.mul(prev_cell_tile, o_gate)"),
    GymBug("f5_lstm_rms_cast", "sum_lstm", "wrong_dtype_cast", 66, "pypto.cast(output, input_dtype)",
           "pypto.cast(output, pypto.DT_FP16)"),
    # mhc_sinkhorn: [8, 4, 4] fp32, 20 rounds
    GymBug("f5_mhc_loop_colsum", "mhc_sinkhorn", "wrong_variable", 88, "comb_flag / row_sum + eps",
           "comb_flag / col_sum + eps"),
    GymBug("f5_mhc_wrapper_t", "mhc_sinkhorn", "wrapper_layout", 118, "mhc_sinkhorn_kernel(x, output,",
           "mhc_sinkhorn_kernel(x.transpose(1, 2).contiguous(), output,"),
    # sigmoid: [X0, 16384] fp32, X0 in {16, 1, 64}
    GymBug("f5_sig_d_axis", "sigmoid", "wrong_axis_shape", 62, "D = x.shape[1]", "D = x.shape[0]"),
    GymBug("f5_sig_vshape", "sigmoid", "wrong_valid_shape", 73, "valid_shape=[actual_b, actual_d]",
           "valid_shape=[TILE_B, actual_d]"),
    # llada2_gate_select: 256 experts in 8 groups, topk_group 4, top_k 8
    GymBug("f5_ll_topk_group_k", "llada2_gate_select", "wrong_parameter", 111,
           "pypto.topk(group_scores, topk_group, -1, True)", "pypto.topk(group_scores, top_k, -1, True)"),
    GymBug("f5_ll_mask_init", "llada2_gate_select", "wrong_accumulator_init", 114,
           "[tile_batch, num_expert_group], 0.0,", "[tile_batch, num_expert_group], 1.0,"),
    GymBug("f5_ll_group_reshape", "llada2_gate_select", "wrong_reshape", 107,
           "[tile_batch, num_expert_group, group_unit]", "[tile_batch, group_unit, num_expert_group]"),
    GymBug("f5_ll_unroll_slice", "llada2_gate_select", "unroll_variant", 82, "hidden_states[bs_idx:bs_idx + tile_batch, :]",
           "hidden_states[bs_idx:bs_idx + 1, :]"),
    # interleave_rope: n128_bf16 kernel, S = 1024 in tiles of 16
    GymBug("f5_rope_short_tile", "interleave_rope", "wrong_constant_offset", 72, "s_blk * S_TILE_128",
           "s_blk * S_TILE_128_SHORT"),
    GymBug("f5_rope_wrapper_cs", "interleave_rope", "wrapper_argument_order", 500, "kernel(x, cos, sin, out)",
           "kernel(x, sin, cos, out)"),
    # flash_attention_score_grad (consistent inputs, gym_corpus_fresh.prepare)
    GymBug("f5_fag_no_max_sub", "flash_attention_score_grad", "missing_shift", 45, "pypto.exp(pypto.sub(s_ij, smax_i))",
           "pypto.exp(s_ij)"),
    GymBug("f5_fag_dq_scale", "flash_attention_score_grad", "missing_scale", 322,
           "pypto.cast(pypto.mul(dq_acc, scale_value), pypto.DT_BF16)", "pypto.cast(dq_acc, pypto.DT_BF16)"),
    GymBug("f5_fag_dv_ds", "flash_attention_score_grad", "wrong_operand", 366, "pypto.matmul(p_bf16, dy_i,",
           "pypto.matmul(ds_bf16, dy_i,"),
]
