"""A ninth corpus of single-line bugs in the real gym operators (session 38b), written blind to the eight others' exact
lines, against the four fixes of session 38 (runtime/bisect ``coverage_gap``'s tile-size constant,
``short_valid_source``, ``api._prepared_argument``, ``_axis_the_shapes_want``).

Half of the bugs are in the *families* those fixes address, on other operators / axes / kinds of argument:

- a tile-size constant too small on another axis (rms_norm's ``H``);
- a valid bound one short elsewhere: on apply_adam_w_v2's column extent (one ``min`` clamp behind it) and on
  gqa_decode_attn's ``s2_valid = s2_end - s2_start`` (the ``min`` clamp behind it is *right*: the rule that follows a
  short bound on to its ``min`` must not name line 107);
- a reduction into a lower-rank state in another pass (attn_softmax's tile max into ``gmax``);
- an argument the wrapper prepares wrong in other ways: a scalar (apply_adam_w_v2's ``bc1`` from ``beta2``) and a
  copy-paste local (gqa_decode_attn's ``v_padded`` from ``k_reduced``: it follows back to a golden-named local that
  *is* right).

The other half in families no corpus has tried (their kinds): a stage skipped (the pre-activation value used where the
activation's belongs), an operation applied twice, a loop count rounded down, a dynamic extent read from the wrong
axis, a host scalar truncated to int, a loop-carried state allocated in a narrower dtype.

Three are there to catch false claims of the new rules: sigmoid's row-tile count rounded down (the tile constant is
right; a rule naming ``TILE_B`` or the view would be wrong), gqa_decode_attn's ``s2_valid`` (above) and
gqa_decode_attn's ``alpha`` with swapped operands (the wrapper's golden-named ``k_reduced`` / ``v_reduced`` are
prepared right; the kernel is wrong).

``GymBug`` format (tests/bisect/gym_corpus.py); lines are the vendor file's. ``bench/bisect_gym_corpus.py --corpus
ninth`` scores them (materialized with ``gym_corpus_fresh.materialize``).
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    # --- the session-38 families, elsewhere ---
    # rms_norm [1, 64, 256, 256]: the H extent of the one view too small (no loop moves the writes along H)
    GymBug("e9_rms_h_const", "rms_norm", "tile_size_constant", 75, "H = 256", "H = 128"),
    # apply_adam_w_v2 fp32 [7168, 2048], one column tile of 2048: its valid extent one short
    GymBug("e9_adam_valid_short", "apply_adam_w_v2", "tail_valid_off_by_one", 70, "(K - k_off).min(N_TILE)",
           "(K - k_off - 1).min(N_TILE)"),
    # gqa_decode_attn: the valid extent one short *after* a right min() (the min is not the culprit)
    GymBug("e9_gqa_valid_sub", "gqa_decode_attn", "valid_extent_off_by_one", 108, "s2_end - s2_start",
           "s2_end - s2_start - 1"),
    # attn_softmax: pass 1's tile max over the row axis, moved into the [1] state gmax
    GymBug("e9_as_tm_axis", "attn_softmax", "wrong_reduction_axis", 38, "pypto.amax(r, dim=-1, keepdim=True)",
           "pypto.amax(r, dim=0, keepdim=True)"),
    # apply_adam_w_v2 wrapper: a scalar argument (bias correction 1) computed from beta2
    GymBug("e9_adam_bc1_beta2", "apply_adam_w_v2", "wrapper_scalar_copy_paste", 187, "(beta1 ** step)",
           "(beta2 ** step)"),
    # gqa_decode_attn wrapper: V passed as the (right) averaged K (Skv a multiple of 64: the no-pad branch)
    GymBug("e9_gqa_vpad_copy", "gqa_decode_attn", "wrapper_copy_paste_local", 256, "v_padded = v_reduced.contiguous()",
           "v_padded = k_reduced.contiguous()"),
    # --- families no corpus has tried ---
    # sum_lstm: the cell candidate's GELU skipped (the value before the activation used)
    GymBug("e9_lstm_gelu_skipped", "sum_lstm", "skipped_stage", 180, "pypto.mul(c_act, i_gate)",
           "pypto.mul(c_cand_norm, i_gate)"),
    # apply_adam_w_v2: the learning rate applied twice
    GymBug("e9_adam_lr_twice", "apply_adam_w_v2", "double_application", 92, "pypto.mul(update, lr)",
           "pypto.mul(pypto.mul(update, lr), lr)"),
    # sigmoid [X0, 16384]: the row-tile count rounded down (TILE_B and the view are right)
    GymBug("e9_sig_bloop_floor", "sigmoid", "loop_count_floor", 63, "(B + TILE_B - 1) // TILE_B",
           "(B - 1) // TILE_B"),
    # gqa_decode_attn: Skv read from the head-dim axis of k_full
    GymBug("e9_gqa_skv_axis", "gqa_decode_attn", "extent_from_wrong_axis", 92, "k_full.shape[1]", "k_full.shape[2]"),
    # apply_adam_w_v2 wrapper: a scalar truncated to int on its way to the kernel (beta1 -> 0)
    GymBug("e9_adam_beta1_int", "apply_adam_w_v2", "host_int_truncation", 208, "float(beta1), float(one_m_b1)",
           "int(beta1), float(one_m_b1)"),
    # gqa_decode_attn: the carried denominator li allocated in bf16
    GymBug("e9_gqa_li_bf16", "gqa_decode_attn", "state_dtype", 102, '[Nkv, GROUPS, 1], pypto.DT_FP32, "li"',
           '[Nkv, GROUPS, 1], pypto.DT_BF16, "li"'),
    # gqa_decode_attn: the rescale of the carried state with swapped operands (wrapper's k/v_reduced are right)
    GymBug("e9_gqa_alpha_swap", "gqa_decode_attn", "swapped_operands", 155, "pypto.sub(mi, mi_new)",
           "pypto.sub(mi_new, mi)"),
]
