"""Red team round 26 (session 38, "accident2"): accidental wrong kernels and honest variants on ops shaped like the
real gym operators not covered by round 25 (fixture ops and candidates in ``fixture_s38acc2/``), each verified on
three seeds:

- ``irope`` (interleave_rope: even/odd lanes by gathermask, split-half output): pairs swapped, the rotated half's
  sign, sin lanes swapped, halves swapped, a floored tile count, a tail view of cos/sin without ``valid_shape``;
- ``adamw_step`` (ApplyAdamWV2): the bias-correction power one step ahead, bc2 from beta1, eps inside the sqrt, L2
  instead of decoupled decay, the update from the old moments;
- ``sinkhorn`` (mhc_sinkhorn, 3 rounds): columns first, one round short, the last column step dropped, a floored
  tile count, no exp;
- ``window_fill`` (a causal sliding window by per-tile ``tril`` with a symbolic diagonal): a strict causal bound,
  window +- 1, the tile diagonal's sign, diagonal tiles only, floored tile counts;
- ``decay_cumsum`` (gated_delta_rule's chunk decay): the exclusive cumsum, a cumsum over the rows, two halves with
  no carry or a carry read one position early;
- ``quant_rows`` (per-token int8): ties away from zero, truncation, a per-channel scale, /128, fp16 before rounding;
- ``gather_rows`` (gather_pa_kv_cache): idx +- 1, the index view one late, a clamp to N - 2, the slot counted from
  the end (``idx - N``).

Every one is refused on every seed except the ones below. Fixed here:

- ``gr_slot_minus_n`` passed every seed: the emulator's index check wrapped a negative index the numpy way, so
  ``index_select(cache, 0, idx - N)`` picked the right rows. torch's index_select / gather / scatter / index_add
  refuse a negative index ("index out of range in self"); only ``index_put_`` (advanced indexing) counts from the
  end. Now EMU_INDEX_OOB (FAIL_RUNTIME); ``gr_idx_minus1`` turns from FAIL_NUMERIC into FAIL_RUNTIME the same way;
- the lint holes of round 25's relaxations (``tests/lint/test_s38b.py``): ``silu_cache_key_misses_rows`` (a decode
  kernel and the looped kernel from one factory cached under the dtype alone - PASS on every seed before, verify's
  first call being a full batch) is now FAIL_LINT (PF11), ``silu_helper_halves`` (the one kernel call in a helper
  the wrapper calls twice) FAIL_LINT (OL45). ``fixture_s36/adam_b1key`` (a cache keyed on beta1 alone) is refused by
  lint too now; it still fails numerically with lint off (below).

Wrong and passing every seed until unseen drawing version 14 (session 39) - **an int attribute was never varied**,
so a kernel right only at the SPEC's int passed every verification. Refused on every seed now (FAIL_NUMERIC), since
version 14 varies the ints golden() uses as a count, an exponent, a bound or a scale (docs/verification.md, "Int
attributes"; ``tests/verify/test_unseen_v14_s39.py``):

- ``ad_bc_no_power`` (bias corrections ``1 - beta``, the power forgotten) and ``ad_bc_step_minus1`` (``beta **
  (step - 1)`` guarded for step 1) with ``step: 1``, the gym's own value;
- ``wf_window_fixed8``: the window a module constant equal to the SPEC's ``window: 8``;
- ``sk20_cols_first`` and ``sk20_one_round_short`` on ``sinkhorn20`` (``iters: 20``, the gym's fixed count): after
  five rounds both orders agree to 1e-7, so both are inside fp32 tolerance (they fail at ``iters: 3``).

The draw that catches all five: an int attribute that golden() uses as a count, an exponent or a bound (``beta **
step``, ``range(iters)``, ``j > i - window``) run at other whole values golden accepts - step 2-5, a window under the
SPEC's 8 and one wider than a 16-column tile (17-31), iters 1-3. A set golden refuses is dropped as for floats. Ints
that select an axis or a layout would fail honest kernels, so version 14 reads which ints vary from golden()'s syntax
tree (``runtime/opdir/_intattrs.py``), and the SPEC can opt in and out (``vary_ints``, ``fixed_ints``); the honest
kernels below still pass.

Inside the contract: ``ir_bf16_products`` (the gym's own bf16 arithmetic, three roundings) passes the bf16 tolerance.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s38acc2"
N, R, L = "FAIL_NUMERIC", "FAIL_RUNTIME", "FAIL_LINT"
WRONG = [
    ("irope", "ir_pairs_swapped", N), ("irope", "ir_rotate_sign", N), ("irope", "ir_sin_lanes_swapped", N),
    ("irope", "ir_halves_swapped", N), ("irope", "ir_tail_floor", N), ("irope", "ir_cos_no_valid", R),
    ("adamw_step", "ad_bc_step_plus1", N), ("adamw_step", "ad_bc2_beta1", N), ("adamw_step", "ad_eps_in_sqrt", N),
    ("adamw_step", "ad_l2_decay", N), ("adamw_step", "ad_old_moments", N),
    ("sinkhorn", "sk_cols_first", N), ("sinkhorn", "sk_one_round_short", N), ("sinkhorn", "sk_last_cols_missing", N),
    ("sinkhorn", "sk_tail_floor", N), ("sinkhorn", "sk_no_exp", N),
    ("window_fill", "wf_causal_strict", N), ("window_fill", "wf_window_plus1", N),
    ("window_fill", "wf_window_minus1", N), ("window_fill", "wf_diag_sign", N),
    ("window_fill", "wf_diag_tiles_only", N), ("window_fill", "wf_tail_floor", N),
    ("decay_cumsum", "dc_exclusive", N), ("decay_cumsum", "dc_cumsum_rows", N), ("decay_cumsum", "dc_tail_floor", N),
    ("decay_cumsum", "dc_halves_no_carry", N), ("decay_cumsum", "dc_halves_carry_offby1", N),
    ("quant_rows", "qr_half_away", N), ("quant_rows", "qr_trunc", N), ("quant_rows", "qr_per_channel", N),
    ("quant_rows", "qr_scale_128", N), ("quant_rows", "qr_fp16_before_round", N),
    ("gather_rows", "gr_idx_plus1", R), ("gather_rows", "gr_idx_minus1", R), ("gather_rows", "gr_idx_view_shift", R),
    ("gather_rows", "gr_tail_floor", N), ("gather_rows", "gr_clamp_254", N), ("gather_rows", "gr_slot_minus_n", R),
    ("silu", "silu_cache_key_misses_rows", L), ("silu", "silu_helper_halves", L),
]
INSIDE_TOLERANCE = [("irope", "ir_bf16_products", "PASS")]
HONEST = [(op, c, "PASS") for op, c in [
    ("irope", "ir_h_gym"), ("irope", "ir_h_tile32"), ("irope", "ir_h_helper"),
    ("adamw_step", "ad_h_gym"), ("adamw_step", "ad_h_decay_factor"), ("adamw_step", "ad_h_kernel_pow"),
    ("sinkhorn", "sk_h_gym"), ("sinkhorn", "sk_h_softmax_first"), ("sinkhorn", "sk_h_reciprocal"),
    ("sinkhorn20", "sk20_h_gym"),
    ("window_fill", "wf_h_tril"), ("window_fill", "wf_h_lower_tiles"), ("window_fill", "wf_h_tile32"),
    ("decay_cumsum", "dc_h_gym"), ("decay_cumsum", "dc_h_halves_carry"), ("decay_cumsum", "dc_h_exp_product"),
    ("quant_rows", "qr_h_round"), ("quant_rows", "qr_h_rint_cast"),
    ("gather_rows", "gr_h_index_select"), ("gather_rows", "gr_h_tile32"), ("silu", "silu_h_decode_keyed")]]
CASES = WRONG + INSIDE_TOLERANCE + HONEST
INT_ATTRIBUTE = [("adamw_step", "ad_bc_no_power"), ("adamw_step", "ad_bc_step_minus1"),
                 ("window_fill", "wf_window_fixed8"), ("sinkhorn20", "sk20_cols_first"),
                 ("sinkhorn20", "sk20_one_round_short")]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round26_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
        if candidate in ("gr_slot_minus_n", "gr_idx_minus1"):
            assert any("EMU_INDEX_OOB" in r for r in report.reasons), report.reasons[:3]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate"), INT_ATTRIBUTE)
def test_round26_a_kernel_right_only_at_the_specs_int_attribute_is_refused(tmp_path: Path, op: str,
                                                                             candidate: str) -> None:
    verdicts = [report.verdict for _seed, report in verify_three_seeds(tmp_path, HERE, op, candidate)]
    assert all(v == "FAIL_NUMERIC" for v in verdicts), verdicts


@pytest.mark.slow
def test_round26_a_cache_keyed_on_one_beta_still_fails_numerically_without_lint(tmp_path: Path) -> None:
    """``fixture_s36/adam_b1key`` is FAIL_LINT now (PF11: the key leaves out ``b2``); the drawing still catches it
    on its own, as round 18 asserted before."""
    from test_boundary_corpus import _no_lint

    fixture = Path(__file__).resolve().parent / "fixture_s36"
    for seed, report in verify_three_seeds(tmp_path, fixture, "adam_moments", "adam_b1key", _no_lint):
        assert report.verdict == "FAIL_NUMERIC", (seed, report.verdict, report.reasons[:3])
