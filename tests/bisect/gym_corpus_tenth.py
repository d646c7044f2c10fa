"""A tenth corpus of single-line bugs in the real gym operators (session 39), written blind to the nine others' exact
lines (only their line *numbers* were counted, to pick the operators and lines they touched least).

Counted over the nine corpora (bugs per operator): gated_delta_rule 10, rms_norm / sigmoid / interleave_rope 14,
mhc_sinkhorn 15, the others 19-26. So gated_delta_rule gets four bugs, interleave_rope, sigmoid and mhc_sinkhorn one
each, none on a line any earlier corpus touches.

The three items session 38b left open:

- gated_delta_rule's permuted output (the kernel writes ``core_attn_out`` as ``[Nv*S_pad, D]``; the wrapper permutes
  it to ``[B, S, Nv, D]``): a bug that only reaches ``out0`` (the decay mask dropped from the intra-chunk scores) and
  the output written at the wrong offset (``[s_idx, 0]`` for ``[q_off, 0]``);
- bugs visible only on unseen cases (a sequence length no multiple of the tile): attn_softmax's pad width computed as
  one tile minus S (right for S < 64, the SPEC's only tail); gqa_decode_attn's pad mask filled with 0 instead of
  -1e30 was meant as one too, but the SPEC's derived tail case (``KEY_STATES2 = 77``) shows it;
- a loop count found late: interleave_rope's ``s_loops`` rounded down (the count is on its own line, the loop four
  lines below).

Kinds no corpus has tried: a dtype cast dropped before a reduction (flash_attention_score_grad's ``d_i``, sum_lstm's
fp16 states), an output buffer aliasing an input (``dq_flat = q_flat``: pass 2 then reads dQ as Q), an accumulator
initialised on the wrong loop's first trip (so inside the inner loop on the first outer trip, never on the others), an
off-by-one in an index stride (the head stride ``NUM_HEADS - 1``), a wrong broadcast direction (beta ``[L, 1]``
transposed to ``[1, L]``), a host reshape that skips the permute, a host transpose of the input, and a view's
``valid_shape`` set to the tile instead of the valid extent.

False-claim probes (a plausible rule names another line): the rope loop count (the loop at 71 and the views are
right), gated_delta_rule's dropped decay (``decay_mask`` and ``lower_incl_LL`` are right), the accumulator on the wrong
loop (the add at 318 and the matmul at 312 are right) and the aliased ``dq_flat`` (the kernel is right; pass 2's Q view
reads what the wrapper aliased).

``GymBug`` format (tests/bisect/gym_corpus.py); lines are the vendor file's. ``bench/bisect_gym_corpus.py --corpus
tenth`` scores them (materialized with ``gym_corpus_fresh.materialize``).
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # --- gated_delta_rule: the permuted output, broadcast direction, host layout ---
    GymBug("e10_gdr_attn_nodecay", "gated_delta_rule", "mask_for_decay", 175, "pypto.mul(qkt, decay_mask)",
           "pypto.mul(qkt, lower_incl_LL)"),
    GymBug("e10_gdr_out_offset", "gated_delta_rule", "output_wrong_offset", 195,
           "pypto.assemble(core_out_bf16, [q_off, 0], core_attn_out)",
           "pypto.assemble(core_out_bf16, [s_idx, 0], core_attn_out)"),
    GymBug("e10_gdr_vb_bcast", "gated_delta_rule", "broadcast_direction", 143, "pypto.mul(v, bf)",
           "pypto.mul(v, pypto.transpose(bf, 0, 1))"),
    GymBug("e10_gdr_query_layout", "gated_delta_rule", "wrapper_reshape_no_permute", 264, "query_perm.view(BNL, D)",
           "query.reshape(BNL, D)"),
    # --- bugs only an unseen case (a length no multiple of the tile) shows ---
    GymBug("e10_gqa_pad_mask", "gqa_decode_attn", "wrapper_pad_mask", 265,
           "torch.full((Skv_padded - Skv,), -1e30,", "torch.full((Skv_padded - Skv,), 0.0,"),
    GymBug("e10_as_pad_width", "attn_softmax", "wrapper_pad_width_unseen", 92, "(M, padded_S - S)",
           "(M, S_TILE - S)"),
    # --- a loop count on its own line, rounded down (the loop and the views are right) ---
    GymBug("e10_rope_sloop_floor", "interleave_rope", "loop_count_floor", 67, "(S + S_TILE_128 - 1) // S_TILE_128",
           "(S - 1) // S_TILE_128"),
    # --- kinds no corpus has tried ---
    GymBug("e10_fag_d_nocast", "flash_attention_score_grad", "cast_dropped_before_reduction", 291,
           "pypto.cast(pypto.mul(dy_i, ao_i), pypto.DT_FP32)", "pypto.mul(dy_i, ao_i)"),
    GymBug("e10_lstm_states_nocast", "sum_lstm", "cast_dropped_before_reduction", 144,
           "pypto.cast(states_tile_half, pypto.DT_FP32)", "states_tile_half"),
    GymBug("e10_fag_dq_alias", "flash_attention_score_grad", "output_aliases_input", 414,
           "dq_flat = torch.empty_like(q_flat)", "dq_flat = q_flat"),
    GymBug("e10_fag_acc_loopvar", "flash_attention_score_grad", "accumulator_init_wrong_loop", 315,
           "pypto.is_loop_begin(s2_idx)", "pypto.is_loop_begin(s1_idx)"),
    GymBug("e10_fag_head_stride", "flash_attention_score_grad", "index_stride_off_by_one", 272,
           "(b_idx * NUM_HEADS + n_idx) * s", "(b_idx * (NUM_HEADS - 1) + n_idx) * s"),
    GymBug("e10_sig_host_transpose", "sigmoid", "wrapper_transpose", 89, "x = x.contiguous()",
           "x = x.t().contiguous()"),
    GymBug("e10_mhc_view_valid", "mhc_sinkhorn", "valid_shape_is_tile", 72, "valid_shape=[t_valid, hc*hc]",
           "valid_shape=[tile_t, hc*hc]"),
]
