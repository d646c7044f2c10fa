"""Iteration-aligned matching: a kernel loop line's j-th execution stands for the golden loop statement's j-th value.

The gym's ``mhc_sinkhorn`` runs 20 Sinkhorn rounds; the golden does the same in a torch loop, and the deep capture
keeps every round (``golden.py:39 div@k``). Sinkhorn converges: after a few rounds every round's golden equals the
next within tolerance, and a kernel with a wrong axis converges to *another* fixed point that equals some golden of
the family (late row sums and column sums are all ~1). Matched by value alone, the buggy rounds "matched" late
goldens and nothing before the final copy departed (``mhc_col_axis``, ``mhc_row_axis``: not localized; on the small
kernel here the column-axis bug was even named one line late). Aligned, the first rounds - where the values still
differ clearly - depart, and the pairing / wrong-axis rules name the line.

The kernel ``iter_data/sinkhorn`` is ours (six rounds over [8, 8, 8] tiles, a Python loop the trace unrolls), not the
vendor's; the gym cases are in ``test_bisect_gym_real.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from runtime.bisect._analyzer import Aligned, Analyzer, Golden
from runtime.bisect._records import Rec

SINKHORN = Path(__file__).parent / "iter_data" / "sinkhorn"


def _line(path: Path, text: str) -> int:
    lines = path.read_text().splitlines()
    hits = [i + 1 for i, t in enumerate(lines) if text in t]
    assert len(hits) == 1, text
    return hits[0]


@pytest.mark.slow  # (torch's import in the golden child: ~3.5 s of CPU)
def test_the_deep_capture_says_which_loop_round_a_golden_value_is() -> None:
    """Every ``golden.py:L op@k`` of a statement run several times is the k-th of a family, and so are the locals
    that name its first and last values (``row#1``, ``h``): their op labels are dropped for the name."""
    pytest.importorskip("torch")
    from runtime.opdir import load_op_dir, run_golden

    op = load_op_dir(SINKHORN)
    run = run_golden(op, op.cases()[0], deep=True)
    g = SINKHORN / "golden.py"
    row, div_r, col, div_c = (_line(g, t) for t in ("row = h.sum", "h = h / row", "col = h.sum", "h = h / col"))
    fam = run.families
    assert fam["row#1"] == (f"golden.py:{row} sum", 1, 6)
    assert fam["row"] == (f"golden.py:{row} sum", 6, 6)
    assert fam[f"golden.py:{div_r} div"] == (f"golden.py:{div_r} div", 1, 6)
    assert fam[f"golden.py:{div_r} div@3"] == (f"golden.py:{div_r} div", 3, 6)
    assert fam["col#1"] == (f"golden.py:{col} sum", 1, 6)
    assert fam["h"] == (f"golden.py:{div_c} div", 6, 6)
    assert f"golden.py:{col} sum" not in run.intermediates  # (named `col#1`)
    # statements run once are no family
    assert not any(f[2] == 1 for f in fam.values())
    assert "x" not in fam


def _rec(seq: int, line: int, value: np.ndarray, inputs: list[int], name: str | None = None) -> Rec:
    return Rec(seq=seq, node=seq, op="div" if line == 2 else "view", file="k.py", line=line, iteration={"t": 0},
               name=name, value=value, shape=list(value.shape), offsets=[0, 0],
               inputs=[{"kind": "record", "seq": s} for s in inputs], source="x" if line == 1 else None)


def test_the_jth_execution_matches_only_the_jth_golden_of_a_family_of_as_many() -> None:
    """A converging loop: three rounds of the golden are d@1 = x/2, d@2 = x/4, d@3 = x/4 (converged). A kernel
    whose round 1 already gives x/4 equals d@2 and d@3 by value; aligned, it matches neither (round 1 stands for
    d@1 only), while rounds 2 and 3 match theirs. A statement run a number of times no family has is free."""
    rng = np.random.default_rng(0)
    x = rng.uniform(1, 2, (8, 16)).astype(np.float32)
    arrays = {"x": x, "d": x / 2, "d@2": x / 4, "d@3": x / 4}
    kinds = {"x": "input", "d": "intermediate", "d@2": "intermediate", "d@3": "intermediate"}
    iters = {"d": Aligned("golden.py:5 div", 1, 3), "d@2": Aligned("golden.py:5 div", 2, 3),
             "d@3": Aligned("golden.py:5 div", 3, 3)}

    def run(rounds: int, with_iters: bool) -> Analyzer:
        an = Analyzer(Golden(arrays, kinds, atol=1e-5, rtol=1e-4, align=iters if with_iters else {}))
        an.begin_call([("x", x)])
        an.add(_rec(0, 1, x, []))
        for j in range(rounds):
            an.add(_rec(j + 1, 2, x / 4, [0]))
        an.finish()
        return an

    an = run(3, True)
    assert [an.exec_index(r) for r in an.recs[1:]] == [(1, 3), (2, 3), (3, 3)]
    assert an.status[1] == "unknown" and 1 not in an.matched  # round 1 is not d@2 / d@3
    assert an.matched[2][0] == "d@2" and an.matched[3][0] == "d@3"
    before = run(3, False)  # (value alone: round 1 "matches" a later round)
    assert before.status[1] == "match" and before.matched[1][0] in ("d@2", "d@3")
    free = run(2, True)  # two executions, a family of three: not the same loop, no constraint
    assert free.status[1] == "match"


def _plant(tmp: Path, old: str | None, new: str | None) -> tuple[Path, Path, int]:
    d = tmp / "sinkhorn"
    shutil.copytree(SINKHORN, d)
    stage = d / "sinkhorn_impl.py"
    line = 0
    if old is not None and new is not None:
        line = _line(stage, old)
        src = stage.read_text()
        stage.write_text(src.replace(old, new))
    return d, stage, line


@pytest.mark.slow
@pytest.mark.parametrize("old,new", [
    # the column sum over the row axis: ~1 everywhere after the row normalization, the loop stops moving (named one
    # line late, the division after it, before the alignment)
    ("col = pypto.sum(h, 1, keepdim=True)", "col = pypto.sum(h, 2, keepdim=True)"),
    ("row = pypto.sum(h, 2, keepdim=True)", "row = pypto.sum(h, 1, keepdim=True)"),
    # stale state: the column step divides by the row sums again
    ("h = h / col", "h = h / row"),
])
def test_a_bug_in_a_converging_loop_is_named_at_its_line(tmp_path: Path, old: str, new: str) -> None:
    pytest.importorskip("torch")
    from runtime.bisect import bisect

    d, stage, line = _plant(tmp_path, old, new)
    rep = bisect(d, stage)
    assert rep.status == "DIVERGENCE_FOUND", (rep.summary, rep.evidence)
    assert rep.first_divergence is not None and rep.first_divergence.line == line, (rep.summary, rep.evidence)


@pytest.mark.slow
def test_the_clean_converging_loop_does_not_diverge(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from runtime.bisect import bisect

    d, stage, _ = _plant(tmp_path, None, None)
    rep = bisect(d, stage)
    assert rep.status == "NO_DIVERGENCE", (rep.summary, rep.evidence)
