"""A third corpus of single-line bugs planted in the real gym operators, written against both earlier corpora.

``gym_corpus.BUGS`` (50 named of 50) and ``gym_corpus_fresh.BUGS`` (15 of 15) measure the bugs their authors
imagined; an outside evaluator's own bugs were named 5 of 20 times before the second. This one is written to find
what is still missed, so it prefers what the two do not cover:

- places: operators they use little (``interleave_rope``, ``mhc_sinkhorn``, ``gqa_decode_attn``, ``rms_norm``, the
  AdamW wrapper) and, in the others, code they never touch - the ``pypto.is_loop_begin`` / ``is_loop_end`` branches
  (one runs only in a one-tile case, one only on the last tile, one only from the third tile on), the rows of a
  ``loop_unroll`` variant, the pass after the main loops, the host wrapper's helpers and scalars;
- kinds: a ``pypto.loop`` bound one short, an offset that forgets its tile size, a view ``valid_shape`` of the
  wrong width, a reduction over the wrong (or the padded) axis of a 3-D tile, ``keepdim`` dropped where broadcasting
  then silently lines the axes up wrong, a Python loop one round short, an intermediate tensor or a matmul result of
  the wrong dtype, bf16 rounding / an un-cast operand at the wrong step, a wrong scalar computed by the wrapper.

Same format and helpers as ``gym_corpus`` (``GymBug``, ``import_op``, ``materialize``); line numbers are the vendor
files' (``gym_corpus.OPS``). ``bench/bisect_gym_corpus.py --corpus third`` scores them. gated_delta_rule is not in
it: as imported, verify refuses its wrapper's host-computed ``g_cum_in`` (FAIL_CHEAT: host data), and
bn_training_reduce does not import (its gym test computes the reference inline).
"""

from __future__ import annotations

from gym_corpus import OPS, GymBug, import_op, materialize, shared_gym, statement_lines  # noqa: F401 - re-exported

BUGS: list[GymBug] = [
    # interleave_rope, kernel n128_bf16 (S = 1024 in tiles of 16, 4 head blocks of 32)
    GymBug("rope_sloop_last", "interleave_rope", "loop_bound", 71, "pypto.loop(s_loops, ", "pypto.loop(s_loops - 1, "),
    GymBug("rope_vshape_cs", "interleave_rope", "wrong_valid_shape", 75, "[1, 1, valid_s, D]", "[1, 1, valid_s, HALF]"),
    GymBug("rope_noff", "interleave_rope", "offset_without_tile", 70, "n_blk * N_TILE_128", "n_blk"),
    GymBug("rope_ye_twice", "interleave_rope", "wrong_operand", 93, "pypto.assemble(yo,", "pypto.assemble(ye,"),
    # gqa_decode_attn: online softmax; the is_loop_begin / is_loop_end branches
    GymBug("gqa_single_div", "gqa_decode_attn", "cond_branch", 147, "pypto.div(o_ij, l_ij)", "pypto.div(o_ij, m_ij)"),
    GymBug("gqa_last_li", "gqa_decode_attn", "last_tile_only", 160, "pypto.div(oi_new, li_new)",
           "pypto.div(oi_new, li)"),
    GymBug("gqa_mid_oi", "gqa_decode_attn", "cond_branch", 163, "oi[:] = oi_new", "oi[:] = o_ij"),
    GymBug("gqa_mi_dtype", "gqa_decode_attn", "intermediate_dtype", 103, 'pypto.DT_FP32, "mi"', 'pypto.DT_BF16, "mi"'),
    GymBug("gqa_wrapper_avg", "gqa_decode_attn", "wrapper_helper", 174, ".float() / 4.0", ".float() / 2.0"),
    GymBug("gqa_amax_axis", "gqa_decode_attn", "wrong_axis_3d", 133, "pypto.amax(sij_scaled, -1, keepdim=True)",
           "pypto.amax(sij_scaled, 1, keepdim=True)"),
    # mhc_sinkhorn: [4, 4, 32] tiles (8 valid columns), 20 rounds
    GymBug("mhc_rowmax_axis", "mhc_sinkhorn", "wrong_axis_3d", 77, "pypto.amax(comb_flag, 1, True)",
           "pypto.amax(comb_flag, 0, True)"),
    GymBug("mhc_iters", "mhc_sinkhorn", "python_loop_bound", 86, "range(num_iters - 1)", "range(num_iters - 2)"),
    GymBug("mhc_valid", "mhc_sinkhorn", "wrong_valid_shape", 92, "valid_shape=[hc*hc, t_valid]",
           "valid_shape=[hc*hc, tile_t]"),
    GymBug("mhc_pad_axis", "mhc_sinkhorn", "reduce_padded_axis", 83, "pypto.sum(comb_flag, 0, True)",
           "pypto.sum(comb_flag, 2, True)"),
    GymBug("mhc_row_keepdim", "mhc_sinkhorn", "broadcast", 80, "pypto.sum(comb_flag, 1, True)",
           "pypto.sum(comb_flag, 1, False)"),
    # rms_norm: the mean's count taken from the wrong dimension
    GymBug("rms_count_dim", "rms_norm", "wrong_constant", 54, "s / num_features", "s / x.shape[2]"),
    # apply_adam_w_v2: a scalar the wrapper computes for the kernel
    GymBug("adam_wrapper_b1", "apply_adam_w_v2", "wrapper_scalar", 189, "one_m_b1 = 1.0 - beta1",
           "one_m_b1 = 1.0 - beta2"),
    # llada2_gate_select
    GymBug("ll_logits_bf16", "llada2_gate_select", "intermediate_dtype", 91, "gate_weight, pypto.DT_FP32,",
           "gate_weight, pypto.DT_BF16,"),
    GymBug("ll_bias_last_row", "llada2_gate_select", "python_loop_bound", 98, "range(tile_batch)",
           "range(tile_batch - 1)"),
    # sum_lstm: loop_unroll over the batch (unroll_list [1, 2, 4])
    GymBug("lstm_h_rounded", "sum_lstm", "cast_placement", 187, "rms_norm_pure(c_new_tile,",
           "rms_norm_pure(c_new_tile_out,"),
    GymBug("lstm_unroll_tile", "sum_lstm", "unroll_variant", 127, "current_tile_bs = unroll_length",
           "current_tile_bs = 1"),
    # attn_softmax: an un-cast operand in pass 2; pass 3's write offset by tile index
    GymBug("as_p2_uncast", "attn_softmax", "cast_placement", 53, "pypto.mul(r, scale)", "pypto.mul(row, scale)"),
    GymBug("as_out_tile_index", "attn_softmax", "offset_without_tile", 75, "[m_idx, s_off], out", "[m_idx, t], out"),
]
