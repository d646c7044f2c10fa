"""An eighteenth corpus of single-line bugs in real gym operators (session 46), planted at test time (nothing of the
vendor's code is copied here; ``GymBug`` format of tests/bisect/gym_corpus.py, lines are the vendor file's).

Written blind (before reading runtime/bisect's rules for them). Five rows go in bn_training_reduce, a gym operator no
earlier corpus could score: ``python -m orchestrator import`` finds no golden function (its gym test computes the
reference inline), so :func:`prepare` writes its operator directory at test time - SPEC.md (the gym test's shapes and
``torch.rand`` inputs), a golden.py (the gym test's two-line reference: per-channel sum and sum of squares) and the
kernel file = the vendor file, unchanged, with a wrapper appended (its lines are the vendor's). It has two outputs, the
second fed by its own chain: a bug there reaches only the second output. The other rows go in operators earlier
corpora used, on lines none of them plants: llada2_gate_select's ``b_trans`` and its input cast, interleave_rope's odd
sine lane, mhc_sinkhorn's transpose before the reshape.

Not in it: swiglu_mlp (its golden exists, but the vendor kernel calls ``pypto.matmul`` without the ``out_dtype`` the
API requires: the pristine kernel fails), quant_batch_matmul (imports ``torch_npu`` unconditionally), gather_pa_kv_cache
(its SPEC's key cache is 5513 x 128 x 512 bf16, 720 MB per input, and its golden refuses independent inputs).

Kinds (the ones a model writes by accident): a copy-paste operand (the squares' transpose reading ``v1``), a wrong
reduction axis, a transpose of the wrong axes, a reduction size missing a factor, a layout misread (NHWC for NCHW), a
dropped ``b_trans``, a dropped cast (dtype route), a swapped lane pattern, a dropped transpose.

Scored by ``bench/bisect_gym_corpus.py --corpus eighteenth`` and ``tests/bisect/test_eighteenth_corpus_s46.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import gym_corpus as _base
import gym_corpus_fresh as _fresh
from gym_corpus import GymBug, shared_gym

OPS = _base.OPS
OPS.setdefault("bn_training_reduce",
               "src/pypto_gym/ops/pypto_tile/experimental/vector/BNTrainingReduce/bn_training_reduce.py")

_BN_SPEC = """---
schema_version: 1
op_name: bn_training_reduce
inputs:
  - {name: x, shape: [N, C, H, 1], dtype: T, range: [0.0, 1.0]}
outputs:
  - {name: sum_out, shape: [1, C, 1, 1], dtype: T}
  - {name: sq_sum_out, shape: [1, C, 1, 1], dtype: T}
dynamic_axes: [N, C]
p0_shapes:
  - {N: 400, C: 8, H: 1}
  - {N: 900, C: 45, H: 1}
  - {N: 800, C: 40, H: 2}
supported_dtypes: [fp32]
tolerance:
  fp32: {atol: 0.001, rtol: 0.001}
seeds: [0, 1, 2]
pypto_target: head
---

# bn_training_reduce

The gym operator `bn_training_reduce` (its kernel unchanged); SPEC.md and golden.py written by
tests/bisect/gym_corpus_eighteenth.py from the gym test's shapes and inline reference (`torch.rand` inputs, per-channel
sum and sum of squares over N, H, W).
"""

_BN_GOLDEN = """import numpy as np


def golden(x):
    # the gym test's inline reference: torch.sum(x, dim=(0, 2, 3), keepdim=True) and the same of x * x
    x = np.asarray(x, dtype=np.float32)
    sum_out = x.sum(axis=(0, 2, 3), keepdims=True)
    sq = x * x
    sq_sum_out = sq.sum(axis=(0, 2, 3), keepdims=True)
    return sum_out, sq_sum_out
"""

_BN_WRAPPER = """

