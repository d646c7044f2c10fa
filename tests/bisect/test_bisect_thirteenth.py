"""What the thirteenth gym corpus (``gym_corpus_thirteenth``, session 41) found bisect naming wrong or nothing, on small
kernels (``thirteenth_data``), plus the gym rows themselves (slow; they skip without the gym corpus or torch).

* an op reading one value where another the kernel computed was meant (``gelu(c_new_tile)`` for ``gelu(h_temp)``,
  ``cast(ds_ij)`` for ``cast(p_ij)``, ``view(sm_i_8)`` for ``view(ss_i_8)``): its operand matches the golden, the
  values after it have no golden of their own, and the report ended at a window of suspects. Now
  (``_repair.unread_operand``) a replay with the operand holding the other value (an unread one first, else the nearest
  read one holding another golden) names the read that repairs the departure;
* a wrong selection claimed for a right view (``add(c_cand_norm, b_state_b)`` for ``b_cell_b``: the reshape of
  ``b_state`` was named). Now (``_repair._unread_holder``) no selection is claimed when the kernel computes the
  swapped-in golden itself and nothing reads it: the op that reads the wrong one stays named;
* an op in a helper called from another helper (sum_lstm's GELU) had no call site, and two calls of one helper in one
  trip got the same (the later) one. Now (``_claims.call_sites``) the innermost call, the n-th call for the n-th run;
* writes that repeat one offset across an outer loop's trips (``[s1_idx * S_TILE, 0]`` without the head's base): the
  inner loop was named as stopping short. Now (``_rules._repeated_offset_source``) the offset that leaves the outer
  index out.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from planting import plant

from runtime.bisect import bisect
from runtime.bisect._analyzer import Golden
from runtime.bisect._claims import call_sites
from runtime.bisect._records import Rec

DATA = Path(__file__).parent / "thirteenth_data"


def test_the_right_kernels_are_named_nothing(golden_cache: dict) -> None:
    for name in ("twopath", "headrows"):
        rep = bisect(DATA / name, f"{name}_impl.py", golden_cache=golden_cache)
        assert rep.status == "NO_DIVERGENCE", (name, rep.summary)


def test_a_helper_called_on_the_stale_value_names_the_call(tmp_path: Path, golden_cache: dict) -> None:
    # ``h_t`` is computed and dropped; the helper's ops on ``c`` have no golden: the helper's first read, called from
    # the bug line
    op_dir, line = plant(DATA, tmp_path, "twopath", "h = act(h_t)", "h = act(c)")
    rep = bisect(op_dir, "twopath_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and line in (f.line, f.call_site), \
        (rep.summary, rep.evidence)
    assert any("nothing reads it" in e for e in rep.evidence), rep.evidence


def test_a_read_of_the_neighbouring_value_names_the_read(tmp_path: Path, golden_cache: dict) -> None:
    # ``d`` where ``p`` was meant: ``p`` is read elsewhere (by ``d``), so the nearest read values are tried
    op_dir, line = plant(DATA, tmp_path, "twopath", "pm = pypto.add(p, 0.0)", "pm = pypto.add(d, 0.0)")
    rep = bisect(op_dir, "twopath_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)


def test_the_wrong_bias_is_named_at_its_add(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "twopath", "c = pypto.add(pypto.mul(xt, 2.0), b1t)",
                         "c = pypto.add(pypto.mul(xt, 2.0), b2t)")
    rep = bisect(op_dir, "twopath_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


@pytest.mark.parametrize(("old", "new"), [
    ("return pypto.mul(v, s)", "return pypto.mul(v, pypto.mul(s, 2.0))"),  # a wrong constant in the helper
    ("d = pypto.mul(p, c)", "d = pypto.mul(p, pypto.add(c, 1.0))"),         # a wrong term, nothing left unread
])
def test_no_substitute_is_claimed_for_a_bug_of_another_kind(tmp_path: Path, golden_cache: dict, old: str,
                                                             new: str) -> None:
    op_dir, line = plant(DATA, tmp_path, "twopath", old, new)
    rep = bisect(op_dir, "twopath_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status != "NO_DIVERGENCE"
    assert not any("reads the wrong value" in e for e in rep.evidence) or (f is not None and f.line == line), \
        (rep.summary, rep.evidence)
    assert f is None or line in (f.line, f.call_site), (rep.summary, rep.evidence)


def test_a_write_offset_without_the_head_base_names_the_write(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "headrows", "pypto.assemble(r, [off, 0], y)",
                         "pypto.assemble(r, [s * T, 0], y)")
    rep = bisect(op_dir, "headrows_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)


def test_an_offset_local_without_the_head_base_names_the_local(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "headrows", "off = base + s * T", "off = s * T")
    rep = bisect(op_dir, "headrows_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_wrong_head_stride_is_not_taken_for_a_missing_index(tmp_path: Path, golden_cache: dict) -> None:
    # the offset reads ``h`` (with a wrong stride): the repeated-offset rule stays quiet (the loop is still named:
    # open, as s39's head stride)
    op_dir, _line = plant(DATA, tmp_path, "headrows", "base = h * S", "base = h * T")
    rep = bisect(op_dir, "headrows_impl.py", golden_cache=golden_cache)
    assert not any("whose index the offset never reads" in e for e in rep.evidence), rep.evidence


def test_call_sites_of_a_helper_called_twice_from_a_helper_in_an_unrolled_loop() -> None:
    src = textwrap.dedent("""\
        import pypto

        def act(v):
            return pypto.mul(v, 2.0)

        def body(x, out):
            for i, n in pypto.loop_unroll(0, 4, 1, name="L", idx_name="i", unroll_list=[1]):
                a = act(x)
                b = act(a)

        @pypto.frontend.jit
        def kernel(x, out):
            body(x, out)
        """)
    it = {"L_LoopUnroll1": 0}
    recs = [Rec(seq=0, node=0, op="mul", file="k_impl.py", line=4, iteration=dict(it)),
            Rec(seq=1, node=0, op="mul", file="k_impl.py", line=4, iteration=dict(it)),
            Rec(seq=2, node=1, op="add", file="k_impl.py", line=9, iteration=dict(it))]
    sites = call_sites(src, "k_impl.py", recs)
    assert sites.get(0) == 8 and sites.get(1) == 9, sites
    assert sites.get(2) == 13, sites  # (an op of ``body`` itself: called from the kernel)


def test_a_column_tile_walks_a_merged_golden() -> None:
    g = np.arange(32, dtype=np.float32).reshape(1, 4, 1, 8)
    gold = Golden({"g": g}, {"g": "intermediate"}, 1e-5, 1e-5)
    lays = dict(gold.layouts("g", (8, 1)))
    assert "flat" in lays and lays["flat"].shape == (32, 1)
    assert np.array_equal(lays["flat"][8:16, 0], g[0, 1, 0])
    # a tile that fits a plain layout gets no flat one
    assert "flat" not in dict(gold.layouts("g", (4, 8)))


# --- the gym rows themselves (real shapes; each 30-70 s) ---

GYM_NAMED = ["e13_lstm_cell_bias_state", "e13_lstm_gelu_stale", "e13_fag_ssum_from_max", "e13_fag_p_cast_ds",
             "e13_fag_dq_write_nobase"]


@pytest.mark.slow
@pytest.mark.parametrize("bug_id", GYM_NAMED)
def test_thirteenth_gym_bug_is_named_at_its_line(op_root: Path, tmp_path: Path, bug_id: str,
                                                 golden_cache: dict) -> None:
    from gym_corpus import import_op
    from gym_corpus_thirteenth import BUGS, materialize

    bug = next(b for b in BUGS if b.id == bug_id)
    d, stage, (lo, hi) = materialize(bug, import_op(bug.op, op_root), tmp_path)
    rep = bisect(d, stage, golden_cache=golden_cache, timeout=600.0)
    f = rep.first_divergence
    assert f is not None and any(lo <= (x or 0) <= hi for x in (f.line, f.call_site)), \
        (bug_id, rep.summary, rep.evidence)
    assert f.status not in ("match", "input", "const"), rep.to_json()
