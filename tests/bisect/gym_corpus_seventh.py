"""A seventh corpus of single-line bugs in the real gym operators (session 37), written blind, against the six others'
coverage: the lines none of ``gym_corpus``, ``gym_corpus_fresh``, ``gym_corpus_third``, ``gym_corpus_fourth``,
``gym_corpus_fifth``, ``gym_corpus_sixth`` touches - rms_norm's channel constant and the wrapper's config
construction; mhc_sinkhorn's shape read, its tile count and its valid-row bound; sigmoid's inner loop bound;
apply_adam_w_v2's second-moment scalar, bias-correction op and weight-decay operand; attn_softmax's pass-2 loop
bound and sum-state dtype; sum_lstm's RMSNorm division before the cast; llada2's ``topk_ids`` write extent.

Kinds: a wrong constant, host-side keyword/positional order, a shape read from the wrong axis, floor for ceiling
division, an off-by-one valid bound, the wrong loop-bound variable, a copy-paste scalar, mul for div, a wrong operand
(the unscaled tensor), an off-by-one Python loop, an accumulator of the wrong dtype, an op on the uncast input, a
write of one row instead of the tile's rows.

``GymBug`` format (tests/bisect/gym_corpus.py); lines are the vendor file's. ``bench/bisect_gym_corpus.py --corpus
seventh`` scores them (materialized with ``gym_corpus_fresh.materialize``).
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # rms_norm: [1, 64, 256, 256] fp32
    GymBug("s7_rms_c_const", "rms_norm", "wrong_constant", 74, "C = 64", "C = 32"),
    GymBug("s7_rms_cfg_positional", "rms_norm", "wrapper_positional_order", 98,
           "RMSNormConfig(eps=eps, num_features=x.shape[1])", "RMSNormConfig(x.shape[1], eps)"),
    # mhc_sinkhorn: [8, 4, 4] fp32, one tile of 32 rows
    GymBug("s7_mhc_hc_axis", "mhc_sinkhorn", "wrong_axis_shape", 60, "hc = x.shape[1]", "hc = x.shape[0]"),
    GymBug("s7_mhc_floor_tiles", "mhc_sinkhorn", "tail_bound_floor", 66, "(t+s-1)//s", "t//s"),
    GymBug("s7_mhc_valid_off1", "mhc_sinkhorn", "tail_bound_off_by_one", 69, "(t-t_idx).min(tile_t)",
           "(t-t_idx-1).min(tile_t)"),
    # sigmoid: [X0, 16384] fp32 in [16, 512] tiles
    GymBug("s7_sig_dloop_var", "sigmoid", "wrong_loop_bound_variable", 68, "pypto.loop(ds_loop,",
           "pypto.loop(bs_loop,"),
    # apply_adam_w_v2: fp32 [7168, 2048]
    GymBug("s7_adam_v_b1", "apply_adam_w_v2", "copy_paste_scalar", 83, "pypto.mul(grad_sq, one_m_b2)",
           "pypto.mul(grad_sq, one_m_b1)"),
    GymBug("s7_adam_mhat_mul", "apply_adam_w_v2", "wrong_op", 85, "pypto.div(m_new, bc1,", "pypto.mul(m_new, bc1,"),
    GymBug("s7_adam_wd_operand", "apply_adam_w_v2", "wrong_operand", 91, "pypto.add(term1, term2)",
           "pypto.add(term1, w_tile)"),
    # attn_softmax: [1, S] bf16, tiles of 64
    GymBug("s7_as_p2_range", "attn_softmax", "python_loop_off_by_one", 46, "range(n_s_tiles)",
           "range(n_s_tiles - 1)"),
    GymBug("s7_as_tsum_dtype", "attn_softmax", "accumulator_dtype", 45, 'pypto.tensor([1], pypto.DT_FP32, "tsum")',
           'pypto.tensor([1], pypto.DT_BF16, "tsum")'),
    # sum_lstm: RMSNorm helper, fp16 in
    GymBug("s7_lstm_div_uncast", "sum_lstm", "cast_placement", 65, "pypto.div(x_fp32, y)", "pypto.div(x, y)"),
    # llada2_gate_select: 16 tokens in one unrolled tile
    GymBug("s7_ll_ids_rows", "llada2_gate_select", "write_extent", 140, "topk_ids[bs_idx:bs_idx + tile_batch, :]",
           "topk_ids[bs_idx:bs_idx + 1, :]"),
]
