"""Lint false refusals found by red team round 28 (s39 "accident": kernels shaped like the gym's operators,
``tests/redteam/test_round28_s39.py``), each with the refusal it must keep.

- OL51 took a gather for "only written from a trivial source" when the tensor read reached the view's offsets
  through two local names: the gym's own gather_pa_kv_cache writes ``physical_block = block_tables[q, j]``,
  ``cache_offset = physical_block * block_size``, ``view(cache, ..., [cache_offset, 0, 0])``. One level
  (``blk = table[b, j]``; ``[blk, 0, 0]``) was followed, two were not; the dependence is now followed through
  every local binding (cycles cut). A copy whose offsets depend on loop indices and shapes alone stays refused;
- OL49 refused ``pypto.loop_unroll(..., unroll_list=[2, 1])`` around a block loop (the vendor's gather_pa_kv_cache
  does exactly that): the upstream trigger is a ``pypto.loop`` with ``unroll_list`` around another loop, and a
  ``loop_unroll``'s factors are what that function is (its body handles ``factor`` items per step).
"""

from __future__ import annotations

from pathlib import Path

from runtime.lint import lint_source

CANDS = Path(__file__).resolve().parents[1] / "redteam" / "fixture_s39acc" / "candidates"


def _fails(text: str, rule: str) -> list[str]:
    return [f.message for f in lint_source(text, "paged_kv_impl.py", stage="final")
            if f.rule_id == rule and f.status == "FAIL"]


def test_ol51_follows_a_table_read_through_two_local_names() -> None:
    src = (CANDS / "pk_h_gym_offsets.py").read_text(encoding="utf-8")
    assert "cache_offset = physical_block * BS" in src
    assert _fails(src, "OL51") == []


def test_ol51_follows_a_table_read_inside_an_expression() -> None:
    src = (CANDS / "pk_honest.py").read_text(encoding="utf-8")
    edited = src.replace("blk = table[b, j]", "blk = table[b, j] + 0")
    assert edited != src
    assert _fails(edited, "OL51") == []


def test_ol51_still_refuses_a_copy_whose_offsets_are_loop_arithmetic() -> None:
    src = (CANDS / "pk_honest.py").read_text(encoding="utf-8")
    edited = src.replace("blk = table[b, j]", "first = j\n            blk = first * 2 + b")
    assert edited != src
    assert _fails(edited, "OL51"), "a plain copy must stay refused"


def test_ol51_terminates_on_self_referential_names() -> None:
    src = (CANDS / "pk_honest.py").read_text(encoding="utf-8")
    edited = src.replace("blk = table[b, j]", "blk = j\n            blk = blk + 1")
    assert edited != src
    assert _fails(edited, "OL51")


def test_ol49_admits_loop_unroll_around_a_block_loop() -> None:
    src = (CANDS / "pk_h_loop_unroll.py").read_text(encoding="utf-8")
    assert "pypto.loop_unroll(" in src and "unroll_list=[2, 1]" in src
    assert _fails(src, "OL49") == []


def test_ol49_still_refuses_an_unrolled_pypto_loop_around_another_loop() -> None:
    src = (CANDS / "pk_honest.py").read_text(encoding="utf-8")
    edited = src.replace('name="seq", idx_name="b")', 'name="seq", idx_name="b", unroll_list=[1])')
    assert edited != src
    assert any("outer loop" in m for m in _fails(edited, "OL49"))
