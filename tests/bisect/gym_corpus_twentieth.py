"""A twentieth corpus of single-line bugs in real gym operators (session 48), planted at test time (nothing of the
vendor's code is copied here; ``GymBug`` format of tests/bisect/gym_corpus.py, lines are the vendor file's).

Written blind: the rows and the culprit each should get (:data:`EXPECTED`) were written before bisect ran on any of
them and before any rule of runtime/bisect was read for them. The operators are the ones the eighteenth and
nineteenth corpora used least: swiglu_mlp, which no corpus could score before, attn_softmax, apply_adam_w_v2 and
bn_training_reduce (gated_delta_rule, used by neither, is left out: one bisect of it costs 5-15 minutes here).

swiglu_mlp: ``python -m orchestrator import`` finds no golden function (its gym script computes the reference inline
and calls ``pypto.matmul`` without the ``out_dtype`` the API requires, so the run fails), so :func:`prepare` writes its
operator directory at test time, as the eighteenth corpus does for bn_training_reduce: SPEC.md (the gym script's
shapes - hidden 2048, intermediate 11008, bf16 - with small uniform ranges so a bf16 MLP stays O(1)), a golden.py (the
gym golden's SwiGLU in fp32: ``gate = silu(x @ Wg + bg)``, ``up = x @ Wu + bu``, ``hidden = gate * up``, ``output =
hidden @ Wd + bd``) and the kernel file = the vendor file with one API fix per ``matmul`` call (``pypto.DT_BF16`` passed
as its ``out_dtype``) and cube tile shapes set beside its vector tile shapes, each on the same line (:func:`api_fix`), and a wrapper appended (its lines are the vendor's).

Kinds (the ones a model writes by accident), none of them planted by an earlier corpus: an activation variant
(``sigmoid(g)`` for ``g * sigmoid(g)``), the pre-activation value read where the activated one was meant, a dropped
bias, a weight copy-pasted from the line above, a loop variable leaked from an earlier loop (pass 2's last partial
sum ``ts`` for the total ``tsum``), a wrapper that allocates the output unpadded, a ceil division off by one (one
trip too many), a computed scaled value left unread (``w - update`` for ``w - lr * update``), the pre-transpose tensor
read after its transpose (``reshape(v1, ..)`` for ``reshape(v2, ..)``: only a case with ``h * w > 1`` shows it), a
reduction of the wrong kind (``amax`` for ``sum``).

Scored by ``bench/bisect_gym_corpus.py --corpus twentieth`` and ``tests/bisect/test_twentieth_corpus_s48.py`` (slow
tier; ``EXCLUDED`` there: the rows verify does not fail).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import gym_corpus as _base
import gym_corpus_eighteenth as _eighteenth
import gym_corpus_fresh as _fresh
from gym_corpus import GymBug, shared_gym, statement_lines

OPS = _base.OPS
OPS.setdefault("swiglu_mlp", "src/pypto_gym/ops/pypto_tile/gutenocr_3b/swiglu_mlp/swiglu_mlp_impl.py")

_MATMUL = re.compile(r"pypto\.matmul\((\w+), (\w+)\)")


def api_fix(line: str) -> str:
    """The vendor's swiglu_mlp line as the corpus runs it: ``pypto.matmul(a, b)`` -> ``pypto.matmul(a, b,
    pypto.DT_BF16)`` (the API's required ``out_dtype``; bf16 in, bf16 out, as the vendor's ``output`` is), and the
    cube tile shapes a ``matmul`` needs set next to the vector tile shapes (on the same line)."""
    line = _MATMUL.sub(r"pypto.matmul(\1, \2, pypto.DT_BF16)", line)
    return line.replace("pypto.set_vec_tile_shapes(64, 512)", "pypto.set_vec_tile_shapes(64, 512); "
                        "pypto.set_cube_tile_shapes([16, 16], [128, 128], [256, 256])")


_SWI_SPEC = """---
schema_version: 1
op_name: swiglu_mlp
inputs:
  - {name: x, shape: [B, H], dtype: T, range: [-1.0, 1.0]}
  - {name: gate_weight, shape: [H, I], dtype: T, range: [-0.05, 0.05]}
  - {name: gate_bias, shape: [I], dtype: T, range: [-0.5, 0.5]}
  - {name: up_weight, shape: [H, I], dtype: T, range: [-0.05, 0.05]}
  - {name: up_bias, shape: [I], dtype: T, range: [-0.5, 0.5]}
  - {name: down_weight, shape: [I, H], dtype: T, range: [-0.05, 0.05]}
  - {name: down_bias, shape: [H], dtype: T, range: [-0.5, 0.5]}
