"""What the tenth gym corpus (``gym_corpus_tenth``, session 39) found bisect naming wrong, on small kernels.

* a loop's trip count rounded down on its own line (``rloops = (R - 1) // TR``): ``coverage_gap`` named the loop
  that runs it (late). Now (``_rules._count_source``) the count's line when it is computed from the tile size the
  writes' offset steps by; a loop given the other axis' count is still named at the loop;
* an accumulator initialised under ``is_loop_begin`` of the outer loop's index inside the inner loop: the write
  under the ``if`` was named. Now (``_rules.wrong_loop_guard``) the ``if``;
* an output buffer that is the input (``out1 = x``): the kernel writes over data its second pass reads; a replay
  (each argument its own copy) is right, so the wrapper's ``return`` was named. Now (``api._aliased_arguments``) the
  alias line;
* a host transpose re-bound under the input's own name (``x = np.ascontiguousarray(x.T)``): the kernel call was
  named. Now (``api._argument_line``) the re-binding;
* a cast dropped to a bare alias (``bf = bt``): the add meeting the two dtypes was named. Now
  (``_rules.static_alias_source``) the alias;
* a mask the wrapper builds from an input, padded with 0.0 where -1e30 keeps the padded keys out (``mask_pad =
  full(.., 0.0)``): not localized (the kernel computes right from what it got). Now (``api._trailing_pad_repair``)
  a constant slab past an input's extent is replayed with other pad values, and the line filling it is named;
* a bug only a length beyond the SPEC's shows (the host pad width ``T - S``): every SPEC case matched, so bisect
  said no divergence. Now (``api._unseen_probes``) it tries up to three shapes drawn as verify draws unseen cases.
"""

from __future__ import annotations

from pathlib import Path

from planting import plant

from runtime.bisect import bisect
from runtime.bisect._rules import static_alias_source, wrong_loop_guard

DATA = Path(__file__).parent / "tenth_data"


def _planted(tmp: Path, name: str, old: str, new: str) -> tuple[Path, int]:
    return plant(DATA, tmp, name, old, new, key=new.strip().splitlines()[-1])  # (several lines: the last)


def test_the_right_kernels_are_named_nothing(golden_cache: dict) -> None:
    for name in ("rowcount", "accguard", "twopass", "castpair", "padwidth"):
        rep = bisect(DATA / name, f"{name}_impl.py", golden_cache=golden_cache)
        assert rep.status == "NO_DIVERGENCE", (name, rep.summary)


def test_a_trip_count_rounded_down_names_the_count(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "rowcount", "rloops = (R + TR - 1) // TR", "rloops = (R - 1) // TR")
    rep = bisect(op_dir, "rowcount_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_loop_given_the_other_axis_count_names_the_loop(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "rowcount", 'pypto.loop(rloops, name="r_loop"',
                            'pypto.loop(cloops, name="r_loop"')
    rep = bisect(op_dir, "rowcount_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_an_accumulator_guarded_by_the_outer_loop_names_the_guard(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "accguard", "if pypto.is_loop_begin(j):", "if pypto.is_loop_begin(i):")
    rep = bisect(op_dir, "accguard_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_the_guard_rule_leaves_a_guard_on_its_own_loop_alone() -> None:
    src = (DATA / "accguard" / "accguard_impl.py").read_text()
    lines = src.splitlines()
    write = next(i for i, ln in enumerate(lines, 1) if "acc[:] = part" in ln)
    assert wrong_loop_guard(src, write) is None
    bad = src.replace("is_loop_begin(j)", "is_loop_begin(i)")
    got = wrong_loop_guard(bad, write)
    assert got is not None and got[0] == write - 1


def test_an_output_aliasing_the_input_names_the_alias(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "twopass", "out1 = np.zeros_like(x)", "out1 = x")
    rep = bisect(op_dir, "twopass_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_host_transpose_under_the_input_name_names_the_rebinding(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "twopass", "x = np.ascontiguousarray(x)", "x = np.ascontiguousarray(x.T)")
    rep = bisect(op_dir, "twopass_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_dropped_cast_names_the_bare_alias(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "castpair", "bf = pypto.cast(bt, pypto.DT_FP32)", "bf = bt")
    rep = bisect(op_dir, "castpair_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    # (the rule needs a cast on the other side: two bare aliases say nothing about which one lost its cast)
    src = (DATA / "castpair" / "castpair_impl.py").read_text().replace(
        "af = pypto.cast(at, pypto.DT_FP32)", "af = at").replace("bf = pypto.cast(bt, pypto.DT_FP32)", "bf = bt")
    err = next(i for i, ln in enumerate(src.splitlines(), 1) if "pypto.add(af, bf)" in ln)
    assert static_alias_source(src, err, "add: The dtype of input tensors are not same.") is None


def test_a_bug_only_an_unseen_length_shows_is_found_on_a_drawn_shape(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "padwidth", "np.zeros((4, padded - S)", "np.zeros((4, T - S)")
    rep = bisect(op_dir, "padwidth_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.case.startswith("bisect-unseen"), (rep.case, rep.summary)
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_wrong_pad_value_in_a_built_argument_names_the_fill(tmp_path: Path, golden_cache: dict) -> None:
    rep0 = bisect(DATA / "maskpad", "maskpad_impl.py", golden_cache=golden_cache)
    assert rep0.status == "NO_DIVERGENCE", rep0.summary
    op_dir, line = _planted(tmp_path, "maskpad", "np.full((P - S,), -1e30,", "np.full((P - S,), 0.0,")
    rep = bisect(op_dir, "maskpad_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_stage_refusing_a_drawn_shape_on_purpose_is_no_divergence(tmp_path: Path, golden_cache: dict) -> None:
    # (a wrapper that raises for a length no multiple of its tile - the gym flash_attention_score_grad's - is not
    # wrong on the SPEC's cases, and bisect's own drawn shapes must not make it so)
    op_dir, _line = _planted(tmp_path, "padwidth", "    S = x.shape[1]\n",
                             "    S = x.shape[1]\n    if S > T and S % T:\n        raise ValueError('S must be a multiple of T')\n")
    rep = bisect(op_dir, "padwidth_impl.py", golden_cache=golden_cache)
    assert rep.status == "NO_DIVERGENCE", (rep.case, rep.summary)
