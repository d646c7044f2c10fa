"""The pairing test's downstream walk follows the reads of a multi-output op's other outputs (session 48).

``_, idx = pypto.topk(s, k)`` then ``scatter_(m, 1, idx, 1.0)``: the recorder links the scatter to ``idx`` only by
the ``"of": seq`` mark ``_replay.link_other_outputs`` puts on the tensor input (no data-flow link: the topk's record
holds the values). Without following the mark, an op paired with a golden upstream of the topk had nothing downstream
to test it, its pairing was dropped, and llada2's ``amin`` for ``amax`` (``ll_group_amin``, slow tier in
``test_bisect_fourth_gym.py``) was named at the ``gather`` of the picks.
"""

from __future__ import annotations

from types import SimpleNamespace

from runtime.bisect._records import Rec
from runtime.bisect._repair import _kids_with_side_reads


def _rec(seq: int, op: str, inputs: list[dict]) -> Rec:
    return Rec(seq=seq, node=seq, op=op, file="k.py", line=10 + seq, iteration={}, inputs=inputs)


def test_a_read_of_a_topk_index_is_downstream_of_the_topk_and_a_plain_link_stays_one_kid() -> None:
    red = _rec(0, "amax", [])
    top = _rec(1, "topk", [{"kind": "record", "seq": 0}])
    full = _rec(2, "full", [])
    scat = _rec(3, "scatter_", [{"kind": "record", "seq": 2}, {"kind": "tensor", "name": "idx", "of": 1}])
    # a tensor read with no mark, and a mark to no record: no link
    other = _rec(4, "add", [{"kind": "tensor", "name": "acc"}, {"kind": "tensor", "name": "y", "of": 99}])
    recs = [red, top, full, scat, other]
    by_seq = {r.seq: r for r in recs}

    def parents(r: Rec) -> list[Rec]:
        return [by_seq[int(i["seq"])] for i in r.inputs or [] if i.get("kind") == "record"]

    def plain_kids(*, through_tensors: bool = False) -> dict[int, list[Rec]]:
        # (the analyzer's reader map, ``Analyzer.kids`` since s49: the side-read map extends a copy of it)
        out: dict[int, list[Rec]] = {}
        for r in recs:
            for p in parents(r):
                out.setdefault(p.seq, []).append(r)
        return out

    shared = plain_kids()
    an = SimpleNamespace(recs=recs, by_seq=by_seq, parents=parents, kids=lambda **_kw: shared)
    kids = _kids_with_side_reads(an)  # type: ignore[arg-type]
    assert [k.seq for k in kids[1]] == [3]  # the scatter reads the topk's indices
    assert [k.seq for k in kids[0]] == [1]
    assert [k.seq for k in kids[2]] == [3]  # (the scatter is its data-flow parent's kid once)
    assert 4 not in {k.seq for ks in kids.values() for k in ks}
    assert 99 not in kids
    assert 1 not in shared  # (the shared map is not changed: the side read is added to a copy)
