"""Single-line bugs planted at test time in the real gym operators (issue 30): the measure of bisect at real shapes.

The kernels are the vendor's own (``$FORGE_SHARED/gym`` or ``<repo>/../shared/gym``); nothing of them is copied
into the repository. A bug is a (file, line, replacement) triple: :func:`import_op` makes an operator directory
with ``python -m orchestrator import`` exactly as a gym user's run of ``runs.tsv`` does (the vendor's shapes and
dtypes), and :func:`materialize` copies it and replaces ``old`` by ``new`` on the recorded line of the imported
``<op>_impl.py`` (the gym module, unchanged, plus a wrapper: its lines are the vendor file's lines; the line's
text is checked against the vendor file before the bug is planted).

``bench/bisect_gym_corpus.py`` scores all of them; ``tests/bisect/test_bisect_gym_real.py`` runs a small subset.
"""

from __future__ import annotations

import ast
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def shared_gym() -> Path | None:
    """The gym corpus folder, or None when it is absent (callers skip and say why)."""
    gym = (Path(os.environ.get("FORGE_SHARED") or REPO.parent / "shared") / "gym").resolve()
    return gym if (gym / "runs.tsv").exists() else None


# op name -> the vendor kernel file (relative to gym/ops/<op>), whose lines the bugs refer to
OPS: dict[str, str] = {
    "attn_softmax": "src/pypto_gym/ops/pypto_tile/gemma4_31b_it/attn_softmax/attn_softmax_impl.py",
    "gqa_decode_attn": "src/pypto_gym/ops/pypto_tile/gemma4_31b_it/gqa_decode_attn/gqa_decode_attn_impl.py",
    "rms_norm": "src/pypto_gym/ops/pypto_tile/experimental/vector/rms_norm/rms_norm_impl.py",
    "sum_lstm": "src/pypto_gym/ops/pypto_tile/arctic/sum_lstm.py",
    "apply_adam_w_v2": "src/pypto_gym/ops/pypto_tile/experimental/vector/ApplyAdamWV2/apply_adam_w_v2_impl.py",
    "mhc_sinkhorn": "src/pypto_gym/ops/pypto_tile/experimental/vector/mhc_sinkhorn/mhc_sinkhorn_impl.py",
    "sigmoid": "src/pypto_gym/ops/pypto_tile/experimental/vector/sigmoid/sigmoid_impl.py",
    "llada2_gate_select": "src/pypto_gym/ops/pypto_tile/llada2_moe/llada2_gate_select_impl.py",
    "interleave_rope": "src/pypto_gym/ops/pypto_tensor/experimental/vector/InterleaveRope/interleave_rope_impl.py",
}


@dataclass(frozen=True)
class GymBug:
    id: str
    op: str
    kind: str
    """wrong_offset | wrong_axis | wrong_constant | missing_scale | exp_for_exp2 | wrong_sign | wrong_op |
    wrong_operand | stale_state | tail_bound | wrong_input | wrong_gather"""
    line: int
    """1-based line of the vendor kernel file (= of the imported ``<op>_impl.py``)"""
    old: str
    new: str


