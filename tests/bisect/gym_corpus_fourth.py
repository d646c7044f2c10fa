"""A fourth corpus of single-line bugs planted in the real gym operators, written against the first three.

The three earlier corpora (``gym_corpus``, ``gym_corpus_fresh``, ``gym_corpus_third``) score ~100% after their fixes;
an outside evaluator's own bugs in other kernels were named 5 of 20 times. This one goes where the three do not:

- places: the operators they use little - flash_attention_score_grad's matmuls, its dQ loop nest and its wrapper's
  layout, gated_delta_rule's chunk matmuls (bisect runs it; verify refuses the wrapper's host ``cumsum``), the
  sigmoid wrapper and its tail loop, llada2_gate_select's group top-k and mask, sum_lstm's input fusion and
  ``loop_unroll`` offsets, the AdamW kernel call;
- kinds: matmul operand order and a dropped ``a_trans``, a wrong scale constant in the kernel, the wrong loop
  variable in a nested loop (``s1_idx`` for ``s2_idx``), a view offset one row off, ``keepdim`` dropped in a 2-D tile
  (the ``[S]`` row statistic then broadcasts along the other axis), a wrong broadcast operand of the same shape,
  min/max swapped (``amin`` for ``amax``, ``topk(.., largest=False)``, ``.max`` for ``.min`` on a tail bound), an
  inverted mask, a floor division for a ceiling one (only the one-row case), an operand used before its cast, an
  offset scaled by the unroll length, and host bugs before the kernel call: a transposed layout, a negated input,
  two scalar arguments passed in each other's place.

Same format and helpers as ``gym_corpus`` (``GymBug``, ``import_op``, ``materialize``); line numbers are the vendor
files' (``gym_corpus.OPS``, extended by ``gym_corpus_fresh``). Use this module's :func:`materialize` (it prepares
flash_attention_score_grad's consistent inputs, as ``gym_corpus_fresh`` does). ``bench/bisect_gym_corpus.py --corpus
fourth`` scores them. Not in it: quant_batch_matmul (it imports with ``--npuarch DAV_3510``, but bisect cannot read its
golden: the golden process cannot turn its FP8 intermediates into numpy), bn_training_reduce and swiglu_mlp (no golden
function to import), gather_pa_kv_cache (its golden refuses the SPEC's independently drawn inputs).
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import OPS, GymBug, import_op, shared_gym, statement_lines  # noqa: F401 - re-exported

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # sigmoid: [X0, 16384] fp32 in [16, 512] tiles; X0 in {16, 1, 64}
    GymBug("sig_floor_rows", "sigmoid", "floor_for_ceil", 63, "(B + TILE_B - 1) // TILE_B", "B // TILE_B"),
    GymBug("sig_tail_max", "sigmoid", "min_max_swapped", 69, ".min(TILE_B)", ".max(TILE_B)"),
    GymBug("sig_wrapper_neg", "sigmoid", "wrapper_input", 91, "sigmoid_kernel(x, out)", "sigmoid_kernel(-x, out)"),
    # flash_attention_score_grad: helper compute_tile (two call sites), dQ pass (s1 outer, s2 inner), dK/dV pass
    GymBug("fag_s_order", "flash_attention_score_grad", "matmul_operand_order", 39, "pypto.matmul(q_i, k_j,",
           "pypto.matmul(k_j, q_i,"),
    GymBug("fag_scale_const", "flash_attention_score_grad", "wrong_scale_constant", 44,
           "pypto.mul(s_ij, scale_value)", "pypto.mul(s_ij, 1.0 / HEAD_DIM)"),
    GymBug("fag_ds_bcast", "flash_attention_score_grad", "wrong_broadcast_operand", 57, "pypto.sub(dp_ij, d_i)",
           "pypto.sub(dp_ij, smax_i)"),
    GymBug("fag_sm_row_off", "flash_attention_score_grad", "view_offset_off_by_one", 284,
           "[S_TILE, 8], [s1_off, 0]", "[S_TILE, 8], [s1_off + 1, 0]"),
    GymBug("fag_d_keepdim", "flash_attention_score_grad", "keepdim_2d", 292, "pypto.sum(dy_ao_fp32, -1, keepdim=True)",
           "pypto.sum(dy_ao_fp32, -1, keepdim=False)"),
    GymBug("fag_s2_loopvar", "flash_attention_score_grad", "wrong_loop_variable", 298, "bn_base + s2_idx * S_TILE",
           "bn_base + s1_idx * S_TILE"),
    GymBug("fag_dk_atrans", "flash_attention_score_grad", "matmul_trans_flag", 365,
           "pypto.matmul(ds_bf16, q_i, pypto.DT_FP32, a_trans=True)", "pypto.matmul(ds_bf16, q_i, pypto.DT_FP32)"),
    GymBug("fag_wrapper_layout", "flash_attention_score_grad", "wrapper_transpose", 406,
           "query.reshape(-1, head_dim_out)", "query.transpose(1, 2).reshape(-1, head_dim_out)"),
    # gated_delta_rule: one 128-row chunk per head (S = 16 padded by the wrapper)
    GymBug("gdr_kkt_order", "gated_delta_rule", "matmul_operand_order", 153, "pypto.matmul(k_b, k_n,",
           "pypto.matmul(k_n, k_b,"),
    GymBug("gdr_kdv_order", "gated_delta_rule", "matmul_operand_order", 190, "pypto.matmul(k_decay, v_new,",
           "pypto.matmul(v_new, k_decay,"),
    # llada2_gate_select: group-limited top-k router
    GymBug("ll_group_amin", "llada2_gate_select", "min_max_swapped", 109, "pypto.amax(r, -1, False)",
           "pypto.amin(r, -1, False)"),
    GymBug("ll_mask_inverted", "llada2_gate_select", "inverted_mask", 129, "pypto.where(gm_not,",
           "pypto.where(gm_flat,"),
    GymBug("ll_topk_smallest", "llada2_gate_select", "min_max_swapped", 130, "pypto.topk(masked, top_k, -1, True)",
           "pypto.topk(masked, top_k, -1, False)"),
    # sum_lstm: [32, 4H] fp16, loop_unroll over the batch (unroll_list [1, 2, 4])
    GymBug("lstm_z4_uncast", "sum_lstm", "cast_placement", 146, "pypto.mul(z4_tile, config.alpha)",
           "pypto.mul(z4_tile_half, config.alpha)"),
    GymBug("lstm_unroll_offset", "sum_lstm", "unroll_offset", 141, "[current_tile_bs, hidden_dim_4], [bs_offset, 0]",
           "[current_tile_bs, hidden_dim_4], [bs_offset * current_tile_bs, 0]"),
    # apply_adam_w_v2: the wrapper passes lr and weight_decay in each other's place
    GymBug("adam_call_swap", "apply_adam_w_v2", "wrapper_argument_order", 211, "float(lr), float(weight_decay),",
           "float(weight_decay), float(lr),"),
]
