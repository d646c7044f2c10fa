"""A second corpus of single-line bugs planted in the real gym operators, written against the first one's blind spots.

``gym_corpus.BUGS`` (50 bugs, 50 named) measures the bugs its authors imagined: a wrong op, constant, sign or
offset on a kernel line whose value the golden names. An outside evaluator's own bugs were named 5 of 20 times.
These are the kinds an LLM writes by accident and the first corpus has few of: mostly in the gym operators the first
corpus does not use (gather_pa_kv_cache, gated_delta_rule, flash_attention_score_grad), plus new kinds in its
operators:

- a bug in a Python helper the kernel calls (``compute_tile``, ``gelu_activation_core``) or in a module constant;
- a bug in the host wrapper, outside the kernel (the kernel then computes the right thing on a wrong argument);
- a reduction over the wrong axis, ``keepdim`` dropped, swapped operands of ``sub`` / ``div``;
- an index off by one in a symbolic loop (``i`` for ``i + 1``), a wrong view source, a loop bound or tail bound
  that only matters on the last (partial) tile, a missing accumulator initialisation.

Same format and helpers as ``gym_corpus`` (``GymBug``, ``import_op``, ``materialize``); the vendor files the line
numbers refer to are added to ``gym_corpus.OPS`` on import. ``bench/bisect_gym_corpus.py --corpus fresh`` scores
them. gym operators that do not import (swiglu_mlp, quant_batch_matmul, bn_training_reduce: their gym tests compute
the reference inline, no golden function to import) are not in it. As imported, three operators cannot be scored:
gated_delta_rule's stage imports ``torch_npu``, which verify's sandbox does not provide (its bugs are scored
``excluded``); gather_pa_kv_cache's golden refuses the SPEC's independently drawn inputs (``UNRUNNABLE``);
flash_attention_score_grad's pristine kernel departs from its golden on them, so :func:`prepare` gives its golden.py
a ``make_inputs`` with consistent softmax statistics (the kernel is untouched). Use this module's
:func:`materialize` (it prepares the operator first).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import gym_corpus as _base
from gym_corpus import GymBug, import_op, shared_gym, statement_lines  # noqa: F401 - re-exported

OPS = _base.OPS
OPS.setdefault("gather_pa_kv_cache",
               "src/pypto_gym/ops/pypto_tile/experimental/vector/gather_pa_kv_cache/gather_pa_kv_cache_impl.py")
OPS.setdefault("gated_delta_rule", "src/pypto_gym/ops/pypto_tensor/qwen3_5_9b/gated_delta_rule/gated_delta_rule_impl.py")
OPS.setdefault("flash_attention_score_grad", "src/pypto_gym/ops/pypto_tile/experimental/ops_transformer/"
               "flash_attention_score_grad/flash_attention_score_grad_impl.py")

# Inputs a corpus operator needs that SPEC.md cannot say (correlated inputs): golden.py of the imported operator gets
# a ``make_inputs(case, rng)`` (runtime.opdir calls it instead of drawing each input independently). Applied to a copy
# of the imported operator (:func:`prepare`), for the pristine operator and every bug alike; the kernel is untouched.
_FAG_INPUTS = """


def make_inputs(case, rng):
    # (gym_corpus_fresh) softmax statistics and attention output of the forward pass the gradient is taken of: drawn
    # independently (as SPEC.md's ranges say), exp(s - softmax_max) / softmax_sum is not a softmax and the pristine
    # kernel departs from its golden by 64
    import ml_dtypes
    import numpy as np

    b, s, n, d = case["dims"]["QUERY0"], case["dims"]["QUERY2"], 8, 64
    bf = ml_dtypes.bfloat16
    q, k, v, dy = (rng.standard_normal((b, n, s, d)).astype(bf) for _ in range(4))
    qf, kf, vf = (x.astype(np.float32) for x in (q, k, v))
    sc = np.einsum("bnsd,bntd->bnst", qf, kf) * 0.125
    m = sc.max(-1, keepdims=True)
    e = np.exp(sc - m)
    l = e.sum(-1, keepdims=True)
    out = np.einsum("bnst,bntd->bnsd", e / l, vf).astype(bf)
    return [q, k, v, dy, np.repeat(m, 8, -1).astype(np.float32), np.repeat(l, 8, -1).astype(np.float32), out]