outputs:
  - {name: output, shape: [B, H], dtype: T}
dynamic_axes: [B]
p0_shapes:
  - {B: 1, H: 2048, I: 11008}
  - {B: 4, H: 2048, I: 11008}
supported_dtypes: [bf16]
tolerance:
  bf16: {atol: 0.03, rtol: 0.02}
seeds: [0, 1, 2]
pypto_target: head
---

# swiglu_mlp

The gym operator `swiglu_mlp` (its static-batch kernel, each `pypto.matmul` given the `out_dtype` the API requires);
SPEC.md and golden.py written by tests/bisect/gym_corpus_twentieth.py from the gym script's shapes and golden (SwiGLU
in fp32 from the bf16 inputs).
"""

_SWI_GOLDEN = """import ml_dtypes
import numpy as np


def golden(x, gate_weight, gate_bias, up_weight, up_bias, down_weight, down_bias):
    # the gym golden's SwiGLU MLP (gate = silu(linear), up = linear, hidden = gate * up, output = linear), in fp32
    f = [np.asarray(t, dtype=np.float32) for t in (x, gate_weight, gate_bias, up_weight, up_bias, down_weight,
                                                    down_bias)]
    x, gate_weight, gate_bias, up_weight, up_bias, down_weight, down_bias = f
    gate_lin = x @ gate_weight + gate_bias
    gate = gate_lin / (1.0 + np.exp(-gate_lin))
    up = x @ up_weight + up_bias
    hidden = gate * up
    output = hidden @ down_weight + down_bias
    return output.astype(ml_dtypes.bfloat16)
"""

_SWI_WRAPPER = """

# --- written by tests/bisect/gym_corpus_twentieth.py: the entry the verifier calls, as the gym script calls it
def swiglu_mlp_wrapper(x, gate_weight, gate_bias, up_weight, up_bias, down_weight, down_bias):
    return swiglu_mlp_fused_static(x, gate_weight, gate_bias, up_weight, up_bias, down_weight, down_bias,
                                   batch_size_static=x.shape[0])
