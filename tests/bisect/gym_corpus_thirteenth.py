"""A thirteenth corpus of single-line bugs in the real gym operators (session 41), written before reading
runtime/bisect's rules for it, in the operators the earlier corpora use on the fewest distinct lines, and only on lines
none of them touches.

Lines the twelve corpora touch (distinct): sum_lstm 23 (none of the input fusion's second view, the cell-candidate
slice, the bias of the pre-cell path, the second GELU's operand or the ``h`` write); flash_attention_score_grad 23
(none of the dQ pass' ``ssum`` view, its ``v`` view or its write, nor the dK/dV pass' ``p`` cast or ``dv``
accumulation); apply_adam_w_v2 19 (none of the ``v`` view, the denominator or the wrapper's ``1 - beta2``);
interleave_rope 16 (not the ``ye`` write). gather_pa_kv_cache, quant_batch_matmul, bn_training_reduce and swiglu_mlp
cannot be scored as imported (related inputs, a host-computed scale verify refuses, no golden function; see
tests/gym/test_gym_operators.py), so they are not in it.

Written as a model slips, not aimed at any rule:

- copy-paste of the neighbouring line: ``z4``'s view of ``states_4d``, the cell bias replaced by the state bias,
  ``v_j`` viewed from ``k``, ``ssum_i`` viewed from the max's tile, ``p_bf16`` cast from ``ds``, ``dv`` accumulating
  ``dk_tile``, the ``v`` tile viewed from ``m``, ``1 - beta1`` for ``1 - beta2``;
- the wrong slice of a fused tensor (the cell candidate at the output gate's columns), a stale local (the second
  GELU of the cell state, not of the normalised state), a step skipped (``v_hat + eps`` without the ``sqrt``);
- a write: the fp32 value written without its cast, a write offset without the head's base, a write without the
  head offset of its tile.

``GymBug`` format (tests/bisect/gym_corpus.py); lines are the vendor file's. ``bench/bisect_gym_corpus.py --corpus
thirteenth`` scores them (materialized with ``gym_corpus_fresh.materialize``, which prepares
flash_attention_score_grad's correlated inputs).
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # --- sum_lstm: fp16 [32, 4H], one row per trip; the input fusion, the split, the two paths, the h write ---
    GymBug("e13_lstm_z4_view_states", "sum_lstm", "copy_paste_source", 142, "pypto.view(z4_4d,",
           "pypto.view(states_4d,"),
    GymBug("e13_lstm_prec_slice", "sum_lstm", "wrong_slice_offset", 154, "[0, hidden_dim * 3]",
           "[0, hidden_dim * 2]"),
    GymBug("e13_lstm_cell_bias_state", "sum_lstm", "copy_paste_operand", 170, "pypto.add(c_cand_norm, b_cell_b)",
           "pypto.add(c_cand_norm, b_state_b)"),
    GymBug("e13_lstm_gelu_stale", "sum_lstm", "stale_local", 195, "gelu_activation_core(h_temp)",
           "gelu_activation_core(c_new_tile)"),
    GymBug("e13_lstm_h_uncast", "sum_lstm", "write_without_cast", 200, "pypto.assemble(h_new_tile_out,",
           "pypto.assemble(h_new_tile,"),
    # --- flash_attention_score_grad: the dQ pass' views and write, the dK/dV pass' cast and accumulation ---
    GymBug("e13_fag_ssum_from_max", "flash_attention_score_grad", "copy_paste_source", 288,
           "pypto.view(ss_i_8,", "pypto.view(sm_i_8,"),
    GymBug("e13_fag_dq_v_from_k", "flash_attention_score_grad", "copy_paste_source", 303, "pypto.view(v_2d,",
           "pypto.view(k_2d,"),
    GymBug("e13_fag_dq_write_nobase", "flash_attention_score_grad", "write_offset_without_base", 323,
           "[s1_off, 0], dq_2d", "[s1_idx * S_TILE, 0], dq_2d"),
    GymBug("e13_fag_p_cast_ds", "flash_attention_score_grad", "copy_paste_operand", 362,
           "pypto.cast(p_ij, pypto.DT_BF16)", "pypto.cast(ds_ij, pypto.DT_BF16)"),
    GymBug("e13_fag_dv_acc_dk", "flash_attention_score_grad", "copy_paste_operand", 374, "dv_acc + dv_tile",
           "dv_acc + dk_tile"),
    # --- apply_adam_w_v2: fp32 [7168, 2048] ---
    GymBug("e13_adam_v_view_m", "apply_adam_w_v2", "copy_paste_source", 76, "pypto.view(v,", "pypto.view(m,"),
    GymBug("e13_adam_denom_nosqrt", "apply_adam_w_v2", "step_skipped", 88, "pypto.add(sqrt_v, eps)",
           "pypto.add(v_hat, eps)"),
    GymBug("e13_adam_one_m_b2", "apply_adam_w_v2", "wrapper_copy_paste", 190, "1.0 - beta2", "1.0 - beta1"),
    # --- interleave_rope: the ye write without the head offset ---
    GymBug("e13_rope_ye_head", "interleave_rope", "write_offset_dropped", 92, "[b, n_off, s_off, 0], out",
           "[b, 0, s_off, 0], out"),
]
