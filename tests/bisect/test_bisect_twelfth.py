"""What the twelfth gym corpus (``gym_corpus_twelfth``, session 40, written blind) found bisect naming wrong, on small
kernels (``twelfth_data``; RoPE lanes on ``stuck_data/rope_heads``), plus the gym rows themselves (slow; they skip
without the gym corpus or torch).

* a first-trip test that misses the first trip (``if t == 1: acc[:] = ts`` / ``else: acc[:] = add(acc, ts)``): the
  kernel raises reading ``acc`` in the ``else`` branch, and that line was named. Now
  (``_rules.static_branch_guard_source``) the ``if``: its other branch initialises what the raising line accumulates;
* the wrapper passing the input and the output buffer in each other's place (``kernel(out, x)``): not localized (the
  kernel computes right from what it got). Now (``api._swapped_arguments``) a replay with the two exchanged is right,
  and the call is named;
* a transpose written as a reshape of a partly valid tile (``reshape(st, [8, 4])`` of a ``[4, 8]`` tile valid ``[4,
  6]``): the write downstream was named (mhc_sinkhorn) or nothing. Now (``_rules.scrambled_reshape``) the reshape
  that lays the padding among the valid elements;
* a kernel input the wrapper permutes and pads (gated_delta_rule's ``query_perm.view(BNL, D)``): never taken for that
  input, so nothing computed from it had a golden ancestor and the first departure seen was the final write. Now
  (``api._host_input_layouts``) the input - and the golden's values computed in its own layout before the golden
  permutes them (the l2-normalized query) - are laid out as the argument;
* a lane mask reading the wrong (right) view (``c_e = gathermask(s_t, 1)``): the view of ``sin`` was named, which
  ``s_e`` / ``s_o`` read rightly. Now (``_repair.wrong_selection``) the gathermask, when another selection of that
  view is corroborated downstream; a view of the wrong input (``s_t = view(cos, ..)``) is still named at the view.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from planting import plant

from runtime.bisect import bisect
from runtime.bisect._rules import _reshape_keeps_padding, static_branch_guard_source

DATA = Path(__file__).parent / "twelfth_data"
ROPE = Path(__file__).parent / "stuck_data"
_UNINIT = "read of a tensor that has no data yet at run time (local tensor read before any write in this iteration order)"


def test_the_right_kernels_are_named_nothing(golden_cache: dict) -> None:
    for name in ("firsttrip", "argswap", "padreshape", "permin", "inplace", "padsplit", "permpad"):
        rep = bisect(DATA / name, f"{name}_impl.py", golden_cache=golden_cache)
        assert rep.status == "NO_DIVERGENCE", (name, rep.summary)


def test_a_first_trip_test_missing_the_first_trip_names_the_if(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "firsttrip", "if t == 0:", "if t == 1:")
    rep = bisect(op_dir, "firsttrip_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "RUNTIME_ERROR" and f is not None and f.line == line, (rep.summary, rep.evidence)


def test_the_branch_rule_needs_an_initialising_branch_and_the_loop_index() -> None:
    src = (DATA / "firsttrip" / "firsttrip_impl.py").read_text()
    lines = src.splitlines()
    acc = next(i for i, ln in enumerate(lines, 1) if "acc[:] = pypto.add(acc, ts)" in ln)
    got = static_branch_guard_source(src, acc, _UNINIT)
    assert got is not None and got[0] == acc - 3 and "first trip" in got[1], got
    # the if branch writes another tensor: nothing initialises ``acc`` there, the raising line stays
    other = src.replace("            acc[:] = ts\n", "            acc2 = ts\n")
    assert static_branch_guard_source(other, acc, _UNINIT) is None
    # a test that does not read the loop's index is no first-trip test
    fixed = src.replace("if t == 0:", "if TC == 16:")
    assert static_branch_guard_source(fixed, acc, _UNINIT) is None
    # another error message: no claim
    assert static_branch_guard_source(src, acc, "shape mismatch") is None


def test_input_and_output_passed_in_each_others_place_names_the_call(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "argswap", "argswap_kernel(x, out)", "argswap_kernel(out, x)")
    rep = bisect(op_dir, "argswap_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_kernel_bug_beside_an_input_and_a_buffer_does_not_name_the_call(tmp_path: Path,
                                                                         golden_cache: dict) -> None:
    op_dir, _line = plant(DATA, tmp_path, "argswap", "pypto.mul(t, 2.0)", "pypto.mul(t, 3.0)")
    rep = bisect(op_dir, "argswap_impl.py", golden_cache=golden_cache)
    call = next(i for i, ln in enumerate((op_dir / "argswap_impl.py").read_text().splitlines(), 1)
                if "argswap_kernel(x, out)" in ln)
    assert rep.status != "NO_DIVERGENCE"
    assert rep.first_divergence is None or rep.first_divergence.line != call, (rep.summary, rep.evidence)
    assert not any("each other's place" in e for e in rep.evidence), rep.evidence


def test_a_transpose_written_as_a_reshape_of_a_padded_tile_names_the_reshape(tmp_path: Path,
                                                                              golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "padreshape", "back = pypto.transpose(st, 1, 0)",
                         "back = pypto.reshape(st, [TR, 4])")
    rep = bisect(op_dir, "padreshape_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_bug_after_a_padding_preserving_reshape_does_not_name_it(tmp_path: Path, golden_cache: dict) -> None:
    # the rows' padding stays at the end of each row (leading axes only): the reshape is right, the mul is the bug
    op_dir, line = plant(DATA, tmp_path, "padreshape", "st = pypto.mul(tt, 2.0)",
                         "st = pypto.reshape(pypto.mul(pypto.reshape(tt, [1, 4, TR]), 3.0), [4, TR])")
    rep = bisect(op_dir, "padreshape_impl.py", golden_cache=golden_cache)
    assert not any("lands among the valid elements" in e for e in rep.evidence), rep.evidence
    f = rep.first_divergence
    assert f is None or f.line == line, (rep.summary, rep.evidence)


def test_a_lane_mask_of_the_wrong_view_names_the_mask_not_the_view(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(ROPE, tmp_path, "rope_heads", "c_e = pypto.gathermask(c_t, pattern_mode=1)",
                         "c_e = pypto.gathermask(s_t, pattern_mode=1)")
    rep = bisect(op_dir, "rope_heads_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_view_of_the_wrong_input_is_still_named_at_the_view(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(ROPE, tmp_path, "rope_heads", "s_t = pypto.view(sin,", "s_t = pypto.view(cos,")
    rep = bisect(op_dir, "rope_heads_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_bug_on_an_input_the_wrapper_permutes_is_named(tmp_path: Path, golden_cache: dict) -> None:
    # the value computed from the raw input where the quartered one was meant: its golden ``xs`` is an orphan, and the
    # input (permuted, padded) and the golden's quartered ``xn`` (computed in the input's own layout) are now laid out
    # as the kernel argument, so the op's operands are shown right and it is paired with ``xs``
    op_dir, line = plant(DATA, tmp_path, "permin", "a = pypto.mul(n, 2.0)", "a = pypto.mul(t, 2.0)")
    rep = bisect(op_dir, "permin_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("the wrapper passes input 'x'" in e for e in rep.evidence), rep.evidence


def test_a_wrong_constant_before_the_permuted_golden_is_named(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "permin", "n = pypto.mul(t, 0.25)", "n = pypto.mul(t, 0.3)")
    rep = bisect(op_dir, "permin_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


# --- second look (s40 review): each new rule on a kernel where it fired at the wrong line ---

_SC_DECL = '    acc = pypto.tensor([8, 1], pypto.DT_FP32, "acc")\n'


def test_an_accumulation_reading_another_unwritten_local_does_not_name_the_if(tmp_path: Path,
                                                                              golden_cache: dict) -> None:
    # ``sc`` is declared and never written: the else line raises on ``sc``, not on ``acc`` - the first-trip test and
    # ``acc``'s initialisation are right (the if was named)
    op_dir, line = plant(DATA, tmp_path, "firsttrip", "            acc[:] = pypto.add(acc, ts)",
                         "            acc[:] = pypto.add(acc, pypto.mul(ts, sc))")
    p = op_dir / "firsttrip_impl.py"
    p.write_text(p.read_text().replace(_SC_DECL, _SC_DECL + '    sc = pypto.tensor([8, 1], pypto.DT_FP32, "sc")\n'))
    rep = bisect(op_dir, "firsttrip_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "RUNTIME_ERROR" and f is not None and f.line == line + 1, (rep.summary, rep.evidence)
    assert not any("does not pick the first trip" in e for e in rep.evidence), rep.evidence


def test_the_branch_rule_leaves_another_uninitialised_local_alone() -> None:
    src = (DATA / "firsttrip" / "firsttrip_impl.py").read_text()
    src = src.replace("acc[:] = pypto.add(acc, ts)", "acc[:] = pypto.add(acc, pypto.mul(ts, sc))").replace(
        _SC_DECL, _SC_DECL + '    sc = pypto.tensor([8, 1], pypto.DT_FP32, "sc")\n')
    at = next(i for i, ln in enumerate(src.splitlines(), 1) if "pypto.mul(ts, sc)" in ln)
    # unnamed (EMU_UNINIT): ``sc`` has no write anywhere before the raising line
    assert static_branch_guard_source(src, at, _UNINIT) is None
    # named by the error: another tensor than the accumulated one
    assert static_branch_guard_source(src, at, "Tensor 'sc' is missing Alloc - a local pypto.tensor is read but "
                                               "never written") is None
    # named, and it is the accumulated one: the rule stands
    plain = (DATA / "firsttrip" / "firsttrip_impl.py").read_text()
    acc = next(i for i, ln in enumerate(plain.splitlines(), 1) if "acc[:] = pypto.add(acc, ts)" in ln)
    got = static_branch_guard_source(plain.replace("if t == 0:", "if t == 1:"), acc,
                                     "Tensor 'acc' is missing Alloc - a local pypto.tensor is read but never written")
    assert got is not None and got[0] == acc - 3, got


def test_a_loop_starting_past_the_tested_trip_names_the_loop(tmp_path: Path, golden_cache: dict) -> None:
    # ``range(1, n)`` with a right ``if t == 0``: the branch is never taken - the range dropped the first tile
    op_dir, line = plant(DATA, tmp_path, "firsttrip", "for t in range(64 // TC):", "for t in range(1, 64 // TC):")
    rep = bisect(op_dir, "firsttrip_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "RUNTIME_ERROR" and f is not None and f.line == line, (rep.summary, rep.evidence)


def test_an_in_place_kernel_beside_host_weights_does_not_name_the_call(tmp_path: Path,
                                                                       golden_cache: dict) -> None:
    # the kernel writes over the input (the wrapper returns it) and reads host weights of its shape; ``p + u`` for
    # ``p + t`` is what a replay with the two exchanged also repairs - but the wrapper returns what the kernel wrote
    op_dir, line = plant(DATA, tmp_path, "inplace", "pypto.add(p, t)", "pypto.add(p, u)")
    rep = bisect(op_dir, "inplace_impl.py", golden_cache=golden_cache)
    call = next(i for i, ln in enumerate((op_dir / "inplace_impl.py").read_text().splitlines(), 1)
                if "inplace_kernel(x, w)" in ln)
    assert rep.status != "NO_DIVERGENCE"
    assert not any("each other's place" in e for e in rep.evidence), rep.evidence
    f = rep.first_divergence
    assert f is None or f.line == line, (call, rep.summary, rep.evidence)


def test_the_reshape_box_check() -> None:
    assert _reshape_keeps_padding([4, 8], [4, 4], [4, 2, 4])        # the padding is the second lane group
    assert _reshape_keeps_padding([16, 32], [16, 8], [16, 2, 16])
    assert _reshape_keeps_padding([4, 8], [3, 4], [4, 2, 4])
    assert _reshape_keeps_padding([4, 4, 32], [4, 4, 8], [16, 32])    # leading axes merged
    assert not _reshape_keeps_padding([4, 8], [4, 6], [8, 4])         # the transpose written as a reshape
    assert not _reshape_keeps_padding([4, 8], [4, 6], [4, 2, 4])      # 6 lanes do not fill whole groups of 4
    assert not _reshape_keeps_padding([4, 8], [4, 4], [32])           # flattened: padding between the rows


def test_an_honest_split_of_a_padded_lane_axis_is_not_named(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "padsplit", "b = pypto.add(a, 1.0)", "b = pypto.add(a, 1.5)")
    rep = bisect(op_dir, "padsplit_impl.py", golden_cache=golden_cache)
    assert not any("lands among the valid elements" in e for e in rep.evidence), rep.evidence
    f = rep.first_divergence
    assert f is None or f.line == line, (rep.summary, rep.evidence)


def test_a_permuted_input_whose_golden_pads_with_f_of_zero_still_names_the_line(tmp_path: Path,
                                                                                 golden_cache: dict) -> None:
    # the laid-out intermediate ``xn`` is padded with zeros, the golden (and the kernel) with ``f(0) = 1``: the wrong
    # constant on ``n``'s line is still named there, and a later bug is not claimed on ``n``
    op_dir, line = plant(DATA, tmp_path, "permpad", "pypto.mul(t, 0.25), 1.0)", "pypto.mul(t, 0.3), 1.0)")
    rep = bisect(op_dir, "permpad_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    op_dir, line = plant(DATA, tmp_path / "b", "permpad", "b = pypto.add(a, 1.0)", "b = pypto.add(a, 1.5)")
    rep = bisect(op_dir, "permpad_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is None or f.line == line, (rep.summary, rep.evidence)


def test_the_cos_view_reading_sin_is_named_at_the_view(tmp_path: Path, golden_cache: dict) -> None:
    # both selections of the view are wrong: none is corroborated, the view stays named
    op_dir, line = plant(ROPE, tmp_path, "rope_heads", "c_t = pypto.view(cos,", "c_t = pypto.view(sin,")
    rep = bisect(op_dir, "rope_heads_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


# --- the gym rows themselves (real shapes; each 10-100 s) ---

GYM_NAMED = ["e12_rms_call_swap", "e12_as_first_trip", "e12_mhc_final_reshape"]


@pytest.mark.slow
@pytest.mark.parametrize("bug_id", GYM_NAMED)
def test_twelfth_gym_bug_is_named_at_its_line(op_root: Path, tmp_path: Path, bug_id: str, golden_cache: dict) -> None:
    from gym_corpus import import_op
    from gym_corpus_twelfth import BUGS, materialize

    bug = next(b for b in BUGS if b.id == bug_id)
    d, stage, (lo, hi) = materialize(bug, import_op(bug.op, op_root), tmp_path)
    rep = bisect(d, stage, golden_cache=golden_cache, timeout=600.0)
    f = rep.first_divergence
    assert f is not None and lo <= (f.line or 0) <= hi, (bug_id, rep.summary, rep.evidence)
    assert f.status not in ("match", "input", "const"), rep.to_json()
