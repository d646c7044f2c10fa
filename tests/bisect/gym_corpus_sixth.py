"""A sixth corpus of single-line bugs in the real gym operators (session 36), written against the five others'
coverage: sum_lstm's gate split / output assembly / helper call (lines 134-235, untouched but 141-146, 177-190),
apply_adam_w_v2's sqrt / v output / wrapper bias correction, rms_norm's eps and tile shape, gqa_decode_attn's K view
offset, l_ij axis and kernel-call argument order, llada2's group-mask constant and wrapper argument order,
attn_softmax's wrapper tile count, flash_attention_score_grad's dQ matmul / dK-dV dy view / compute_tile output
index, interleave_rope's tile shape. GymBug format (tests/bisect/gym_corpus.py); lines are the vendor file's.
"""
from gym_corpus import GymBug

BUGS: list[GymBug] = [
    # sum_lstm
    GymBug("s6_lstm_call_out_swap", "sum_lstm", "output_order", 235, "h_out, c_out", "c_out, h_out"),
    GymBug("s6_lstm_o_view_off", "sum_lstm", "wrong_view_offset", 153, "hidden_dim * 2]", "hidden_dim * 3]"),
    GymBug("s6_lstm_h_gate_var", "sum_lstm", "wrong_variable", 198, "pypto.mul(h_act, o_gate)",
           "pypto.mul(h_act, i_gate)"),
    GymBug("s6_lstm_bstate_cast", "sum_lstm", "wrong_operand_cast", 134, "pypto.cast(b_state_b_half",
           "pypto.cast(w_state_b_half"),
    GymBug("s6_lstm_c_out_off", "sum_lstm", "offset_ignores_loop", 183, "output_offset, c_out", "[0, 0], c_out"),
    # apply_adam_w_v2 (fp32, K = 2048: one tile)
    GymBug("s6_adam_sqrt_nobc", "apply_adam_w_v2", "skipped_bias_correction", 87, "pypto.sqrt(v_hat)",
           "pypto.sqrt(v_new)"),
    GymBug("s6_adam_v_out_var", "apply_adam_w_v2", "wrong_tensor_to_output", 97, "pypto.assemble(v_new,",
           "pypto.assemble(v_hat,"),
    GymBug("s6_adam_bc2_step", "apply_adam_w_v2", "wrapper_off_by_one", 188, "beta2 ** step",
           "beta2 ** (step + 1)"),
    # rms_norm
    GymBug("s6_rms_eps_attr", "rms_norm", "wrong_attribute", 77, "eps = config.eps", "eps = config.num_features"),
    GymBug("s6_rms_tile_c", "rms_norm", "tile_shape", 80, "set_vec_tile_shapes(1, C, 2, 128)",
           "set_vec_tile_shapes(1, C // 2, 2, 128)"),
    # gqa_decode_attn
    GymBug("s6_gqa_k_off_idx", "gqa_decode_attn", "offset_without_tile", 113, "[0, s2_start, 0]", "[0, s2_idx, 0]"),
    GymBug("s6_gqa_lij_axis", "gqa_decode_attn", "wrong_axis_3d", 135, "pypto.sum(p_ij, -1, keepdim=True)",
           "pypto.sum(p_ij, 1, keepdim=True)"),
    GymBug("s6_gqa_call_kv_swap", "gqa_decode_attn", "wrapper_argument_order", 279, "q_kernel, k_kernel, v_kernel",
           "q_kernel, v_kernel, k_kernel"),
    # llada2_gate_select
    GymBug("s6_ll_scatter_const", "llada2_gate_select", "wrong_constant", 115, "top_group_idx, 1.0)",
           "top_group_idx, 0.0)"),
    GymBug("s6_ll_call_swap", "llada2_gate_select", "wrapper_argument_order", 162, "top_k, topk_group,",
           "topk_group, top_k,"),
    # attn_softmax
    GymBug("s6_as_wrapper_ntiles", "attn_softmax", "wrapper_tail", 99, "scale, n_tiles)", "scale, n_tiles - 1)"),
    # flash_attention_score_grad
    GymBug("s6_fag_dq_operand", "flash_attention_score_grad", "matmul_wrong_operand", 312,
           "pypto.matmul(ds_bf16, k_j,", "pypto.matmul(ds_bf16, v_j,"),
    GymBug("s6_fag_dkv_dy_loopvar", "flash_attention_score_grad", "wrong_loop_variable", 344, "[s1_off, 0]",
           "[s2_off, 0]"),
    GymBug("s6_fag_tile_out_index", "flash_attention_score_grad", "wrong_output_index", 305,
           "_, ds_ij = compute_tile(", "ds_ij, _ = compute_tile("),
    # interleave_rope
    GymBug("s6_rope_tile_half", "interleave_rope", "tile_shape", 89, "S_TILE_128, HALF)", "S_TILE_128, D)"),
]