BUGS: list[GymBug] = [
    # attn_softmax: 3-pass tiled softmax (max, sum, normalize), bf16 in/out, fp32 inside
    GymBug("as_exp2", "attn_softmax", "exp_for_exp2", 55, "pypto.exp(r)", "pypto.exp2(r)"),
    GymBug("as_sum_stale", "attn_softmax", "stale_state", 60, "tsum[:] = pypto.add(tsum, ts)", "tsum[:] = ts"),
    GymBug("as_p2_scale", "attn_softmax", "wrong_constant", 53, "pypto.mul(r, scale)", "pypto.mul(r, scale * 2.0)"),
    GymBug("as_div", "attn_softmax", "wrong_op", 73, "pypto.div(r, tsum)", "pypto.mul(r, tsum)"),
    GymBug("as_p3_sign", "attn_softmax", "wrong_sign", 71, "pypto.sub(r, gmax)", "pypto.add(r, gmax)"),
    GymBug("as_p3_offset", "attn_softmax", "wrong_offset", 67, "[1, S_TILE], [m_idx, s_off]", "[1, S_TILE], [m_idx, 0]"),
    # gqa_decode_attn: online softmax over KV tiles with running state in local tensors
    GymBug("gqa_scale", "gqa_decode_attn", "wrong_constant", 127, "pypto.mul(sij, SCALE)", "pypto.mul(sij, 0.5)"),
    GymBug("gqa_alpha", "gqa_decode_attn", "wrong_sign", 155, "pypto.sub(mi, mi_new)", "pypto.sub(mi_new, mi)"),
    GymBug("gqa_li", "gqa_decode_attn", "missing_scale", 157, "pypto.add(pypto.mul(alpha, li), ",
           "pypto.add(li, "),
    GymBug("gqa_beta_stale", "gqa_decode_attn", "stale_state", 156, "pypto.sub(m_ij, mi_new)", "pypto.sub(m_ij, mi)"),
    GymBug("gqa_oi", "gqa_decode_attn", "missing_scale", 158, "pypto.mul(o_ij, beta)", "o_ij"),
    GymBug("gqa_v_offset", "gqa_decode_attn", "wrong_offset", 118, "[0, s2_start, 0]", "[0, 0, 0]"),
    # rms_norm: [1, 64, 256, 256] fp32, reduction over the channel axis
    GymBug("rms_axis", "rms_norm", "wrong_axis", 53, "dim=1", "dim=2"),
    GymBug("rms_mean", "rms_norm", "wrong_constant", 54, "s / num_features", "s / (num_features // 2)"),
    GymBug("rms_div", "rms_norm", "wrong_op", 57, "x / rms", "x * rms"),
    GymBug("rms_rsqrt", "rms_norm", "wrong_op", 56, "pypto.sqrt(mean_sq_eps)", "pypto.rsqrt(mean_sq_eps)"),
    GymBug("rms_sq", "rms_norm", "wrong_op", 52, "x * x", "x + x"),
    # sum_lstm: fused [B, 4H] input split by views, two RMSNorm+GELU helper calls, fp16 outputs
    GymBug("lstm_alpha", "sum_lstm", "wrong_constant", 146, "config.alpha", "config.eps_cell"),
    GymBug("lstm_split_i", "sum_lstm", "wrong_offset", 152, "hidden_dim * 1]", "hidden_dim * 2]"),
    GymBug("lstm_ogate", "sum_lstm", "wrong_op", 161, "pypto.sigmoid(pre_o)", "pypto.tanh(pre_o)"),
    GymBug("lstm_term2", "sum_lstm", "wrong_operand", 180, "pypto.mul(c_act, i_gate)", "pypto.mul(c_act, f_gate)"),
    GymBug("lstm_prev_row", "sum_lstm", "wrong_offset", 177, "[bs_offset, 0]", "[0, 0]"),
    GymBug("lstm_w_state", "sum_lstm", "wrong_input", 190, "pypto.mul(h_temp, w_state_b)",
           "pypto.mul(h_temp, w_cell_b)"),
    GymBug("lstm_rms_scale", "sum_lstm", "missing_scale", 59, "1.0 / x.shape[-1]", "2.0 / x.shape[-1]"),
    GymBug("lstm_gelu_const", "sum_lstm", "wrong_constant", 86, "pypto.mul(x, 1.702)", "pypto.mul(x, 1.0)"),
    # apply_adam_w_v2: fp32 path, [7168, 2048] state tensors (the largest corpus kernel)
    GymBug("adam_b1", "apply_adam_w_v2", "wrong_constant", 79, "one_m_b1", "one_m_b2"),
    GymBug("adam_gradsq", "apply_adam_w_v2", "wrong_operand", 81, "pypto.mul(g_tile, g_tile)",
           "pypto.mul(g_tile, m_tile)"),
    GymBug("adam_vhat", "apply_adam_w_v2", "wrong_constant", 86, "pypto.div(v_new, bc2", "pypto.div(v_new, bc1"),
    GymBug("adam_sign", "apply_adam_w_v2", "wrong_sign", 93, "pypto.sub(w_tile, scaled)",
           "pypto.add(w_tile, scaled)"),
    GymBug("adam_wd_input", "apply_adam_w_v2", "wrong_input", 90, "pypto.mul(w_tile, weight_decay)",
           "pypto.mul(g_tile, weight_decay)"),
    GymBug("adam_m_out", "apply_adam_w_v2", "wrong_operand", 96, "pypto.assemble(m_new,", "pypto.assemble(m_hat,"),
    # mhc_sinkhorn: 20 Sinkhorn iterations on [4, 4, T] after a transpose
    GymBug("mhc_exp2", "mhc_sinkhorn", "exp_for_exp2", 78, "pypto.exp(comb_flag - row_max)",
           "pypto.exp2(comb_flag - row_max)"),
    GymBug("mhc_col_stale", "mhc_sinkhorn", "stale_state", 90, "(col_sum + eps)", "(row_sum + eps)"),
    GymBug("mhc_col_axis", "mhc_sinkhorn", "wrong_axis", 89, "comb_flag.sum( 0, keepdim=True)",
           "comb_flag.sum( 1, keepdim=True)"),
    GymBug("mhc_row_axis", "mhc_sinkhorn", "wrong_axis", 87, "comb_flag.sum( 1, keepdim=True)",
           "comb_flag.sum( 0, keepdim=True)"),
    # sigmoid: [B, 16384] fp32 in [16, 512] tiles
    GymBug("sig_op", "sigmoid", "wrong_op", 74, "pypto.sigmoid(tile_x)", "pypto.exp(tile_x)"),
    GymBug("sig_stride", "sigmoid", "wrong_offset", 72, "d_idx * TILE_D]", "d_idx * TILE_B]"),
    GymBug("sig_out_col", "sigmoid", "wrong_offset", 75, "d_idx * TILE_D:]", "0:]"),
    GymBug("sig_tail", "sigmoid", "tail_bound", 69, ".min(TILE_B)", ".min(TILE_B - 1)"),
    # llada2_gate_select: sigmoid router scores + bias, group top-k, gather of the picked scores
    GymBug("ll_bias_sign", "llada2_gate_select", "wrong_sign", 100, "pypto.add(scores, bias_tile)",
           "pypto.sub(scores, bias_tile)"),
    GymBug("ll_gather_input", "llada2_gate_select", "wrong_gather", 133, "pypto.gather(scores, 1, picks)",
           "pypto.gather(scores_aug, 1, picks)"),
    GymBug("ll_scale", "llada2_gate_select", "missing_scale", 137, "pypto.mul(tw_norm, routed_scaling_factor)",
           "pypto.mul(tw_norm, 1.0)"),
    GymBug("ll_norm_op", "llada2_gate_select", "wrong_op", 135, "pypto.sum(tw, -1, True)", "pypto.amax(tw, -1, True)"),
    GymBug("ll_act", "llada2_gate_select", "wrong_op", 96, "pypto.sigmoid(logits)", "pypto.exp(logits)"),
    # interleave_rope (session 6): [B, 128, 1024, 64] bf16, kernel n128_bf16 - even/odd lanes by gathermask, the two
    # halves of each row written by two assembles (the half-split a geometry rule must not flag)
    GymBug("rope_sign", "interleave_rope", "wrong_sign", 90, "pypto.sub(pypto.mul(x_e, c_e)",
           "pypto.add(pypto.mul(x_e, c_e)"),
    GymBug("rope_operand", "interleave_rope", "wrong_operand", 91, "pypto.mul(x_o, c_o)", "pypto.mul(x_o, c_e)"),
    GymBug("rope_half_off", "interleave_rope", "wrong_offset", 93, "[b, n_off, s_off, HALF], out",
           "[b, n_off, s_off, 0], out"),
    GymBug("rope_cos_stale", "interleave_rope", "wrong_offset", 78, "[b, 0, s_off, 0],", "[b, 0, 0, 0],"),
    GymBug("rope_gather", "interleave_rope", "wrong_gather", 86, "gathermask(c_t, pattern_mode=2)",
           "gathermask(c_t, pattern_mode=1)"),
    GymBug("rope_sin_input", "interleave_rope", "wrong_input", 80, "pypto.view(sin,", "pypto.view(cos,"),
    GymBug("rope_x_head", "interleave_rope", "wrong_offset", 76, "[b, n_off, s_off, 0],", "[b, 0, s_off, 0],"),
]


