"""A second look (session 39b) at the seven rules the tenth gym corpus brought, and gated_delta_rule's permuted
output, on small kernels (``eleventh_data``; no vendor code).

* ``wrong_loop_guard`` named the ``if pypto.is_loop_begin(i)`` around any departing write testing an outer loop's
  index inside an inner loop - also where that guard is right: a column sum whose inner trip ``j`` starts its own
  output tile on the outer loop's first trip (``colsum``), with the bug in the value written. Now the rule stays
  quiet when the guarded write's place is chosen by the inner index (``_rules._placed_by``);
* ``static_alias_source`` named a bare alias (``bf = bt``) in a dtype clash whenever the other operand came from a
  cast - also where the alias is right (its input is fp32 already) and the cast is the slip (``cast(at, DT_FP16)``
  of an fp16 value, ``castmix``). Now an alias whose declared dtype differs from the other cast's source is not
  named, and a cast to the dtype its operand already has is;
* a wrapper that pads the sequence, permutes ``[B, S, H, D]`` heads first into a ``[H*S_pad, D]`` kernel buffer and
  permutes / crops the output back (the gym gated_delta_rule): bisect laid the golden output over the buffer merged
  as ``[S*H, D]``, so the kernel's right writes departed by chance and a bug upstream was not localized. Now
  (``api._host_layouts``) the output's layout in the buffer is read from the run's own data and the golden is
  compared in it (``permout``).
"""

from __future__ import annotations

from pathlib import Path

from planting import plant

from runtime.bisect import bisect
from runtime.bisect._rules import static_alias_source, wrong_loop_guard

DATA = Path(__file__).parent / "eleventh_data"


def _planted(tmp: Path, name: str, old: str, new: str) -> tuple[Path, int]:
    return plant(DATA, tmp, name, old, new)


def _line(name: str, text: str) -> int:
    src = (DATA / name / f"{name}_impl.py").read_text()
    return next(i for i, ln in enumerate(src.splitlines(), 1) if text in ln)


def test_the_right_kernels_are_named_nothing(golden_cache: dict) -> None:
    for name in ("permout", "colsum", "castmix"):
        rep = bisect(DATA / name, f"{name}_impl.py", golden_cache=golden_cache)
        assert rep.status == "NO_DIVERGENCE", (name, rep.summary)


def test_a_guard_on_the_outer_index_placed_by_the_inner_one_is_not_named(tmp_path: Path,
                                                                           golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "colsum", "pypto.assemble(part, [0, j * TC], out)",
                            "pypto.assemble(pypto.mul(part, 2.0), [0, j * TC], out)")
    rep = bisect(op_dir, "colsum_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_the_guard_rule_still_names_one_accumulator_reset_every_inner_trip() -> None:
    src = (DATA / "colsum" / "colsum_impl.py").read_text()
    write = _line("colsum", "pypto.assemble(part, [0, j * TC], out)")
    assert wrong_loop_guard(src, write) is None
    # the same guard around a write whose place the inner index does not choose: one accumulator, the rule's case
    bad = src.replace("pypto.assemble(part, [0, j * TC], out)", "pypto.assemble(part, [0, 0], out)")
    got = wrong_loop_guard(bad, write)
    assert got is not None and got[0] == write - 1


def test_a_wrong_cast_beside_a_right_alias_names_the_cast(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "castmix", "af = pypto.cast(at, pypto.DT_FP32)",
                            "af = pypto.cast(at, pypto.DT_FP16)")
    rep = bisect(op_dir, "castmix_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    alias = _line("castmix", "bf = bt")
    assert not any(f"bound at line {alias}" in e for e in rep.evidence), rep.evidence


def test_the_alias_rule_without_declared_dtypes_is_unchanged() -> None:
    # (the gym sum_lstm declares no dtypes on its parameters: the alias is still named there)
    src = (DATA / "castmix" / "castmix_impl.py").read_text().replace(
        "pypto.Tensor([8, 32], pypto.DT_FP16)", "pypto.Tensor()").replace(
        "pypto.Tensor([8, 32], pypto.DT_FP32)", "pypto.Tensor()")
    err = next(i for i, ln in enumerate(src.splitlines(), 1) if "pypto.add(af, bf)" in ln)
    got = static_alias_source(src, err, "add: The dtype of input tensors are not same.")
    assert got is not None and got[0] == _line("castmix", "bf = bt")


def test_a_right_permuted_output_and_a_bug_upstream_of_it(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "permout", "a = pypto.mul(t, 2.0)", "a = pypto.mul(t, 2.5)")
    rep = bisect(op_dir, "permout_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("read as [4, 8, 16] with axes (1, 0, 2)" in e for e in rep.evidence), rep.evidence


def test_a_permuted_output_written_at_the_wrong_offset_names_the_write(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "permout", "pypto.assemble(c, [h * SP, 0], out)",
                            "pypto.assemble(c, [h, 0], out)")
    rep = bisect(op_dir, "permout_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
