"""The held-out-style corpus (issue 19): single-line bugs in realistic kernels written in the gym's style.

Seven correct base kernels (``heldout_data/<op>/``: SPEC.md, golden.py in the gym's style with named
intermediates, ``<op>_impl.py``) cover the shapes of kernel the issue names: a fused projection split by views
of the intermediate (``lstm_cell``, ``swiglu_fused``), online softmax with running state in local tensors and a
local copy of the query group (``gqa_decode``), a padded output with a tail (``rms_norm_channels``), multi-pass
kernels where two passes share code text (``rms_norm_channels``, ``softmax_two_pass`` through one helper), a
large optimizer-style kernel (``adamw``, 2M parameters) and interleaved RoPE (``rope_interleaved``).

Every variant replaces one snippet on one line (the ``nth`` occurrence of ``old``, default the only one); the
expected culprit is that line. ``bench/bisect_corpus.py`` scores all of them; the tests run a subset.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

HELDOUT = Path(__file__).with_name("heldout_data")


@dataclass(frozen=True)
class Bug:
    id: str
    op: str
    kind: str
    """wrong_constant | wrong_operand | wrong_op | wrong_offset | missing_term | rebound_state | wrong_sign"""
    old: str
    new: str
    nth: int = 0
    """Which occurrence of ``old`` is replaced (identical code text on several lines)."""

    @property
    def stage_name(self) -> str:
        return f"{self.op}_impl.py"


BUGS: list[Bug] = [
    # lstm_cell: fused [T, 4H] projection split by views at column offsets 0, H, 2H, 3H
    Bug("lstm_split_forget", "lstm_cell", "wrong_offset", "pypto.view(gates, [T, H], [0, H]))",
        "pypto.view(gates, [T, H], [0, 2 * H]))"),
    Bug("lstm_cell_act", "lstm_cell", "wrong_op", "g_g = pypto.tanh(", "g_g = pypto.sigmoid("),
    Bug("lstm_c_swap", "lstm_cell", "wrong_operand", "c_t = f_g * ct + i_g * g_g", "c_t = i_g * ct + f_g * g_g"),
    Bug("lstm_h_oldc", "lstm_cell", "wrong_operand", "h_t = o_g * pypto.tanh(c_t)", "h_t = o_g * pypto.tanh(ct)"),
    Bug("lstm_hh_input", "lstm_cell", "wrong_operand", "pypto.matmul(ht, w_hh, pypto.DT_FP32)",
        "pypto.matmul(xt, w_hh, pypto.DT_FP32)"),
    Bug("lstm_bias_sign", "lstm_cell", "wrong_sign", "pypto.DT_FP32) + b", "pypto.DT_FP32) - b"),
    Bug("lstm_out_swap", "lstm_cell", "wrong_operand", "pypto.assemble(c_t, [r * T, 0], c_new)",
        "pypto.assemble(h_t, [r * T, 0], c_new)"),
    # gqa_decode: online softmax, running state in local tensors, query group copied into a local tile
    Bug("gqa_scale", "gqa_decode", "wrong_constant", "b_trans=True) * SCALE", "b_trans=True) * 0.25"),
    Bug("gqa_head_k", "gqa_decode", "wrong_offset", "kt = pypto.view(k, [BLK, D], [j * BLK, hk * D]",
        "kt = pypto.view(k, [BLK, D], [j * BLK, 0]"),
    Bug("gqa_q_group", "gqa_decode", "wrong_offset", "pypto.view(q, [G, D], [hk * G, 0])",
        "pypto.view(q, [G, D], [hk * NKV, 0])"),
    Bug("gqa_alpha", "gqa_decode", "wrong_operand", "alpha = pypto.exp(m - m_new)", "alpha = pypto.exp(m_new - m)"),
    Bug("gqa_lsum_rescale", "gqa_decode", "missing_term", "lsum[:] = lsum * alpha + pypto.sum",
        "lsum[:] = lsum + pypto.sum"),
    Bug("gqa_rebound_m", "gqa_decode", "rebound_state", "                m[:] = m_new", "                m = m_new"),
    # rms_norm_channels: two passes over 64-channel chunks, output padded to whole tiles
    Bug("rmsc_mean", "rms_norm_channels", "wrong_constant", "pypto.sqrt(acc * (1.0 / C) + EPS)",
        "pypto.sqrt(acc * (1.0 / CC) + EPS)"),
    Bug("rmsc_rebound_acc", "rms_norm_channels", "rebound_state", "acc[:] = acc + part", "acc = acc + part"),
    Bug("rmsc_weight_offset", "rms_norm_channels", "wrong_offset", "pypto.view(weight, [1, CC], [0, k * CC])",
        "pypto.view(weight, [1, CC], [0, 0])"),
    Bug("rmsc_div", "rms_norm_channels", "wrong_op", "yt = xt / rms * wt", "yt = xt * rms * wt"),
    Bug("rmsc_sumsq", "rms_norm_channels", "wrong_op", "part = pypto.sum(xt * xt, -1, keepdim=True)",
        "part = pypto.amax(xt * xt, -1, keepdim=True)"),
    # adamw: 2M parameters, 32 x 512 tiles
    Bug("adamw_v_sq", "adamw", "missing_term", "v_new = v * BETA2 + g * g * (1.0 - BETA2)",
        "v_new = v * BETA2 + g * (1.0 - BETA2)"),
    Bug("adamw_bc", "adamw", "wrong_constant", "m_hat = m_new / BC1", "m_hat = m_new / BC2"),
    Bug("adamw_decay", "adamw", "wrong_constant", "decayed = p * (1.0 - LR * WD)", "decayed = p * (1.0 - WD)"),
    Bug("adamw_m_hat", "adamw", "wrong_operand", "p_new = decayed - m_hat / denom * LR",
        "p_new = decayed - m_new / denom * LR"),
    Bug("adamw_v_view", "adamw", "wrong_operand", "v = pypto.view(exp_avg_sq, [TR, TC]", "v = pypto.view(exp_avg, [TR, TC]"),
    # rope_interleaved
    Bug("rope_sign", "rope_interleaved", "wrong_sign", "rot_even = x_even * ct - x_odd * st",
        "rot_even = x_even * ct + x_odd * st"),
    Bug("rope_swap_cs", "rope_interleaved", "wrong_operand", "rot_odd = x_even * st + x_odd * ct",
        "rot_odd = x_even * ct + x_odd * st"),
    Bug("rope_order", "rope_interleaved", "wrong_operand", "pypto.interleave(rot_even, rot_odd)",
        "pypto.interleave(rot_odd, rot_even)"),
    Bug("rope_sin_rows", "rope_interleaved", "wrong_offset", "st = pypto.view(sin, [T, DH], [i * T, 0]",
        "st = pypto.view(sin, [T, DH], [0, 0]"),
    # softmax_two_pass: one helper loads a chunk for both passes (identical code text, two call sites)
    Bug("sm2_rescale", "softmax_two_pass", "missing_term", "den[:] = den * pypto.exp(mx - m_new) +", "den[:] = den +"),
    Bug("sm2_stale_max", "softmax_two_pass", "wrong_operand", "yt = pypto.exp(xt - mx) / den",
        "yt = pypto.exp(xt - cmax) / den"),
    Bug("sm2_mx_update", "softmax_two_pass", "wrong_operand", "                mx[:] = m_new",
        "                mx[:] = cmax"),
    Bug("sm2_pass2_chunk", "softmax_two_pass", "wrong_operand", "xt = load_chunk(x, i, k, valid)",
        "xt = load_chunk(x, i, j, valid)"),
    Bug("sm2_write_offset", "softmax_two_pass", "wrong_offset", "pypto.assemble(yt, [i * T, k * CC], y)",
        "pypto.assemble(yt, [i * T, (k * CC + CC) % L], y)"),
    # swiglu_fused: fused gate/up projection split by two views
    Bug("swi_up_offset", "swiglu_fused", "wrong_offset", "up = pypto.view(gu, [T, F], [0, F])",
        "up = pypto.view(gu, [T, F], [0, 0])"),
    Bug("swi_silu_sign", "swiglu_fused", "wrong_sign", "silu = gate / (pypto.exp(-gate) + 1.0)",
        "silu = gate / (pypto.exp(gate) + 1.0)"),
    Bug("swi_act", "swiglu_fused", "wrong_operand", "act = silu * up", "act = silu * gate"),
    Bug("swi_down_input", "swiglu_fused", "wrong_operand", "ot = pypto.matmul(act, w_down", "ot = pypto.matmul(silu, w_down"),
]

OPS = sorted({b.op for b in BUGS})


def materialize(b: Bug, dest: Path) -> tuple[Path, Path, int]:
    """Copy the base op dir to ``dest/<id>``, inject the bug; return (op dir, stage file, bugged line)."""
    op_dir = dest / b.id
    shutil.copytree(HELDOUT / b.op, op_dir)
    stage = op_dir / b.stage_name
    lines = stage.read_text().splitlines(keepends=True)
    where = [i for i, line in enumerate(lines) if b.old in line]
    assert len(where) > b.nth and (b.nth or len(where) == 1), f"{b.id}: {b.old!r} occurs {len(where)} times"
    i = where[b.nth]
    assert lines[i].count(b.old) == 1, f"{b.id}: {b.old!r} twice on one line"
    lines[i] = lines[i].replace(b.old, b.new)
    stage.write_text("".join(lines))
    return op_dir, stage, i + 1
