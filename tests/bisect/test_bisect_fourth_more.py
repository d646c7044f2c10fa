"""More of what the fourth gym corpus (``gym_corpus_fourth``) found bisect naming wrong, on small kernels written here.

* ``keepdim`` dropped in a 2-D tile (``fag_d_keepdim``: ``d_i = sum(.., -1, keepdim=False)``): the ``[S]`` row statistic
  matches the golden's ``[S, 1]`` by value and broadcasts along the columns, so the ``sub`` using it was named. Now
  (``_repair.dropped_axis``) the named op is recomputed in a replay with that operand given its reduced axis back;
  when that repairs the departure, the reduction is named;
* ``topk(.., largest=False)`` (``ll_topk_smallest``): the indices a top-k picks have no golden of their own, and their
  reads were not even linked to the ``topk`` (the recorder links only an op's first output), so the ``gather`` reading
  them was named. Now those reads are marked with the ``topk`` (``_replay.link_other_outputs``) and the repair also
  replays it taking the other end of its input (``_repair._selection_flip``); when that repairs, it is named;
* two scalar arguments the wrapper passes in each other's place (``adam_call_swap``: ``weight_decay, lr``): both
  kernel lines applying them depart and the one-scalar rule wants one. Now (``_scalar.swapped_scalars``) a replay in
  which the ops applying the two compute with each other's value, repairing every output, names the wrapper's call;
* the wrong loop variable in a nested loop (``fag_s2_loopvar``: ``s2_off = bn_base + s1_idx * S_TILE``): the inner
  loop reads one tile in every pass; every value matches the golden somewhere, only the accumulation is wrong. Now
  (``_repair.stuck_loop_read``) reads of a kernel argument whose offset stays put over the loop they sit in are, in a
  replay, taken a tile further on each pass; when that repairs, the line computing their offset is named.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
from planting import plant

from runtime.bisect import bisect
from runtime.bisect._repair import _flipped_selection
from runtime.bisect._replay import link_other_outputs
from runtime.bisect._scalar import _redo

DATA = Path(__file__).parent / "fourth_data"
EMA = Path(__file__).parent / "third_data" / "ema"


def _planted(tmp: Path, name: str, old: str, new: str, base: Path = DATA) -> tuple[Path, int]:
    return plant(base, tmp, name, old, new)


def test_a_reduction_without_keepdim_broadcast_along_the_other_axis_is_named(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "rowcenter", "pypto.sum(x_t, -1, keepdim=True)",
                            "pypto.sum(x_t, -1, keepdim=False)")
    rep = bisect(op_dir, "rowcenter_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert f.status not in ("match", "input", "const")
    assert any("keepdim=False" in e for e in rep.evidence), rep.evidence


def test_the_right_rowcenter_names_nothing(golden_cache: dict, tail_case) -> None:
    rep = bisect(DATA / "rowcenter", "rowcenter_impl.py", case=tail_case(DATA / "rowcenter"), golden_cache=golden_cache)
    assert rep.status == "NO_DIVERGENCE", rep.summary


def test_a_topk_taking_the_wrong_end_is_named_not_the_gather(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "topsel", "pypto.topk(s_t, K, -1, True)", "pypto.topk(s_t, K, -1, False)")
    rep = bisect(op_dir, "topsel_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("largest=True" in e for e in rep.evidence), rep.evidence


def test_the_right_topsel_names_nothing(golden_cache: dict, tail_case) -> None:
    rep = bisect(DATA / "topsel", "topsel_impl.py", case=tail_case(DATA / "topsel"), golden_cache=golden_cache)
    assert rep.status == "NO_DIVERGENCE", rep.summary


def test_the_flipped_selection_takes_the_other_end_of_the_valid_part() -> None:
    x = np.array([[3.0, 1.0, 4.0, 1.5, 9.0], [2.0, 7.0, 1.0, 8.0, -5.0]], dtype=np.float32)
    vals, idx = _flipped_selection(x, (2, 4), 2, True) or (None, None)  # (it ran with largest=True)
    assert idx is not None and vals is not None
    np.testing.assert_array_equal(idx, [[1, 3], [2, 0]])  # the smallest of the first 4 columns (9.0, -5.0 are padding)
    np.testing.assert_array_equal(vals, [[1.0, 1.5], [1.0, 2.0]])
    _vals, idx = _flipped_selection(x, (2, 4), 2, False) or (None, None)
    assert idx is not None
    np.testing.assert_array_equal(idx, [[2, 0], [3, 1]])
    assert _flipped_selection(x, (2, 4), 5, True) is None  # (more picks than values: not made as the op makes it)


def test_the_reads_of_a_topks_indices_are_marked_with_its_record() -> None:
    side: dict[int, int] = {}
    topk = SimpleNamespace(op=SimpleNamespace(kind="sort", ins=(3,), outs=(7, 8), out_key=7))
    link_other_outputs(topk, [{"kind": "record", "seq": 1}], 5, side)
    assert side == {8: 5}  # (the first output, 7, is linked by the recorder itself)
    gather = SimpleNamespace(op=SimpleNamespace(kind="gather", ins=(2, 8), outs=(9,), out_key=9))
    inputs = [{"kind": "record", "seq": 4}, {"kind": "tensor", "name": "picks"}]
    link_other_outputs(gather, inputs, 6, side)
    assert inputs[1] == {"kind": "tensor", "name": "picks", "of": 5} and "of" not in inputs[0]
    assert side == {8: 5}


def test_two_scalar_arguments_passed_in_each_others_place_name_the_call(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "ema", "ema_kernel(m, g, out, beta, one_m_beta)",
                            "ema_kernel(m, g, out, one_m_beta, beta)", base=EMA.parent)
    rep = bisect(op_dir, "ema_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("in each other's place" in e for e in rep.evidence), rep.evidence


def test_one_wrong_scalar_still_names_the_line_computing_it(tmp_path: Path, golden_cache: dict) -> None:
    # (one departing scalar line: no pair to swap; the one-scalar rule names the wrapper line computing it)
    op_dir, line = _planted(tmp_path, "ema", "one_m_beta = 1.0 - beta", "one_m_beta = 1.0 - beta / 2", base=EMA.parent)
    rep = bisect(op_dir, "ema_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert not any("in each other's place" in e for e in rep.evidence), rep.evidence


def test_a_scalar_op_that_wrote_over_its_operand_is_redone_with_the_other_constant() -> None:
    x = np.array([1.5, -2.0, 4.0])
    for fn, f in (("mul", np.multiply), ("div", np.divide), ("add", np.add), ("sub", np.subtract)):
        got = _redo(fn, f(x, 0.01), 0.01, 0.001)
        assert got is not None
        np.testing.assert_allclose(got, f(x, 0.001), rtol=1e-12)
    assert _redo("mul", x * 0.0, 0.0, 0.5) is None  # (a product with 0 cannot be undone)


def test_a_read_stuck_over_its_loop_names_the_line_computing_its_offset(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "colscale", "w_off = j * T", "w_off = i * T")
    rep = bisect(op_dir, "colscale_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("does not step with its loop" in e for e in rep.evidence), rep.evidence


def test_the_right_colscale_names_nothing(golden_cache: dict, tail_case) -> None:
    rep = bisect(DATA / "colscale", "colscale_impl.py", case=tail_case(DATA / "colscale"), golden_cache=golden_cache)
    assert rep.status == "NO_DIVERGENCE", rep.summary
