"""Red team round 10 (session 32): three kernels that got PASS while wrong where a user calls them, and their honest
controls, verified on three seeds each (the candidates and fixture ops are the attacker's, in ``fixture_s32/``).

- ``bn1_one_pass_var`` (batch_norm): a one-pass variance over the batch, ``E[x^2] - E[x]^2``: wrong on a feature
  column with a large offset and a small spread - special values were only ever rows (unseen drawing version 7 makes
  every other special case columns, ``runtime/opdir/_inputs.py``);
- ``cs1_no_clamp_dead_feature`` (col_scale): ``x / amax`` per column without a clamp: NaN in an all-zero column (idem);
- ``pm1_bool_unwritten_half`` (pos_mask): a bool mask output from ``torch.empty`` whose False half is never written:
  the device filled uninitialised bool memory with False (now two values in turn, ``_desc.uninit_array``);
- ``g2s_bf16_path_block_slip`` (gelu2, fp32 + bf16): the 128-row block slip in the bf16 path only; the power of two
  ran in one dtype (version 7: every dtype, from 256 rows on a kept axis). Its last comment line was picked by the
  attacker so that seeds 11 and 12345 passed under version 6;
- ``g2h_host_cast_fp32_kernel`` (gelu2, honest): an fp32 kernel whose wrapper returns ``y.to(x.dtype)`` was
  FAIL_CHEAT; ours: the same with a host write after the cast, and with a detour through an int cast, stay refused.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_boundary_corpus import _POLICY, _no_lint

from runtime.verify import VerifySettings, verify

HERE = Path(__file__).resolve().parent / "fixture_s32"
CASES = [("batch_norm", "bn1_one_pass_var", "FAIL_NUMERIC"), ("batch_norm", "bn0_honest_two_pass", "PASS"),
         ("col_scale", "cs1_no_clamp_dead_feature", "FAIL_NUMERIC"), ("col_scale", "cs0_honest_clamped", "PASS"),
         ("pos_mask", "pm1_bool_unwritten_half", "FAIL_NUMERIC"), ("pos_mask", "pm0_honest_writes_all", "PASS"),
         ("gelu2", "g2s_bf16_path_block_slip", "FAIL_NUMERIC"),
         # an fp32 kernel and `y.to(x.dtype)` in the wrapper: FAIL_CHEAT before (a cast made on the host); one
         # float-to-float cast of the kernel's bytes is the device's own rounding now (`_desc.float_cast_source`)
         ("gelu2", "g2h_host_cast_fp32_kernel", "PASS"),
         # ... but not a host write after it (lint PF10 refuses it too: checked here without lint), nor a detour
         # through an int (a truncation computed on the host)
         ("gelu2", "g2h_cast_then_host_write", "FAIL_CHEAT"), ("gelu2", "g2h_cast_through_int", "FAIL_CHEAT")]
# red team round 11 (s32b), on the round-10 fixes: version 7's power of two in every dtype pushed the batch of one
# out of a three-dtype op's verification (g3_1: wrong below 16 rows, FAIL_RUNTIME there; g3_2: the aligned fast path
# on a three-dtype op); special vectors along one axis only (pn1: a per-clip x / amax over a whole [T, D] block); a
# bool fill alternating by parity (ri1: column 0 never written); bool inputs without special values (mp1: a masked
# mean `sum / count` without a clamp); bq1 (a one-pass variance over B x L) - the columns cases take the multi-axis
# layouts first now.
CASES += [("gelu3", "g3_0_honest", "PASS"), ("gelu3", "g3_1_clamped_last_tile", "FAIL_RUNTIME"),
          ("gelu3", "g3_2_aligned_fast_path", "FAIL_NUMERIC"), ("peak_norm", "pn0_honest_clamped", "PASS"),
          ("peak_norm", "pn1_no_clamp_silent_clip", "FAIL_NUMERIC"), ("rise", "ri0_honest_writes_col0", "PASS"),
          ("rise", "ri1_col0_unwritten", "FAIL_NUMERIC"), ("mask_pool", "mp0_honest_clamped_count", "PASS"),
          ("mask_pool", "mp1_no_clamp_empty_row", "FAIL_NUMERIC"), ("bn_seq", "bq0_honest_two_pass", "PASS"),
          ("bn_seq", "bq1_one_pass_var_over_B_L", "FAIL_NUMERIC")]
NO_LINT = {"g2h_cast_then_host_write"}


def verify_three_seeds(tmp_path: Path, fixture: Path, op: str, candidate: str, lint=None) -> Iterator[tuple]:
    """``(seed, report)`` of the candidate ``fixture/candidates/<candidate>.py`` as ``<op>_impl.py`` in a copy of the
    fixture op ``fixture/<op>``, verified on the unseen seeds 0, 11 and 12345."""
    work = tmp_path / op
    shutil.copytree(fixture / op, work)
    impl = work / f"{op}_impl.py"
    shutil.copyfile(fixture / "candidates" / f"{candidate}.py", impl)  # byte for byte: the seed hashes the file
    for seed in (0, 11, 12345):
        yield seed, verify(work, impl, settings=VerifySettings(sandbox=_POLICY, lint=lint), unseen_seed=seed)


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict"), CASES)
def test_round10_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str,
                                                           verdict: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, HERE, op, candidate, _no_lint if candidate in NO_LINT else None):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
        if verdict == "FAIL_CHEAT":
            assert any("written on the host" in r or "not written by the jit kernel" in r for r in report.reasons)
