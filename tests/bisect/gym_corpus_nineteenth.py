"""A nineteenth corpus of single-line bugs in real gym operators (session 47), planted at test time (nothing of the
vendor's code is copied here; ``GymBug`` format of tests/bisect/gym_corpus.py, lines are the vendor file's).

Written blind: the rows and the culprit each should get (:data:`EXPECTED`) were written before bisect ran on any of
them and before any rule of runtime/bisect was read for them. The operators are the runnable ones earlier corpora
used least, on lines none of them plants: gqa_decode_attn's online-softmax state (its tail bound, the final division,
the running max's initialisation and update), sum_lstm's helper division, its state bias and output cast,
rms_norm's and sigmoid's loop bounds, flash_attention_score_grad's first pass.

Kinds (the ones a model writes by accident): a tail bound off by one, swapped operands of a non-commutative op (twice),
a stale accumulator update, a copy-paste accumulator initialisation, a copy-paste operand (``w_state`` for
``b_state``), a doubled cast through the wrong dtype, a loop bound off by one (twice: the only batch of rms_norm, the
last batch tile of sigmoid), a view offset that drops the head base in one of two passes.

Not in it (unchanged since session 46): swiglu_mlp (its pristine kernel calls ``pypto.matmul`` without ``out_dtype``),
quant_batch_matmul (imports ``torch_npu``), gather_pa_kv_cache (720 MB inputs, a golden that refuses independent
inputs).

Scored by ``bench/bisect_gym_corpus.py --corpus nineteenth`` and ``tests/bisect/test_bisect_nineteenth_s47.py`` (slow
tier; ``EXCLUDED`` there: the rows verify does not fail).
"""

from __future__ import annotations

from pathlib import Path

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug


def materialize(bug: GymBug, op_dir: Path, tmp: Path) -> tuple[Path, str, tuple[int, int]]:
    """``gym_corpus_fresh.materialize`` (flash_attention_score_grad with its consistent softmax statistics)."""
    return _fresh.materialize(bug, op_dir, tmp)


BUGS: list[GymBug] = [
    # --- gqa_decode_attn: online softmax over 64-key tiles, running (mi, li, oi) in local tensors ---
    GymBug("g19_gqa_tail_end", "gqa_decode_attn", "tail_bound", 107, "pypto.min(s2_start + S2_TILE, Skv)",
           "pypto.min(s2_start + S2_TILE - 1, Skv)"),
    GymBug("g19_gqa_final_div_swap", "gqa_decode_attn", "swapped_operands", 160, "pypto.div(oi_new, li_new)",
           "pypto.div(li_new, oi_new)"),
    GymBug("g19_gqa_mi_stale", "gqa_decode_attn", "stale_state", 165, "mi[:] = mi_new", "mi[:] = m_ij"),
    GymBug("g19_gqa_mi_init_copy", "gqa_decode_attn", "stale_init", 152, "mi[:] = m_ij", "mi[:] = l_ij"),
    # --- sum_lstm: the RMSNorm helper (called twice) divides the wrong way round ---
    GymBug("g19_lstm_rms_div_swap", "sum_lstm", "swapped_operands", 65, "pypto.div(x_fp32, y)",
           "pypto.div(y, x_fp32)"),
    # --- sum_lstm: the state bias reshaped from the state weight (the line above, copied) ---
    GymBug("g19_lstm_bstate_copy", "sum_lstm", "wrong_operand", 117, "pypto.reshape(b_state,",
           "pypto.reshape(w_state,"),
    # --- sum_lstm: h's output cast through bf16 first (a doubled cast) ---
    GymBug("g19_lstm_h_double_cast", "sum_lstm", "dtype_route", 199, "pypto.cast(h_new_tile, x_dtype)",
           "pypto.cast(pypto.cast(h_new_tile, pypto.DT_BF16), x_dtype)"),
    # --- rms_norm: the batch loop one short (B = 1: no batch is computed) ---
    GymBug("g19_rms_batch_loop", "rms_norm", "loop_bound", 82, "pypto.loop(B, ", "pypto.loop(B - 1, "),
    # --- sigmoid: the batch-tile loop one short (the last 16-row tile is never written) ---
    GymBug("g19_sig_b_loop", "sigmoid", "loop_bound", 67, "pypto.loop(bs_loop,", "pypto.loop(bs_loop - 1,"),
    # --- flash_attention_score_grad: dQ's pass views dy without the (batch, head) base; dK/dV's pass is right ---
    GymBug("g19_fag_dy_pass1_offset", "flash_attention_score_grad", "wrong_view_offset", 281,
           "[S_TILE, HEAD_DIM], [s1_off, 0]", "[S_TILE, HEAD_DIM], [s1_idx * S_TILE, 0]"),
]

EXPECTED: dict[str, int] = {b.id: b.line for b in BUGS}
"""the culprit line each row should be named at, written before the blind run (every row: its own bugged line; the
helper's row at the helper's line 65, its call sites being 165 and 187)"""