def _runs(gym: Path) -> dict[str, tuple[str, str]]:
    out = {}
    for ln in (gym / "runs.tsv").read_text().splitlines():
        if ln.startswith("#") or not ln.strip():
            continue
        name, d, cmd, _ok = ln.split("\t")
        out[name] = (d, cmd)
    return out


def import_op(op: str, dest_root: Path, *, timeout: float = 600.0) -> Path:
    """The operator directory of gym operator ``op`` under ``dest_root`` (imported once as ``runs.tsv`` runs it)."""
    from orchestrator.adapters.gym import import_gym_op

    gym = shared_gym()
    if gym is None:
        raise FileNotFoundError("no gym corpus (set FORGE_SHARED)")
    dest = dest_root / op
    if (dest / "SPEC.md").exists():
        return dest
    d, cmd = _runs(gym)[op]
    parts = d.split("/", 1)
    import_gym_op(gym / "ops" / op, dest, command=cmd, cwd=parts[1] if len(parts) > 1 else None, timeout=timeout)
    return dest


def statement_lines(source: str, line: int) -> tuple[int, int]:
    """First and last line of the innermost simple statement that contains ``line`` (a bug on a continuation line
    of a call belongs to the whole statement: the tracer attributes its ops to the statement)."""
    best = (line, line)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and not isinstance(node, ast.FunctionDef | ast.ClassDef | ast.For | ast.If
                                                         | ast.While | ast.With | ast.AsyncFunctionDef):
            lo, hi = node.lineno, node.end_lineno or node.lineno
            if lo <= line <= hi and (best == (line, line) or hi - lo < best[1] - best[0]):
                best = (lo, hi)
    return best


