"""A twenty-first corpus of single-line bugs in real gym operators (session 49), planted at test time (nothing of the
vendor's code is copied here; ``GymBug`` format of tests/bisect/gym_corpus.py, lines are the vendor file's).

Written blind: the rows and the culprit each should get (:data:`EXPECTED`) were written before bisect ran on any of
them and before any rule of runtime/bisect was read for them. The operators are the ones the twenty earlier corpora
used least (counted over every corpus' ``BUGS``): gather_pa_kv_cache (0 rows: it never ran), quant_batch_matmul (0: not
here either, see below), swiglu_mlp (4), bn_training_reduce (7); the next is rms_norm with 18.

gather_pa_kv_cache: ``python -m orchestrator import`` makes an operator directory whose SPEC draws every input on its
own (a ``seq_lens`` that does not sum to the output's length, block ids past the cache: the golden refuses them) over
the vendor's 5513 x 128 x 512 bf16 key cache (720 MB per input). So :func:`prepare` writes the directory at test time,
as the twentieth corpus does for swiglu_mlp: SPEC.md (the vendor's block size, head count and head sizes, a cache of 40
blocks, 2-4 sequences), a golden.py of our own (the paged gather the gym golden describes, in numpy) with a
``make_inputs`` that draws consistent inputs - sequence lengths summing to the output's length as the gym's
``make_case`` splits them, block ids of the cache, and a nonzero ``seq_offset`` (a whole number of blocks: the gym test
always passes zeros, so the kernel's table offset was never exercised) - and the kernel file = the vendor file,
unchanged, with a wrapper appended (its lines are the vendor's). Its host code (lines 191-456) runs in the wrapper, but
with the lengths given as their cumsum (verify refuses a kernel argument the host computed: the cumsum the host would
build from raw lengths) it only validates and dispatches: no row is planted there (a host bug that makes the host's own
validation raise before any kernel call is no bisect question).

quant_batch_matmul is left out: its importer finds no golden (the gym test computes it inline), it runs only as an
Ascend 950 (FP8) and one case multiplies 7168-deep blocks (11.7 s per emulated case): a SPEC.md, golden.py and wrapper
written by hand for it are a session's work of their own.

Kinds (the ones a model writes by accident), none planted by an earlier corpus: a gather index that drops its base (the
table offset), a cumulative array read as a length, an extent read from the sibling tensor (``key_cache.shape[3]`` for
the value's), an in-block offset counted twice (a block's base plus the token offset), a quantity in the wrong unit
(tokens for blocks), a clamp dropped (a tail's valid extent not bounded by the block), a stride taken from another extent (the head size for the block size), an unrolled inner loop pinned to one trip, a bias copied
from the other projection, a shape unpacked in the wrong order.

Scored by ``bench/bisect_gym_corpus.py --corpus twentyfirst`` and ``tests/bisect/test_twentyfirst_corpus_s49.py``
(slow tier).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import gym_corpus as _base
import gym_corpus_twentieth as _twentieth
from gym_corpus import GymBug, shared_gym, statement_lines

OPS = _base.OPS
OPS.setdefault("gather_pa_kv_cache",
               "src/pypto_gym/ops/pypto_tile/experimental/vector/gather_pa_kv_cache/gather_pa_kv_cache_impl.py")

_GPA_SPEC = """---
schema_version: 1
op_name: gather_pa_kv_cache
inputs:
  - {name: key_cache, shape: [40, 128, 1, 512], dtype: T, range: [-4.0, 4.0], distribution: normal}
  - {name: value_cache, shape: [40, 128, 1, 64], dtype: T, range: [-4.0, 4.0], distribution: normal}
  - {name: block_tables, shape: [Q, T], dtype: int32, range: [0, 39]}
  - {name: seq_lens, shape: [Q], dtype: int32, range: [0, 4096]}
  - {name: key_ref, shape: [T, 1, 512], dtype: T, range: [-4.0, 4.0], distribution: normal}
  - {name: value_ref, shape: [T, 1, 64], dtype: T, range: [-4.0, 4.0], distribution: normal}
  - {name: seq_offset, shape: [Q], dtype: int32, range: [0, 512]}
outputs:
  - {name: key_out, shape: [T, 1, 512], dtype: T}
  - {name: value_out, shape: [T, 1, 64], dtype: T}
