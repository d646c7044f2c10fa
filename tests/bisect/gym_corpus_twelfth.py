"""A twelfth corpus of single-line bugs in the real gym operators (session 40), written blind: before reading
runtime/bisect's rules closely, and knowing only the earlier corpora's line *numbers* (counted to pick the operators
and kernel regions they touched least).

Counted over the ten corpora (bugs per operator, runnable ones): gated_delta_rule and rms_norm 14, interleave_rope and
sigmoid 15, mhc_sinkhorn 16, the others 19-27. Lines no corpus touches: gated_delta_rule's key/query normalisation
(134, 144), the view of the cumulative gate (123), the series for ``(I - A0)^-1`` (156, 160), the intra-chunk value
(168), the state's decay from the chunk's last gate (187) and the wrapper's 2-D views (268); interleave_rope's
gathermasks of x and cos (84, 85); mhc_sinkhorn's first row normalisation (81) and its final transpose (94);
rms_norm's write and the wrapper's call (85, 100); attn_softmax's first-trip test of pass 2 (57). sigmoid's lines
are all taken (no bug there). The wrapper's S = 16 pads to one 128-row chunk per head, so gated_delta_rule's bugs
on the state read before its first update (lines 177-180, 185, 189) change nothing and are not in the corpus.

Written as a model slips, not aimed at any rule:

- copy-paste of the neighbouring line: the query normalised by the key's norm (``mul(q, k_inv)``), ``x_o``
  gathered with ``x_e``'s pattern, ``c_e`` gathered from ``sin``, the row sum replaced by the row max computed two
  lines above;
- the pre-normalisation value used for the normalised one (``k_b = mul(k, bf)``), beta dropped from the value
  (``matmul(A, v)``), the wrapper passing the un-cumulated gate (``g_perm.view``);
- the strict lower mask taken inclusive (``A0`` keeps its diagonal), the series' first term subtracted (the comment
  says ``(I - A0)^-1``), two operands of a ``sub`` swapped;
- a read at the chunk offset instead of the head's (``[s_idx, 0]``), a transpose written as a reshape;
- the kernel's input written out instead of its result, the wrapper passing output and input swapped, a first-trip
  test ``t == 1``.

``GymBug`` format (tests/bisect/gym_corpus.py); lines are the vendor file's. ``bench/bisect_gym_corpus.py --corpus
twelfth`` scores them (materialized with ``gym_corpus_fresh.materialize``).
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # --- gated_delta_rule: normalisation, the series, the value path, the gate ---
    GymBug("e12_gdr_qnorm_kinv", "gated_delta_rule", "copy_paste_operand", 134, "pypto.mul(q, q_inv)",
           "pypto.mul(q, k_inv)"),
    GymBug("e12_gdr_kb_unnormed", "gated_delta_rule", "pre_normalisation_operand", 144, "pypto.mul(k_n, bf)",
           "pypto.mul(k, bf)"),
    GymBug("e12_gdr_gc_offset", "gated_delta_rule", "read_offset_chunk_not_head", 123,
           "pypto.view(g_cum_in, [L, 1], [q_off, 0])", "pypto.view(g_cum_in, [L, 1], [s_idx, 0])"),
    GymBug("e12_gdr_a0_incl", "gated_delta_rule", "mask_inclusive_for_strict", 156,
           "pypto.mul(A0_neg, lower_strict_LL)", "pypto.mul(A0_neg, lower_incl_LL)"),
    GymBug("e12_gdr_series_sign", "gated_delta_rule", "series_sign", 160, "acc = pypto.add(eye_LL, A0)",
           "acc = pypto.sub(eye_LL, A0)"),
    GymBug("e12_gdr_vout_nobeta", "gated_delta_rule", "scale_dropped", 168, "pypto.matmul(A, v_b, pypto.DT_FP32)",
           "pypto.matmul(A, v, pypto.DT_FP32)"),
    GymBug("e12_gdr_gdiff_swap", "gated_delta_rule", "swapped_operands", 187, "pypto.sub(g_last, gc)",
           "pypto.sub(gc, g_last)"),
    GymBug("e12_gdr_gcum_raw", "gated_delta_rule", "wrapper_wrong_local", 268, "g_cum_perm.view(BNL, 1)",
           "g_perm.view(BNL, 1)"),
    # --- interleave_rope: the gathermasks ---
    GymBug("e12_rope_xo_pattern", "interleave_rope", "copy_paste_pattern", 84,
           "x_o = pypto.gathermask(x_t, pattern_mode=2)", "x_o = pypto.gathermask(x_t, pattern_mode=1)"),
    GymBug("e12_rope_ce_source", "interleave_rope", "wrong_view_source", 85,
           "c_e = pypto.gathermask(c_t, pattern_mode=1)", "c_e = pypto.gathermask(s_t, pattern_mode=1)"),
    # --- mhc_sinkhorn: a stale local, a transpose written as a reshape ---
    GymBug("e12_mhc_rowmax_div", "mhc_sinkhorn", "stale_local", 81, "comb_flag = comb_flag / row_sum + eps",
           "comb_flag = comb_flag / row_max + eps"),
    GymBug("e12_mhc_final_reshape", "mhc_sinkhorn", "reshape_for_transpose", 94,
           "pypto.transpose(comb_flag, 1, 0)",
           "pypto.reshape(comb_flag, [tile_t, hc*hc], valid_shape=[t_valid, hc*hc])"),
    # --- rms_norm: the write, the call ---
    GymBug("e12_rms_write_input", "rms_norm", "write_wrong_value", 85, "pypto.assemble(result, [b_idx, 0, 0, 0]",
           "pypto.assemble(x_slice, [b_idx, 0, 0, 0]"),
    GymBug("e12_rms_call_swap", "rms_norm", "wrapper_call_arguments_swapped", 100, "rms_norm_kernel(x, out, config)",
           "rms_norm_kernel(out, x, config)"),
    # --- attn_softmax: the first trip of pass 2 ---
    GymBug("e12_as_first_trip", "attn_softmax", "first_trip_test", 57, "if t == 0:", "if t == 1:"),
]