def materialize(bug: GymBug, op_dir: Path, tmp: Path) -> tuple[Path, str, tuple[int, int]]:
    """Copy ``op_dir`` to ``tmp/<bug.id>`` with the bug planted; returns (op dir, stage file, bugged statement's
    line span)."""
    gym = shared_gym()
    assert gym is not None
    vendor = (gym / "ops" / bug.op / OPS[bug.op]).read_text(encoding="utf-8").splitlines()
    dest = tmp / bug.id
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(op_dir, dest)
    stage = f"{bug.op}_impl.py"
    lines = (dest / stage).read_text(encoding="utf-8").splitlines(keepends=True)
    text = lines[bug.line - 1]
    assert text.rstrip("\r\n") == vendor[bug.line - 1], f"{bug.id}: the imported kernel's line {bug.line} is not the vendor's"
    assert text.count(bug.old) == 1, f"{bug.id}: {bug.old!r} is not once on line {bug.line}: {text!r}"
    lines[bug.line - 1] = text.replace(bug.old, bug.new)
    src = "".join(lines)
    (dest / stage).write_text(src, encoding="utf-8")
    return dest, stage, statement_lines(src, bug.line)


def bisect_row(bugs: list[GymBug], materialize_fn, bug_id: str, op_root: Path, tmp: Path,  # noqa: ANN001
               golden_cache: dict, *, timeout: float = 1800.0):  # noqa: ANN201 - (BisectReport, line span)
    """Bisect the corpus row ``bug_id`` of ``bugs`` on its real operator: imported under ``op_root`` (once per
    module: the ``op_root`` fixture), planted by the corpus' own ``materialize_fn`` into ``tmp``. Returns the report
    and the bugged statement's line span - what every corpus' slow test scores (one helper, not a copy per corpus)."""
    from runtime.bisect import bisect

    bug = next(b for b in bugs if b.id == bug_id)
    d, stage, span = materialize_fn(bug, import_op(bug.op, op_root), tmp)
    return bisect(d, stage, golden_cache=golden_cache, timeout=timeout), span


def assert_named_at_line(bug_id: str, rep, span: tuple[int, int]) -> None:  # noqa: ANN001 - a BisectReport
    """The score of a corpus' named row: the first divergence is an op (not a matching value, an input or a
    constant) on the bugged statement's lines (or called from them)."""
    lo, hi = span
    f = rep.first_divergence
    assert f is not None and any(lo <= (x or 0) <= hi for x in (f.line, f.call_site)), \
        (bug_id, rep.summary, rep.evidence)
    assert f.status not in ("match", "input", "const"), rep.to_json()