dynamic_axes: [Q, T]
p0_shapes:
  - {Q: 4, T: 6}
  - {Q: 3, T: 44}
  - {Q: 2, T: 300}
  - {Q: 4, T: 700}
supported_dtypes: [bf16]
tolerance:
  bf16: {atol: 0.001, rtol: 0.001}
seeds: [0, 1, 2]
pypto_target: head
---

# gather_pa_kv_cache

The gym operator `gather_pa_kv_cache` (its kernel and host code unchanged) on a 40-block paged cache; SPEC.md and
golden.py written by tests/bisect/gym_corpus_twentyfirst.py: `Q` sequences of lengths summing to `T` (split as the gym's
`make_case` splits them; `seq_lens` holds their cumsum, where each sequence ends), each reading whole blocks of the cache through its row of `block_tables`, starting
`seq_offset // 128` columns in; the outputs are `key_ref` / `value_ref` with every token written.
"""

_GPA_GOLDEN = """import ml_dtypes
import numpy as np

NUM_BLOCKS, BLOCK = 40, 128


def make_inputs(case, rng):
    # consistent inputs (SPEC.md cannot say them): lengths summing to T, block ids of the cache, an offset of whole
    # blocks into each table row (the table has T columns: room for any split verify's unseen shapes draw)
    q, t = case["dims"]["Q"], case["dims"]["T"]
    bf = ml_dtypes.bfloat16
    lengths = np.array([t // q + (1 if i < t % q else 0) for i in range(q)], dtype=np.int32)
    blocks = (lengths + BLOCK - 1) // BLOCK
    offsets = np.array([int(rng.integers(0, min(4, t - b) + 1)) * BLOCK for b in blocks], dtype=np.int32)
    table = rng.integers(0, NUM_BLOCKS, size=(q, t)).astype(np.int32)
    key_cache = rng.standard_normal((NUM_BLOCKS, BLOCK, 1, 512)).astype(bf)
    value_cache = rng.standard_normal((NUM_BLOCKS, BLOCK, 1, 64)).astype(bf)
    key_ref = rng.standard_normal((t, 1, 512)).astype(bf)
    value_ref = rng.standard_normal((t, 1, 64)).astype(bf)
    return [key_cache, value_cache, table, np.cumsum(lengths).astype(np.int32), key_ref, value_ref, offsets]


def golden(key_cache, value_cache, block_tables, seq_lens, key_ref, value_ref, seq_offset):
    # the paged gather of the gym golden: sequence q's tokens, block by block, from the blocks its table row names
    # (seq_lens holds where each sequence ends: the cumsum of the lengths)
    block = key_cache.shape[1]
    ends = [int(v) for v in seq_lens]
    lengths = [e - b for b, e in zip([0, *ends[:-1]], ends)]
    key_out = np.array(key_ref, copy=True)
    value_out = np.array(value_ref, copy=True)
    base = 0
    for q, n in enumerate(lengths):
        first = int(seq_offset[q]) // block
        for j in range((n + block - 1) // block):
            phys = int(block_tables[q, first + j])
            valid = min(n - j * block, block)
            key_out[base + j * block:base + j * block + valid] = key_cache[phys, :valid]
            value_out[base + j * block:base + j * block + valid] = value_cache[phys, :valid]
        base += n
    return key_out, value_out
"""

_GPA_WRAPPER = """

# --- written by tests/bisect/gym_corpus_twentyfirst.py: the entry the verifier calls, calling the gym's host entry as
# the gym test does (inputs are torch tensors: this file imports torch), the lengths as their cumsum (its
# ``is_seq_lens_cumsum`` form, a leading 0 padded on: the kernel reads no array the host computed); the ref buffers are
# the caller's, so copies
_gym_gather_pa_kv_cache_wrapper = gather_pa_kv_cache_wrapper


def gather_pa_kv_cache_wrapper(key_cache, value_cache, block_tables, seq_lens, key_ref, value_ref, seq_offset):
    _r = _gym_gather_pa_kv_cache_wrapper(key_cache, value_cache, block_tables, torch.nn.functional.pad(seq_lens, (1, 0)),
                                         key_ref.clone(), value_ref.clone(), seq_offset, cache_mode="Norm",
                                         is_seq_lens_cumsum=True, run_mode="npu")
    return _r[0], _r[1]
"""


def prepare(op: str, op_root: Path) -> Path:
    """The operator directory of ``op`` under ``op_root``: gather_pa_kv_cache written here from the vendor kernel read
    at test time (module docstring), the others as the twentieth corpus prepares them."""
    if op != "gather_pa_kv_cache":
        return _twentieth.prepare(op, op_root)
    dest = op_root / op
    if (dest / "SPEC.md").exists():
        return dest
    gym = shared_gym()
    assert gym is not None
    tmp = op_root / f"{op}.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    (tmp / "SPEC.md").write_text(_GPA_SPEC, encoding="utf-8")
    (tmp / "golden.py").write_text(_GPA_GOLDEN, encoding="utf-8")
    vendor = (gym / "ops" / op / OPS[op]).read_text(encoding="utf-8")
    (tmp / f"{op}_impl.py").write_text(vendor.rstrip("\n") + "\n" + _GPA_WRAPPER, encoding="utf-8")
    tmp.rename(dest)
    return dest


def materialize(bug: GymBug, op_dir: Path, tmp: Path) -> tuple[Path, str, tuple[int, int]]:
    """Plant ``bug`` in a copy of its prepared operator (``op_dir``, as :func:`prepare` made it): the line's text is
    checked against the vendor file first; swiglu_mlp and the others go through the twentieth corpus'."""
    if bug.op != "gather_pa_kv_cache":
        return _twentieth.materialize(bug, op_dir, tmp)
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
    assert text.rstrip("\r\n") == vendor[bug.line - 1], f"{bug.id}: line {bug.line} is not the vendor's"
    assert text.count(bug.old) == 1, f"{bug.id}: {bug.old!r} is not once on line {bug.line}: {text!r}"
    lines[bug.line - 1] = text.replace(bug.old, bug.new)
    src = "".join(lines)
    (dest / stage).write_text(src, encoding="utf-8")
    return dest, stage, statement_lines(src, bug.line)


BUGS: list[GymBug] = [
    # --- gather_pa_kv_cache: Q sequences gathered block by block from a paged [40, 128, 1, D] cache (kernel) ---
    GymBug("g21_gpa_table_base_dropped", "gather_pa_kv_cache", "gather_index_base_dropped", 70,
           "block_tables[q_idx, table_offset + block_idx]", "block_tables[q_idx, block_idx]"),
    GymBug("g21_gpa_cumsum_as_length", "gather_pa_kv_cache", "cumulative_read_as_length", 64,
           "seq_lens[q_idx + 1] - out_start", "seq_lens[q_idx + 1]"),
    GymBug("g21_gpa_value_dim_from_key", "gather_pa_kv_cache", "extent_from_sibling_tensor", 44,
           "value_cache.shape[3]", "key_cache.shape[3]"),
    GymBug("g21_gpa_token_offset_twice", "gather_pa_kv_cache", "offset_counted_twice", 74,
           "physical_block * block_size", "physical_block * block_size + token_offset"),
    GymBug("g21_gpa_offset_in_tokens", "gather_pa_kv_cache", "wrong_unit", 66, "seq_offset[q_idx] // block_size",
           "seq_offset[q_idx]"),
    GymBug("g21_gpa_stride_key_dim", "gather_pa_kv_cache", "stride_from_wrong_extent", 71, "block_idx * block_size",
           "block_idx * key_dim"),
    GymBug("g21_gpa_unroll_one_trip", "gather_pa_kv_cache", "unrolled_inner_loop_pinned", 60, "range(q_unroll)",
           "range(1)"),
    GymBug("g21_gpa_valid_clamp_dropped", "gather_pa_kv_cache", "clamp_dropped", 72,
           "(seq_len - token_offset).min(block_size)", "(seq_len - token_offset)"),
    # --- swiglu_mlp: the up projection adds the gate projection's bias ---
    GymBug("g21_swi_up_bias_copy", "swiglu_mlp", "bias_copy_paste", 96, "up_bias)", "gate_bias)"),
    # --- bn_training_reduce: the input's shape unpacked with two axes swapped ---
    GymBug("g21_bn_shape_unpack", "bn_training_reduce", "shape_unpack_order", 92, "n, c, h, w = x.shape",
           "n, h, c, w = x.shape"),
]

EXPECTED: dict[str, int] = {b.id: b.line for b in BUGS}
"""the culprit line each row should be named at, written before the blind run (every row: its own bugged line)"""
