"""Bisect on running state (issue 30, session 6): an online softmax's recurrence, and a contraction of two tiles.

A kernel walking the softmax axis tile by tile keeps a running max, sum and accumulator in local tensors; the
golden computes ``softmax(scores) @ v`` whole, so none of those values had a golden and a bug inside the
recurrence was at best "somewhere in these 8 lines". ``runtime.bisect._online`` derives them from the golden
(per tile and running, member ``k`` of a family compared only with the kernel's iteration ``k``: ``Golden.align``)
when nothing could be named at first. The kernels here are the held-out ``gqa_decode`` (two KV tiles per head, a
nested head loop, a numpy golden) and ``softmax_two_pass`` (running max / sum over four chunks of an *input*).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from heldout_corpus import BUGS, HELDOUT, materialize

from runtime.bisect import bisect
from runtime.bisect._analyzer import Aligned, Analyzer, Golden
from runtime.bisect._online import _derive, _softmax_inputs, _value_tensor
from runtime.bisect._records import Rec


def _heldout(bug_id: str, tmp: Path) -> tuple[Path, Path, int]:
    return materialize(next(b for b in BUGS if b.id == bug_id), tmp)


def _planted(op: str, old: str, new: str, tmp: Path) -> tuple[Path, Path, int]:
    op_dir = tmp / f"{op}_planted"
    shutil.copytree(HELDOUT / op, op_dir)
    stage = op_dir / f"{op}_impl.py"
    lines = stage.read_text().splitlines(keepends=True)
    where = [i for i, t in enumerate(lines) if old in t]
    assert len(where) == 1, old
    lines[where[0]] = lines[where[0]].replace(old, new)
    stage.write_text("".join(lines))
    return op_dir, stage, where[0] + 1


@pytest.mark.parametrize("bug_id", ["gqa_alpha", "gqa_lsum_rescale", "sm2_rescale"])
def test_a_bug_inside_the_running_state_is_named(tmp_path: Path, golden_cache: dict, bug_id: str) -> None:
    """``alpha = exp(m_new - m)`` (sign), ``lsum + sum(p)`` (rescale missing), ``den + sum(...)`` (four chunks of
    an input): before, not localized with 3-8 suspect lines; the derived goldens show the op whose golden repairs
    the output, computed on its own line from values that all match."""
    op_dir, stage, line = _heldout(bug_id, tmp_path)
    rep = bisect(op_dir, stage, golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None, rep.summary
    assert f.line == line, f"named {f.line}, bug on {line}: {rep.evidence}"
    assert f.status not in ("match", "input", "const")
    if bug_id == "gqa_alpha" and any("operands are in the wrong order" in e for e in rep.evidence):
        # (session 47: ``exp(m_new - m)`` for ``exp(m - m_new)`` is a swapped ``sub``; the first analysis' swap replay
        # names it before a second look is needed)
        return
    assert any(e.startswith("second look with derived goldens") for e in rep.evidence), rep.evidence
    assert any("online(" in e and "repairs" in e for e in rep.evidence), rep.evidence


def test_no_claim_when_the_derived_goldens_name_nothing(tmp_path: Path, golden_cache: dict) -> None:
    """``mx[:] = cmax`` for ``mx[:] = m_new``: the second look finds no line it can show, and a narrower second
    window that leaves the bug out is not taken. Since session 47 the first analysis names the line from the source
    (``_rules.discarded_combination``: ``m_new``, computed from ``mx`` and ``cmax`` in the same block, is never stored
    into ``mx``), so no second look is taken at all."""
    op_dir, stage, line = _heldout("sm2_mx_update", tmp_path)
    rep = bisect(op_dir, stage, golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("the state's update was meant to store" in e for e in rep.evidence), rep.evidence
    assert not any(e.startswith("second look") for e in rep.evidence)


def test_a_contraction_of_two_different_tiles_names_the_stuck_view(tmp_path: Path, golden_cache: dict) -> None:
    """``p @ vt`` with ``vt`` read at key tile 0 for every key tile (``p`` follows the loop): the matmul's operands
    index the contracted axis differently; the view that never moves is named (before: the matmul itself, or not
    localized)."""
    op_dir, stage, line = _planted("gqa_decode", "vt = pypto.view(v, [BLK, D], [j * BLK, hk * D]",
                                   "vt = pypto.view(v, [BLK, D], [0, hk * D]", tmp_path)
    rep = bisect(op_dir, stage, golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None, rep.summary
    assert f.line == line and f.op == "view", rep.evidence
    assert any("contracts an axis" in e for e in rep.evidence), rep.evidence


def test_the_right_kernel_still_matches(tmp_path: Path, golden_cache: dict, tail_case) -> None:
    op_dir = tmp_path / "gqa_decode"
    shutil.copytree(HELDOUT / "gqa_decode", op_dir)
    rep = bisect(op_dir, op_dir / "gqa_decode_impl.py", case=tail_case(op_dir), golden_cache=golden_cache)
    assert rep.status == "NO_DIVERGENCE", rep.summary


def test_a_family_member_is_compared_with_its_own_iteration_only() -> None:
    """Two iterations whose values are equal (a running max that stopped changing): the value of iteration 1
    matches member 1 only, never member 0, although both hold the same numbers."""
    a = np.arange(8, dtype=np.float32).reshape(8, 1)
    g = Golden({"x": a, "m@0": a.copy(), "m@1": a.copy()}, {"x": "input", "m@0": "intermediate",
                                                              "m@1": "intermediate"}, atol=1e-6, rtol=1e-6,
               align={"m@0": Aligned("m", 0, 2, "L"), "m@1": Aligned("m", 1, 2, "L")})
    assert g.aligned("x", Rec(seq=0, node=0, op="add", file=None, line=1, iteration={}))
    an = Analyzer(g)
    an.begin_call([("x", a)])
    recs = []
    for k in (0, 1):
        r = Rec(seq=k, node=1, op="mul", file="k.py", line=3, iteration={"L": k}, shape=[8, 1],
                inputs=[{"kind": "tensor", "name": "x"}])
        an.add(r, a * 1.0 + 0.0)
        recs.append(r)
    assert "m@0" in recs[0].summ.hits and "m@1" not in recs[0].summ.hits
    assert "m@1" in recs[1].summ.hits and "m@0" not in recs[1].summ.hits
    outside = Rec(seq=2, node=2, op="mul", file="k.py", line=4, iteration={}, shape=[8, 1],
                  inputs=[{"kind": "tensor", "name": "x"}])
    an.add(outside, a * 1.0)
    assert "m@0" not in outside.summ.hits and "m@1" not in outside.summ.hits


def test_derived_goldens_are_the_online_recurrence() -> None:
    """The derived values obey the recurrence a right kernel computes (``run_sum@k = alpha@k * run_sum@k-1 +
    beta@k * tile_sum@k``, the same for the accumulator), and the last running values are the golden's totals."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4, 96)).astype(np.float32)
    v = rng.normal(size=(2, 96, 8)).astype(np.float32)
    mx = x.max(-1, keepdims=True)
    e = np.exp(x - mx)
    ctx = e @ v
    g = Golden({"x": x, "v": v, "mx": mx, "e": e, "ctx": ctx},
               {"x": "input", "v": "input", "mx": "intermediate", "e": "intermediate", "ctx": "output"},
               atol=1e-5, rtol=1e-5)
    assert _softmax_inputs(g) == [("x", "mx")]
    assert _value_tensor(g, "x", "mx") == "v"
    d, align = _derive("x", x.astype(np.float64), v.astype(np.float64), 32, "L")
    assert {a.k for a in align.values()} == {0, 1, 2} and all(a.loop == "L" and a.count == 3 for a in align.values())
    p = "online(x)."
    for k in (1, 2):
        rs = d[f"{p}alpha@{k}"] * d[f"{p}run_sum@{k - 1}" if k > 1 else f"{p}tile_sum@0"] \
            + d[f"{p}beta@{k}"] * d[f"{p}tile_sum@{k}"]
        np.testing.assert_allclose(rs, d[f"{p}run_sum@{k}"], rtol=1e-5)
        acc = d[f"{p}alpha@{k}"] * d[f"{p}run_pv@{k - 1}" if k > 1 else f"{p}tile_pv@0"] \
            + d[f"{p}beta@{k}"] * d[f"{p}tile_pv@{k}"]
        np.testing.assert_allclose(acc, d[f"{p}run_pv@{k}"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(d[f"{p}run_max@2"], mx)
    np.testing.assert_allclose(d[f"{p}run_sum@2"], e.sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(d[f"{p}run_pv@2"], ctx, rtol=1e-4, atol=1e-5)
    assert list(d).index(f"{p}tile_max@1") < list(d).index(f"{p}run_max@1") < list(d).index(f"{p}run_sum@1")


def test_running_state_overwritten_before_it_is_read_is_named(tmp_path: Path, golden_cache: dict) -> None:
    """``den[:] = sum(exp(xt - m_new))`` for ``den[:] = den * exp(mx - m_new) + sum(...)``: the running sum of chunk
    0 is overwritten by chunk 1's before anything read it (gym ``attn_softmax``'s stale ``tsum[:] = ts``). Nothing
    matches the golden between the inputs and the output there (a two-pass softmax's per-chunk sums are shares of
    nothing the golden names); the data flow alone shows the lost value: the overwriting write is named."""
    op_dir, stage, line = _planted("softmax_two_pass",
                                   "den[:] = den * pypto.exp(mx - m_new) + pypto.sum(pypto.exp(xt - m_new), -1, keepdim=True)",
                                   "den[:] = pypto.sum(pypto.exp(xt - m_new), -1, keepdim=True)", tmp_path)
    rep = bisect(op_dir, stage, golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None, rep.summary
    assert f.line == line, rep.evidence
    assert any("without reading what" in e for e in rep.evidence), rep.evidence