"""

GOLDEN_ADDITIONS: dict[str, str] = {"flash_attention_score_grad": _FAG_INPUTS}


def prepare(op: str, op_dir: Path) -> Path:
    """The imported operator as the corpus runs it: ``op_dir`` itself, or a copy (next to it, made once) whose
    golden.py gets what :data:`GOLDEN_ADDITIONS` says."""
    extra = GOLDEN_ADDITIONS.get(op)
    if extra is None:
        return op_dir
    dest = op_dir.parent / f"{op_dir.name}.fresh"
    if not (dest / "SPEC.md").exists():
        tmp = op_dir.parent / f"{op_dir.name}.fresh.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        shutil.copytree(op_dir, tmp)
        g = tmp / "golden.py"
        g.write_text(g.read_text(encoding="utf-8") + extra, encoding="utf-8")
        tmp.rename(dest)
    return dest


def materialize(bug: GymBug, op_dir: Path, tmp: Path) -> tuple[Path, str, tuple[int, int]]:
    """``gym_corpus.materialize`` on the prepared operator (:func:`prepare`)."""
    return _base.materialize(bug, prepare(bug.op, op_dir), tmp)


BUGS: list[GymBug] = [
    # gated_delta_rule: chunked linear attention, one 128-row chunk per head (S = 16 padded by the wrapper)
    GymBug("gdr_k_axis", "gated_delta_rule", "wrong_axis", 137, "pypto.sum(k_sq, dim=-1", "pypto.sum(k_sq, dim=0"),
    GymBug("gdr_q_keepdim", "gated_delta_rule", "keepdim_dropped", 131, "dim=-1, keepdim=True", "dim=-1, keepdim=False"),
    GymBug("gdr_vnew_swap", "gated_delta_rule", "swapped_operands", 178, "pypto.sub(v_out, v_prime)",
           "pypto.sub(v_prime, v_out)"),
    GymBug("gdr_glast_row", "gated_delta_rule", "wrong_view_offset", 186, "[1, 1], [L - 1, 0]", "[1, 1], [0, 0]"),
    GymBug("gdr_scale_const", "gated_delta_rule", "module_constant", 78, "1.0 / (_D ** 0.5)", "1.0 / _D"),
    GymBug("gdr_wrapper_cumsum", "gated_delta_rule", "wrapper", 262, "g_perm.cumsum(dim=-1)", "g_perm.cumsum(dim=1)"),
    # flash_attention_score_grad: backward of attention, helper compute_tile called from two loop nests
    GymBug("fag_helper_sub", "flash_attention_score_grad", "swapped_operands", 57, "pypto.sub(dp_ij, d_i)",
           "pypto.sub(d_i, dp_ij)"),
    GymBug("fag_helper_div", "flash_attention_score_grad", "swapped_operands", 46, "pypto.div(p_ij, ssum_i)",
           "pypto.div(ssum_i, p_ij)"),
    GymBug("fag_d_axis", "flash_attention_score_grad", "wrong_axis", 355, "pypto.sum(dy_ao_fp32, -1, keepdim=True)",
           "pypto.sum(dy_ao_fp32, 0, keepdim=True)"),
    GymBug("fag_dv_scale", "flash_attention_score_grad", "wrong_constant", 379, "pypto.cast(dv_acc, pypto.DT_BF16)",
           "pypto.cast(pypto.mul(dv_acc, scale_value), pypto.DT_BF16)"),
    GymBug("fag_acc_init", "flash_attention_score_grad", "missing_init", 370, "dk_acc[:] = dk_tile",
           "dk_acc[:] = dk_acc + dk_tile"),
    GymBug("fag_d_bf16", "flash_attention_score_grad", "cast_too_late", 292,
           "pypto.sum(dy_ao_fp32, -1, keepdim=True)", "pypto.sum(pypto.mul(dy_i, ao_i), -1, keepdim=True)"),
    GymBug("fag_wrapper_ss", "flash_attention_score_grad", "wrapper", 412, "softmax_sum.reshape(-1, 8)",
           "softmax_max.reshape(-1, 8)"),
    # sigmoid: [B, D] in [16, 512] tiles; bugs that only the partial last tile shows
    GymBug("sig_d_tail", "sigmoid", "tail_only", 70, "(D - d_idx * TILE_D).min(TILE_D)",
           "(D - d_idx * TILE_D - 1).min(TILE_D)"),
    GymBug("sig_d_loop", "sigmoid", "loop_bound", 64, "(D + TILE_D - 1) // TILE_D", "(D + 3) // TILE_D"),
    # attn_softmax: the wrapper pads S to a multiple of S_TILE with a large negative score
    GymBug("as_wrapper_pad", "attn_softmax", "wrapper", 89, "FILL_VAL = -1e9", "FILL_VAL = 0.0"),
    # sum_lstm: the GELU helper is called twice per row
    GymBug("lstm_gelu_operand", "sum_lstm", "helper", 88, "pypto.mul(x, sigmoid)", "pypto.mul(x_scaled, sigmoid)"),
    # llada2_gate_select: router; the bias tile is built row by row in a Python loop
    GymBug("ll_denom_axis", "llada2_gate_select", "wrong_axis", 135, "pypto.sum(tw, -1, True)", "pypto.sum(tw, 0, True)"),
    GymBug("ll_bias_row", "llada2_gate_select", "wrong_view_offset", 99, "[tmp_idx, 0]", "[0, 0]"),
    GymBug("ll_norm_swap", "llada2_gate_select", "swapped_operands", 136, "pypto.div(tw, denom)", "pypto.div(denom, tw)"),
    # rms_norm: the helper is called with the wrong feature count (the bug is the call's argument)
    GymBug("rms_core_arg", "rms_norm", "helper_argument", 84, "rms_norm_core(x_slice, eps, C)",
           "rms_norm_core(x_slice, eps, H)"),
    GymBug("lstm_rms_keepdim", "sum_lstm", "keepdim_dropped", 60, "pypto.sum(y, -1, keepdim=True)",
           "pypto.sum(y, -1, keepdim=False)"),
]

# Not runnable as imported (kept for when the import is fixed): gather_pa_kv_cache's SPEC draws ``seq_offset`` in
# [0, 1] and ``seq_lens`` independently of ``KEY_REF0``, and its golden refuses such inputs ("seq_offset values must be
# divisible by block_size"): every case fails in golden.py before the kernel runs (an import question: the inputs are
# correlated, the SPEC cannot say so).
UNRUNNABLE: list[GymBug] = [
    # gather_pa_kv_cache: paged KV gather, block tables and cumulative sequence lengths; pure data movement
    GymBug("gpa_tail", "gather_pa_kv_cache", "tail_bound", 72, "(seq_len - token_offset).min(block_size)",
           "(seq_len - token_offset - 1).min(block_size)"),
    GymBug("gpa_table_next", "gather_pa_kv_cache", "index_off_by_one", 70, "table_offset + block_idx]",
           "table_offset + block_idx + 1]"),
    GymBug("gpa_value_src", "gather_pa_kv_cache", "wrong_view_source", 91, "value_cache_3d,", "key_cache_3d,"),
    GymBug("gpa_wrapper_cumsum", "gather_pa_kv_cache", "wrapper", 264, "torch.cumsum(lengths, dim=0)", "lengths"),
]