"""


def prepare(op: str, op_root: Path) -> Path:
    """The operator directory of ``op`` under ``op_root``: swiglu_mlp written here from the vendor files read at test
    time (module docstring), bn_training_reduce as the eighteenth corpus writes it, the others imported."""
    if op != "swiglu_mlp":
        return _eighteenth.prepare(op, op_root)
    dest = op_root / op
    if (dest / "SPEC.md").exists():
        return dest
    gym = shared_gym()
    assert gym is not None
    tmp = op_root / f"{op}.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    (tmp / "SPEC.md").write_text(_SWI_SPEC, encoding="utf-8")
    (tmp / "golden.py").write_text(_SWI_GOLDEN, encoding="utf-8")
    vendor = (gym / "ops" / op / OPS[op]).read_text(encoding="utf-8")
    kernel = "".join(api_fix(ln) for ln in vendor.rstrip("\n").splitlines(keepends=True))
    (tmp / f"{op}_impl.py").write_text(kernel + "\n" + _SWI_WRAPPER, encoding="utf-8")
    tmp.rename(dest)
    return dest


def materialize(bug: GymBug, op_dir: Path, tmp: Path) -> tuple[Path, str, tuple[int, int]]:
    """Plant ``bug`` in a copy of its prepared operator (``op_dir``: as :func:`prepare` made it or as imported).
    swiglu_mlp's lines are checked against the vendor's with :func:`api_fix` applied; the others go through
    ``gym_corpus_fresh.materialize``."""
    if bug.op != "swiglu_mlp":
        return _fresh.materialize(bug, op_dir, tmp)
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
    assert text.rstrip("\r\n") == api_fix(vendor[bug.line - 1]), f"{bug.id}: line {bug.line} is not the vendor's"
    assert text.count(bug.old) == 1, f"{bug.id}: {bug.old!r} is not once on line {bug.line}: {text!r}"
    lines[bug.line - 1] = text.replace(bug.old, bug.new)
    src = "".join(lines)
    (dest / stage).write_text(src, encoding="utf-8")
    return dest, stage, statement_lines(src, bug.line)


BUGS: list[GymBug] = [
    # --- swiglu_mlp: [B, 2048] bf16 through a 2048 -> 11008 -> 2048 SwiGLU MLP, one static kernel, no loops ---
    GymBug("g20_swi_sigmoid_for_silu", "swiglu_mlp", "activation_variant", 94, "pypto.mul(gate, pypto.sigmoid(gate))",
           "pypto.sigmoid(gate)"),
    GymBug("g20_swi_pre_activation", "swiglu_mlp", "pre_activation_operand", 98, "pypto.mul(gate_activated, up)",
           "pypto.mul(gate, up)"),
    GymBug("g20_swi_down_bias_dropped", "swiglu_mlp", "missing_bias", 100,
           "pypto.add(pypto.matmul(hidden, down_weight, pypto.DT_BF16), down_bias)",
           "pypto.matmul(hidden, down_weight, pypto.DT_BF16)"),
    GymBug("g20_swi_up_weight_copy", "swiglu_mlp", "copy_paste_weight", 96, "pypto.matmul(x, up_weight,",
           "pypto.matmul(x, gate_weight,"),
    # --- attn_softmax: pass 3 divides by pass 2's last partial sum (a loop variable leaked from the earlier loop) ---
    GymBug("g20_as_leaked_ts", "attn_softmax", "leaked_loop_variable", 73, "pypto.div(r, tsum)", "pypto.div(r, ts)"),
    # --- attn_softmax: the wrapper allocates the output at the unpadded width ---
    GymBug("g20_as_out_unpadded", "attn_softmax", "wrapper_output_unpadded", 98, "torch.empty(M, padded_S,",
           "torch.empty(M, S,"),
    # --- apply_adam_w_v2: the tile count's ceil division one too many (K is a whole number of tiles) ---
    GymBug("g20_adam_ceil_plus_one", "apply_adam_w_v2", "ceil_div_off_by_one", 66, "(K + N_TILE - 1) // N_TILE",
           "(K + N_TILE) // N_TILE"),
    # --- apply_adam_w_v2: the update subtracted unscaled (``scaled`` is computed and never read) ---
    GymBug("g20_adam_unread_scaled", "apply_adam_w_v2", "computed_value_unread", 93, "pypto.sub(w_tile, scaled)",
           "pypto.sub(w_tile, update)"),
    # --- bn_training_reduce: the sum's reshape reads the tensor before its transpose ---
    GymBug("g20_bn_pre_transpose", "bn_training_reduce", "pre_transform_operand", 101, "pypto.reshape(v2,",
           "pypto.reshape(v1,"),
    # --- bn_training_reduce: the channel sum taken as a maximum ---
    GymBug("g20_bn_amax_for_sum", "bn_training_reduce", "wrong_reduction_kind", 105, "pypto.sum(v3, dim=0,",
           "pypto.amax(v3, dim=0,"),
]

EXPECTED: dict[str, int] = {b.id: b.line for b in BUGS}
"""the culprit line each row should be named at, written before the blind run (every row: its own bugged line -
the wrapper row at the wrapper's allocation, 98; the ceil-division row at the count's line, 66)"""
