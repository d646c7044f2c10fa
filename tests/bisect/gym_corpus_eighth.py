"""An eighth corpus of single-line bugs in the real gym operators (session 38), written blind, against the seven
others' coverage: the operators they touch least (gated_delta_rule: 8 bugs in seven corpora, rms_norm and sigmoid: 12)
and, in the others, lines none of them touches - attn_softmax's pass-2 view and tile sum; gqa_decode_attn's tile end,
the carried ``li`` of the middle tiles and the wrapper's V-head averaging; gated_delta_rule's decay difference and the
wrapper's output layout; apply_adam_w_v2's ``term1`` division; rms_norm's width constant; mhc_sinkhorn's first row
sum; sigmoid's row offset; sum_lstm's ``b_cell`` reshape; llada2's ``topk_weights`` write.

Kinds (the ones a model writes by accident): a wrong slice offset (the tile index for the tile's offset), a
reduction over the wrong axis (also the padded one), a tail valid extent one short, a loop-carried value reset to the
tile's own value, a missed scale factor in a host helper, swapped operands of ``sub`` / ``div``, a wrong view shape in
the host wrapper (the permute forgotten), a wrong tile-size constant, a copy-paste operand, the unscaled tensor
written.

``GymBug`` format (tests/bisect/gym_corpus.py); lines are the vendor file's. ``bench/bisect_gym_corpus.py --corpus
eighth`` scores them (materialized with ``gym_corpus_fresh.materialize``).
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # attn_softmax: [1, S] bf16, tiles of 64, S in {1, 128, 512, 1024}
    GymBug("e8_as_p2_view_tile", "attn_softmax", "offset_without_tile", 50, "[m_idx, s_off]", "[m_idx, t]"),
    GymBug("e8_as_ts_axis", "attn_softmax", "wrong_reduction_axis", 56, "pypto.sum(r, dim=-1, keepdim=True)",
           "pypto.sum(r, dim=0, keepdim=True)"),
    # gqa_decode_attn: online softmax over KV tiles of 64 (Skv in {64, 128, 512, 4096})
    GymBug("e8_gqa_tile_end", "gqa_decode_attn", "tail_valid_off_by_one", 107, "pypto.min(s2_start + S2_TILE, Skv)",
           "pypto.min(s2_start + S2_TILE - 1, Skv)"),
    GymBug("e8_gqa_li_reset", "gqa_decode_attn", "loop_carried_reset", 164, "li[:] = li_new", "li[:] = l_ij"),
    GymBug("e8_gqa_v_mean", "gqa_decode_attn", "wrapper_missing_scale", 177, ".float() / 4.0", ".float()"),
    # gated_delta_rule: one 128-row chunk per head (S = 16 padded by the wrapper)
    GymBug("e8_gdr_gcdiff_swap", "gated_delta_rule", "swapped_operands", 147, "pypto.sub(gc, gc_T)",
           "pypto.sub(gc_T, gc)"),
    GymBug("e8_gdr_out_layout", "gated_delta_rule", "wrapper_view_shape", 280,
           "core_out_2d.view(B, Nv, S_pad, D).permute(0, 2, 1, 3)", "core_out_2d.view(B, S_pad, Nv, D)"),
    # apply_adam_w_v2: fp32 [7168, 2048]
    GymBug("e8_adam_term1_swap", "apply_adam_w_v2", "swapped_operands", 89, "pypto.div(m_hat, denom,",
           "pypto.div(denom, m_hat,"),
    # rms_norm: [1, 64, 256, 256] fp32
    GymBug("e8_rms_w_const", "rms_norm", "tile_size_constant", 76, "W = 256", "W = 128"),
    # mhc_sinkhorn: [8, 4, 4] fp32, one tile of 32 rows (8 valid)
    GymBug("e8_mhc_rowsum_axis", "mhc_sinkhorn", "reduce_padded_axis", 80, "pypto.sum(comb_flag, 1, True)",
           "pypto.sum(comb_flag, 2, True)"),
    # sigmoid: [X0, 16384] fp32 in [16, 512] tiles (X0 = 64: four row tiles)
    GymBug("e8_sig_row_off", "sigmoid", "offset_without_tile", 72, "[b_idx * TILE_B, d_idx * TILE_D]",
           "[b_idx, d_idx * TILE_D]"),
    # sum_lstm: fp16 [32, 4H]
    GymBug("e8_lstm_bcell_copy", "sum_lstm", "copy_paste_operand", 113, "pypto.reshape(b_cell,",
           "pypto.reshape(w_cell,"),
    # llada2_gate_select: the routed weights written before their scale
    GymBug("e8_ll_write_unscaled", "llada2_gate_select", "missing_scale", 139, "= tw_scaled", "= tw_norm"),
]
