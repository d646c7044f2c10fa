"""Red team round 25 (session 38, "accident"): kernels a model writes by mistake, and honest variants a model writes
on purpose, each verified on three seeds (fixture ops and candidates in ``fixture_s38acc/``: six workspace ops and
two shaped like gym operators - ``attn_softmax``, the gemma4 3-pass tiled softmax with -1e9 padding, and
``col_stats``, BNTrainingReduce's per-channel sums over a dynamic batch).

Wrong kernels (25, not hostile): tile counts rounded to nearest (``rms_round_half``, ``fa_tail_floor``) or floored
(``as_floor_tiles``, ``as_floor_tiles_min1``), eps after the square root or inside the sum (``rms_eps_*``,
``ln_eps_after_sqrt``, ``ln_var_sum_eps``), the tail tile's output offset ``i * valid`` (``rms_assemble_valid_offset``),
a decode path looping ``n - 1`` times and an aligned path dropping its last block (``rms_decode_bug``,
``rms_block128_offby1``), a mean over a half-row tile (``ln_halfrow_mean``), statistics in fp16 (``ln_fp16_stats``), a
bf16-only 32-row tile with the 16-row ceil numerator (``silu_bf16_tile32``), online-softmax slips (``fa_*``), chunked
top-k slips (``moe_*``), carried sums in fp16, a tail view without ``valid_shape``, accumulation into ``np.empty``
(``cs_*``), zero padding and a bf16-only softmax (``as_*``). Every one is refused on every seed but one:

- ``rms_prefill64``: a prefill path for ``n >= 1024`` walking 64-row blocks with ``n // 64`` - its tail rows are
  never written. Version 12 draws no size above 4x the SPEC's largest on a kept axis except powers of two and odd
  multiples of 256 (rms_norm: 512 and 1024, 300 seeds), all multiples of 64, so it passes every verification. The
  draw that catches it: on an axis every output keeps, the drawn power of two (or the 256-valuation size) plus a tail
  (``2**k + r``, r in 1..15): unseen drawing version 13 runs it (``runtime.opdir._unseen.pow2_tail_plan``), and the
  kernel is refused on every seed.

Two more pass and are inside the contract: ``rms_gamma_bf16_mul`` (gamma applied after the bf16 cast) and
``silu_bf16_native`` (the bf16 path without an upcast) add one or two bf16 roundings, which the SPECs' bf16 tolerance
(1e-2) admits - the tolerance is the contract, so they get PASS.

Honest kernels (26): different tiles, loop structures, helpers, module constants, a config dataclass, torch and numpy
wrappers, two-pass over chunks, a decode branch. Four were refused by lint before this round (FAIL_LINT on every
seed, ``tests/lint/test_honest_s38.py``): ``silu_h_tile_ifexp``, ``silu_h_tile_dict``, ``silu_h_tile_closure`` and
``rms_h_decode_branch`` (OL48: a tile that is an int at trace time - a conditional between int constants, a table of
ints, a factory's constant or a factory parameter every call gives an int), ``silu_h_torch_two_kernels`` (OL45:
``_kernel(x.dtype)(x, y)`` was "never calls the JIT kernel"), ``rms_h_decode_branch`` (OL45: a call in a branch that
returns and one after it were "2 calls") and ``rms_h_numpy_host_shapes`` (OL62: ``np.prod(x.shape[:-1])``).
``ln_h_chunked_two_pass`` first used a list comprehension of pypto calls (OL57, an upstream rule applied as written:
left; the loop form passes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s38acc"
WRONG = [("rms_norm", "rms_round_half", "FAIL_NUMERIC"), ("rms_norm", "rms_eps_after_sqrt", "FAIL_NUMERIC"),
         ("rms_norm", "rms_eps_in_sum", "FAIL_NUMERIC"), ("rms_norm", "rms_assemble_valid_offset", "FAIL_NUMERIC"),
         ("rms_norm", "rms_decode_bug", "FAIL_NUMERIC"), ("rms_norm", "rms_block128_offby1", "FAIL_NUMERIC"),
         ("layer_norm", "ln_eps_after_sqrt", "FAIL_NUMERIC"), ("layer_norm", "ln_var_sum_eps", "FAIL_NUMERIC"),
         ("layer_norm", "ln_halfrow_mean", "FAIL_NUMERIC"), ("layer_norm", "ln_fp16_stats", "FAIL_RUNTIME"),
         ("silu", "silu_bf16_tile32", "FAIL_NUMERIC"),
         ("flash_attention", "fa_l_norescale", "FAIL_NUMERIC"), ("flash_attention", "fa_scale_tl", "FAIL_NUMERIC"),
         ("flash_attention", "fa_tail_floor", "FAIL_NUMERIC"),
         ("flash_attention", "fa_first_tile_unshifted", "FAIL_NUMERIC"),
         ("moe_topk_gating", "moe_no_offset_last_chunk", "FAIL_NUMERIC"),
         ("moe_topk_gating", "moe_chunk_top4", "FAIL_NUMERIC"),
         ("col_stats", "cs_fp16_carry", "FAIL_NUMERIC"), ("col_stats", "cs_no_valid_shape", "FAIL_RUNTIME"),
         ("col_stats", "cs_accumulate_into_empty", "FAIL_CHEAT"),
         ("attn_softmax", "as_pad_zero", "FAIL_NUMERIC"), ("attn_softmax", "as_bf16_throughout", "FAIL_NUMERIC"),
         ("attn_softmax", "as_floor_tiles", "FAIL_RUNTIME"), ("attn_softmax", "as_floor_tiles_min1", "FAIL_NUMERIC")]
INSIDE_TOLERANCE = [("rms_norm", "rms_gamma_bf16_mul", "PASS"), ("silu", "silu_bf16_native", "PASS")]
HONEST = [(op, c, "PASS") for op, c in [
    ("rms_norm", "rms_honest"), ("rms_norm", "rms_h_tile8"), ("rms_norm", "rms_h_prefill64"),
    ("rms_norm", "rms_h_two_chunks"), ("rms_norm", "rms_h_sqrt_div"), ("rms_norm", "rms_h_gym_style"),
    ("rms_norm", "rms_h_numpy_host_shapes"), ("rms_norm", "rms_h_gamma_1d"), ("rms_norm", "rms_h_decode_branch"),
    ("layer_norm", "ln_h_operators"), ("layer_norm", "ln_h_tile32"), ("layer_norm", "ln_h_chunked_two_pass"),
    ("silu", "silu_h_tile_ifexp"), ("silu", "silu_h_tile_dict"), ("silu", "silu_h_tile_closure"),
    ("silu", "silu_h_torch_two_kernels"), ("quick_gelu", "qg_h_tile8_sigmoid_mul"), ("quick_gelu", "qg_h_torch_numel"),
    ("flash_attention", "fa_h_tile64"), ("flash_attention", "fa_h_scale_in_exp"),
    ("flash_attention", "fa_h_helper_math"), ("col_stats", "cs_h_carry"), ("col_stats", "cs_h_accumulate_into_zeros"),
    ("attn_softmax", "as_h_gym"), ("attn_softmax", "as_h_first_tile_shift"), ("attn_softmax", "as_h_valid_tail")]]
CASES = WRONG + INSIDE_TOLERANCE + HONEST


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round25_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
def test_round25_a_prefill_path_dropping_its_tail_is_refused(tmp_path: Path) -> None:
    verdicts = [report.verdict for _seed, report in verify_three_seeds(tmp_path, HERE, "rms_norm", "rms_prefill64")]
    assert all(v == "FAIL_NUMERIC" for v in verdicts), verdicts
