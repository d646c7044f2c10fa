"""The bugged-variant corpus: correct base kernels (corpus_data/<op>/) plus one injected bug each.

Every variant replaces one snippet on one line of the base kernel. ``culprit`` names the line the tool
must report as the first divergence: by default the replaced line; for a deleted initialization it is
the line that reads the uninitialized state (a deleted line has no line number of its own).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).with_name("corpus_data")


@dataclass(frozen=True)
class Variant:
    id: str
    op: str
    kind: str
    """wrong_constant | wrong_axis | off_by_one | missing_cast | wrong_valid_shape | acc_uninit |
    rebound_state | wrong_transpose"""
    old: str
    new: str
    culprit: str | None = None
    """A snippet of the expected culprit line when it is not the replaced line."""

    @property
    def stage_name(self) -> str:
        return f"{self.op}_impl.py"


VARIANTS: list[Variant] = [
    # rms_norm (fp32)
    Variant("rms_const_mean", "rms_norm", "wrong_constant", "ms = ss * (1.0 / D)", "ms = ss * (2.0 / D)"),
    Variant("rms_axis_sum", "rms_norm", "wrong_axis", "pypto.sum(sq, -1, keepdim=True)", "pypto.sum(sq, 0, keepdim=True)"),
    Variant("rms_const_eps", "rms_norm", "wrong_constant", "pypto.rsqrt(ms + EPS)", "pypto.rsqrt(ms + 0.5)"),
    Variant("rms_tail_valid", "rms_norm", "wrong_valid_shape", "valid_shape=[valid, D])", "valid_shape=[T, D])"),
    Variant("rms_offset_write", "rms_norm", "off_by_one", "pypto.assemble(yt, [i * T, 0], y)",
            "pypto.assemble(yt, [i * T + 1, 0], y)"),
    Variant("rms_tail_short", "rms_norm", "wrong_valid_shape", "valid_shape=[valid, D])", "valid_shape=[valid - 1, D])"),
    # layer_norm (bf16 in/out, large mean: every step before the subtraction must be fp32)
    Variant("ln_missing_cast", "layer_norm", "missing_cast", "s = pypto.sum(xf, -1, keepdim=True)",
            "s = pypto.sum(xt, -1, keepdim=True)"),
    Variant("ln_const_var", "layer_norm", "wrong_constant", "var = vs * (1.0 / D)", "var = vs * (1.0 / (D - 1))"),
    Variant("ln_axis_var", "layer_norm", "wrong_axis", "pypto.sum(d2, -1, keepdim=True)", "pypto.sum(d2, 0, keepdim=True)"),
    Variant("ln_offset_beta", "layer_norm", "off_by_one", "pypto.view(beta, [1, D], [0, 0])",
            "pypto.view(beta, [1, D], [0, 1])"),
    # softmax (fp32)
    Variant("sm_axis_max", "softmax", "wrong_axis", "pypto.amax(xs, -1, keepdim=True)", "pypto.amax(xs, 0, keepdim=True)"),
    Variant("sm_const_scale", "softmax", "wrong_constant", "xs = xt * SCALE", "xs = xt * 0.25"),
    Variant("sm_axis_sum", "softmax", "wrong_axis", "pypto.sum(e, -1, keepdim=True)", "pypto.sum(e, 0, keepdim=True)"),
    Variant("sm_offset_read", "softmax", "off_by_one", "[i * T, 0], valid_shape=[valid, D])",
            "[i * T + 1, 0], valid_shape=[valid, D])"),
    # l2norm_tiled (fp32, column-chunked accumulator)
    Variant("l2_acc_uninit", "l2norm_tiled", "acc_uninit", "acc[:] = pypto.full([T, 1], 0.0, pypto.DT_FP32)",
            "pass  # accumulator initialization removed", culprit="acc[:] = acc + part"),
    Variant("l2_rebound", "l2norm_tiled", "rebound_state", "acc[:] = acc + part", "acc = acc + part"),
    Variant("l2_const_mean", "l2norm_tiled", "wrong_constant", "ms = acc * (1.0 / D)", "ms = acc * (1.0 / C)"),
    Variant("l2_offset_chunk", "l2norm_tiled", "off_by_one", "[i * T, j * C], valid_shape=[valid, C])",
            "[i * T, j * C + 1], valid_shape=[valid, C])"),
    Variant("l2_tail_write", "l2norm_tiled", "wrong_valid_shape", "[i * T, k * C], valid_shape=[valid, C])",
            "[i * T, k * C], valid_shape=[T, C])"),
    # linear (fp32 matmul)
    Variant("lin_b_trans", "linear", "wrong_transpose", "a_trans=False, b_trans=True", "a_trans=False, b_trans=False"),
    Variant("lin_a_trans", "linear", "wrong_transpose", "a_trans=False, b_trans=True", "a_trans=True, b_trans=True"),
    Variant("lin_const_alpha", "linear", "wrong_constant", "ys = mm * ALPHA", "ys = mm * 0.05"),
    Variant("lin_offset_bias", "linear", "off_by_one", "pypto.view(bias, [1, N], [0, 0])",
            "pypto.view(bias, [1, N], [0, 1])"),
    # silu (fp32, 2-D tiles)
    Variant("silu_const_one", "silu", "wrong_constant", "den = e + 1.0", "den = e + 2.0"),
    Variant("silu_offset_col", "silu", "off_by_one", "pypto.assemble(yt, [i * T, j * C], y)",
            "pypto.assemble(yt, [i * T, j * C + 1], y)"),
]


REAL_ONLY_VARIANTS: list[Variant] = [
    # flash_attention (runtime branches: the real emulator only)
    Variant("fa_const_scale", "flash_attention", "wrong_constant", "b_trans=True) * SCALE", "b_trans=True) * 0.25"),
    Variant("fa_rebound_max", "flash_attention", "rebound_state", "m[:] = m_new", "m = m_new"),
    Variant("fa_lsum_uninit", "flash_attention", "acc_uninit", "lsum[:] = pypto.sum(p, -1, keepdim=True)",
            "pass  # running-sum initialization removed", culprit="lsum[:] = lsum * alpha"),
    Variant("fa_tail_valid", "flash_attention", "wrong_valid_shape", "vt = pypto.view(v, [BLK, FD], [j * BLK, 0], valid_shape=[valid, FD])",
            "vt = pypto.view(v, [BLK, FD], [j * BLK, 0], valid_shape=[BLK, FD])"),
    Variant("fa_b_trans", "flash_attention", "wrong_transpose", "pypto.matmul(q, kt, pypto.DT_FP32, b_trans=True)",
            "pypto.matmul(q, kt, pypto.DT_FP32, b_trans=False)"),
]
"""Variants of kernels only the real emulator runs (runtime branches on is_loop_begin/is_loop_end)."""

REAL_ONLY_OPS = frozenset(v.op for v in REAL_ONLY_VARIANTS)


@dataclass(frozen=True)
class CheckpointVariant:
    """A bug between checkpoints of ``rms_norm_ckpt`` (checkpoints ``ms`` then ``inv`` in data-flow order)."""

    id: str
    old: str
    new: str
    first_checkpoint: str
    drift_onset: dict
    op: str = "rms_norm_ckpt"
    kind: str = ""
    culprit: str | None = None

    @property
    def stage_name(self) -> str:
        return f"{self.op}_impl.py"


CHECKPOINT_VARIANTS: list[CheckpointVariant] = [
    CheckpointVariant("ck_const_ms", "mst = ss * (1.0 / D)", "mst = ss * (2.0 / D)", "ms", {"loop_1": 0}),
    CheckpointVariant("ck_const_eps", "pypto.rsqrt(mst + EPS)", "pypto.rsqrt(mst + 0.5)", "inv", {"loop_1": 0}),
    CheckpointVariant("ck_const_sq", "sq = xf * xf", "sq = xf * xf * 0.5", "ms", {"loop_1": 0}),
    CheckpointVariant("ck_tail_short", "valid_shape=[valid, D])", "valid_shape=[valid - 1, D])", "ms",
                      {"loop_1": 0}),
    CheckpointVariant("ck_shift_late", "[i * T, 0], valid_shape=[valid, D])",
                      "[i * T - i // 2, 0], valid_shape=[valid, D])", "ms", {"loop_1": 2}),
]


def materialize(v: Variant | CheckpointVariant, dest: Path) -> tuple[Path, Path, int]:
    """Copy the base op dir to ``dest``, inject the bug; return (op dir, stage file, culprit line)."""
    src = CORPUS / v.op
    op_dir = dest / v.id
    shutil.copytree(src, op_dir)
    stage = op_dir / v.stage_name
    text = stage.read_text()
    assert text.count(v.old) == 1, f"{v.id}: snippet must occur exactly once: {v.old!r}"
    text = text.replace(v.old, v.new)
    stage.write_text(text)
    lines = text.splitlines()
    marker = v.culprit or v.new
    hits = [i + 1 for i, line in enumerate(lines) if marker in line]
    assert len(hits) == 1, f"{v.id}: culprit marker must identify one line: {marker!r}"
    return op_dir, stage, hits[0]