# --- written by tests/bisect/gym_corpus_eighteenth.py: the entry the verifier calls, as the gym test calls the kernel
def bn_training_reduce_wrapper(x):
    x = x.contiguous()
    config = select_bn_reduce_tiles(tuple(x.shape))
    sum_out = torch.empty((1, x.shape[1], 1, 1), dtype=torch.float32)
    sq_sum_out = torch.empty((1, x.shape[1], 1, 1), dtype=torch.float32)
    bn_reduce_kernel(x, sum_out, sq_sum_out, config)
    return sum_out, sq_sum_out
"""

_HANDMADE = {"bn_training_reduce": (_BN_SPEC, _BN_GOLDEN, _BN_WRAPPER)}


def prepare(op: str, op_root: Path) -> Path:
    """The operator directory of ``op`` under ``op_root``: imported (``gym_corpus.import_op``), or for the two
    operators the importer finds no golden for, written here from the vendor files read at test time."""
    if op not in _HANDMADE:
        return _base.import_op(op, op_root)
    dest = op_root / op
    if (dest / "SPEC.md").exists():
        return dest
    gym = shared_gym()
    assert gym is not None
    spec, gold, wrapper = _HANDMADE[op]
    tmp = op_root / f"{op}.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    (tmp / "SPEC.md").write_text(spec, encoding="utf-8")
    (tmp / "golden.py").write_text(gold, encoding="utf-8")
    vendor = (gym / "ops" / op / OPS[op]).read_text(encoding="utf-8")
    (tmp / f"{op}_impl.py").write_text(vendor.rstrip("\n") + "\n" + wrapper, encoding="utf-8")
    tmp.rename(dest)
    return dest


def materialize(bug: GymBug, op_dir: Path, tmp: Path) -> tuple[Path, str, tuple[int, int]]:
    """``gym_corpus_fresh.materialize`` (the operator as the corpus runs it) with the bug planted."""
    return _fresh.materialize(bug, op_dir, tmp)


BUGS: list[GymBug] = [
    # --- bn_training_reduce: [N, C, H, 1] fp32 -> per-channel sum and sum of squares, two outputs ---
    GymBug("g18_bn_sq_copy_paste", "bn_training_reduce", "wrong_operand", 100, "pypto.transpose(v1_sq, 1, 2)",
           "pypto.transpose(v1, 1, 2)"),
    GymBug("g18_bn_sq_axis", "bn_training_reduce", "wrong_axis", 106, "pypto.sum(v3_sq, dim=0, keepdim=True)",
           "pypto.sum(v3_sq, dim=1, keepdim=True)"),
    GymBug("g18_bn_transpose_axes", "bn_training_reduce", "wrong_transpose", 99, "pypto.transpose(v1, 1, 2)",
           "pypto.transpose(v1, 0, 2)"),
    GymBug("g18_bn_reduce_size", "bn_training_reduce", "missing_factor", 93, "n * h * w", "n * w"),
    GymBug("g18_bn_reshape_nhwc", "bn_training_reduce", "wrong_layout", 95, "[n, c, h * w]", "[n, h * w, c]"),
    # --- llada2_gate_select: the router matmul without its transpose flag (gate_weight is [E, H]) ---
    GymBug("g18_ll_no_b_trans", "llada2_gate_select", "wrong_transpose", 92, "b_trans=True)", "b_trans=False)"),
    # --- llada2_gate_select: the router input not widened to FP32 before the matmul (a dtype route) ---
    GymBug("g18_ll_cast_dropped", "llada2_gate_select", "dtype_route", 86, "pypto.cast(tile_x, pypto.DT_FP32)",
           "tile_x"),
    # --- interleave_rope: the odd sine lane taken with the even pattern ---
    GymBug("g18_rope_sin_lane", "interleave_rope", "swapped_lane", 88, "pypto.gathermask(s_t, pattern_mode=2)",
           "pypto.gathermask(s_t, pattern_mode=1)"),
    # --- mhc_sinkhorn: the [t, hc*hc] tile reshaped to [hc, hc, t] without its transpose first ---
    GymBug("g18_mhc_transpose_dropped", "mhc_sinkhorn", "wrong_transpose", 73, "pypto.transpose(comb_flag, 1, 0)",
           "comb_flag"),
]
