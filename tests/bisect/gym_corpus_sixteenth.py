"""A sixteenth corpus of single-line bugs in the real gym operators (session 44), planted at test time (nothing of
the vendor's code is copied here; ``GymBug`` format of tests/bisect/gym_corpus.py, lines are the vendor file's).

Written before reading runtime/bisect's rules for them, in the runnable operators neither the fourteenth nor the
fifteenth corpus uses (sigmoid, interleave_rope, apply_adam_w_v2, llada2_gate_select), each at the size ``runs.tsv``
runs it ([B, 16384] fp32; [B, 128, 1024, 64] bf16; [7168, 2048] fp32 state; [B, 2048] bf16 x [256, 2048] fp32), as a
model slips, not aimed at a rule:

- tail arithmetic: sigmoid's row-tile count ``(B + 3) // TILE_B`` (a one-row batch runs no tile), RoPE's last valid
  row count ``(S - s_off - 1).min(S_TILE)``;
- a loop bound one short: sigmoid's column-tile count ``(D - 1) // TILE_D``, RoPE's head-block loop
  ``128 // N_TILE - 1``;
- swapped view offsets: RoPE's ``x`` tile at ``[b, s_off, n_off, 0]``;
- a missing rescale: AdamW's first moment without ``beta1`` (``m_tile + (1 - b1) g``), its second moment without
  ``(1 - b2)`` on ``g * g``;
- a dtype cast at the wrong point: LLaDA2's router scores rounded to BF16 before the top-k and the gather;
- a wrong broadcast: LLaDA2's group mask unsqueezed on axis 1 instead of -1 before the expansion to experts;
- a reduction over the wrong axis: LLaDA2's top-k weight normalisation summed over the batch rows.

Every operator runs every bug at its vendor shape; AdamW's fp32 path has one 2048-wide tile (a tail bug there changes
nothing, so none is planted). Scored by ``bench/bisect_gym_corpus.py --corpus sixteenth`` and
``tests/bisect/test_sixteenth_corpus_s44.py``.
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # --- sigmoid: [B, 16384] fp32 in [16, 512] tiles, B in {16, 1, 64} ---
    GymBug("f16_sig_rows_tail", "sigmoid", "tail_arithmetic", 63, "(B + TILE_B - 1) // TILE_B", "(B + 3) // TILE_B"),
    GymBug("f16_sig_cols_short", "sigmoid", "loop_bound", 64, "(D + TILE_D - 1) // TILE_D", "(D - 1) // TILE_D"),
    # --- interleave_rope: [B, 128, 1024, 64] bf16, [1, 32, 16, 64] tiles ---
    GymBug("f16_rope_valid_s", "interleave_rope", "tail_arithmetic", 73, "(S - s_off).min(S_TILE_128)",
           "(S - s_off - 1).min(S_TILE_128)"),
    GymBug("f16_rope_heads_short", "interleave_rope", "loop_bound", 69, "pypto.loop(128 // N_TILE_128,",
           "pypto.loop(128 // N_TILE_128 - 1,"),
    GymBug("f16_rope_x_swapped", "interleave_rope", "swapped_view_offsets", 76, "[b, n_off, s_off, 0],",
           "[b, s_off, n_off, 0],"),
    # --- apply_adam_w_v2: fp32, [7168, 2048] ---
    GymBug("f16_adam_m_nobeta", "apply_adam_w_v2", "missing_rescale", 80, "pypto.add(beta1_m, one_b1_g)",
           "pypto.add(m_tile, one_b1_g)"),
    GymBug("f16_adam_v_noscale", "apply_adam_w_v2", "missing_rescale", 84, "pypto.add(beta2_v, one_b2_gs)",
           "pypto.add(beta2_v, grad_sq)"),
    # --- llada2_gate_select: sigmoid router, group top-k, gather, renormalise ---
    GymBug("f16_ll_scores_bf16", "llada2_gate_select", "cast_wrong_point", 96, "scores = pypto.sigmoid(logits)",
           "scores = pypto.cast(pypto.cast(pypto.sigmoid(logits), pypto.DT_BF16), pypto.DT_FP32)"),
    GymBug("f16_ll_mask_broadcast", "llada2_gate_select", "wrong_broadcast", 116, "pypto.unsqueeze(group_mask, -1)",
           "pypto.unsqueeze(group_mask, 1)"),
    # (rows on lines no earlier corpus plants on, added after the first blind score; scored blind the same way)
    GymBug("f16_ll_group_unit", "llada2_gate_select", "wrong_constant", 69, "ne // num_expert_group",
           "ne // topk_group"),
    GymBug("f16_adam_k_axis", "apply_adam_w_v2", "wrong_axis", 65, "K = weight.shape[1]", "K = weight.shape[0]"),
    GymBug("f16_adam_v_beta1", "apply_adam_w_v2", "wrong_constant", 82, "pypto.mul(v_tile, beta2)",
           "pypto.mul(v_tile, beta1)"),
    GymBug("f16_rope_x_valid_half", "interleave_rope", "wrong_valid_shape", 74, "[1, N_TILE_128, valid_s, D]",
           "[1, N_TILE_128, valid_s, HALF]"),
]
