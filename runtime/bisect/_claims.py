"""What the evidence lets bisect claim: a culprit only when its inputs match and its output does not.

``Analyzer`` gives every recorded value a status (match / mismatch / nan / unknown / input / const). This
module turns those statuses into a claim:

* :func:`pair_orphans` - a golden intermediate that no kernel value matches, and exactly one kernel op whose
  operands all match and whose value fits the orphan's place in the golden data flow (after its operands'
  golden tensors, before its consumers'): the op is compared with that golden tensor (a ``mismatch`` now
  has a reference, stated in the evidence).
* :func:`strict_culprit` - the first departing value whose operands all match the golden (an input view
  counts only when it holds the slice its consumer's other operands imply), or the view that breaks that.
* :func:`wrong_input` - a kernel input that nothing reads, while another input of its shape is read twice at
  the same offsets in one iteration and only one of the two reads feeds the departure: that read is the one
  that should have taken the unread input (``v = view(exp_avg, ...)`` where ``exp_avg_sq`` was meant).
* :func:`line_claim` - the ops between the last matching values and the first departing one all sit on one
  source line: the line is the culprit although the op within it is not known.
* :func:`rank_suspects` - otherwise: the lines that could hold the bug, ranked by how directly they feed
  the first departing value, each with its reason. The report then says "not localized".
* :func:`call_sites` - ops recorded inside a plain helper function get the kernel line that called the helper
  in their iteration (two passes calling one helper are told apart).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from runtime import pyast
from runtime.bisect._analyzer import GOOD, Analyzer, close_all, region_slice
from runtime.bisect._parse import is_jit_def, parse_source
from runtime.bisect._records import Rec

__all__ = ["Suspect", "bare_alias", "call_sites", "corroborated", "departs_within_statement", "line_claim", "pair_orphans", "rank_suspects",
           "lineage", "sibling_view", "strict_culprit", "wrong_input", "wrong_shape"]

_TRANSPARENT = frozenset({"view", "cast", "move", "assemble", "transpose", "reshape", "clone", "read", "setitem"})


@dataclass
class Suspect:
    rec: Rec
    reason: str
    rank: int


def _children(an: Analyzer) -> dict[int, list[Rec]]:
    return an.kids()


def _anchor_order(an: Analyzer, r: Rec) -> int | None:
    """Golden data-flow position of the value ``r`` was compared with (matched, expected, or write target)."""
    if r.seq in an.matched:
        return an.g.order[an.matched[r.seq][0]]
    if r.seq in an.expected:
        return an.g.order[an.expected[r.seq][0]]
    if r.is_write and (g := an.target_golden(r)) is not None:
        return an.g.order[g]
    return None


def _tensor_good(an: Analyzer, name: str, before: int) -> bool:
    """A tensor read by name: a kernel input, a written tensor whose last write matches, or the second output
    of a multi-output op (``x_even, x_odd = deinterleave(x)``: never written, produced with the first)."""
    if an.param_map.get(name) in an.inputs:
        return True
    ws = an.resolve_tensor(name, before)
    if ws:
        return an.status.get(ws[-1].seq) in GOOD
    return name not in an.arg_shapes and name not in an.writes and (name in an.g.arrays)


def _operands_good(an: Analyzer, r: Rec) -> bool:
    ops = an.operand_recs(r)
    tensors = [ref for ref in r.inputs or [] if ref.get("kind") == "tensor"]
    if not ops and not tensors:
        return False
    if any(an.status.get(p.seq) not in GOOD for p in ops):
        return False
    return all(_tensor_good(an, str(ref.get("name")), r.seq) for ref in tensors)


def _statement_inputs_good(an: Analyzer, r: Rec) -> bool:
    """The values ``r``'s statement reads from other lines all match (ops inside the statement do not count)."""
    stack, seen, leaves = [r], {r.seq}, 0
    while stack:
        cur = stack.pop()
        if cur is not r and cur.line == r.line and an.status.get(cur.seq) == "unknown":
            pass
        elif cur is not r:
            leaves += 1
            if an.status.get(cur.seq) not in GOOD:
                return False
            continue
        for ref in cur.inputs or []:
            if ref.get("kind") == "tensor":
                if not _tensor_good(an, str(ref.get("name")), cur.seq):
                    return False
                leaves += 1
        for p in an.operand_recs(cur):
            if p.seq not in seen:
                seen.add(p.seq)
                stack.append(p)
    return leaves > 0


_SEVERAL_OUTPUTS = frozenset({"topk", "sort"})


def pair_orphans(an: Analyzer, evidence: list[str]) -> None:
    """Compare unmatched kernel ops with the one golden intermediate their data-flow position leaves them."""
    used = {g for g, _ in an.matched.values()} | set(an.param_map.values()) | set(an.write_map.values()) \
        | {g for g, _ in an.expected.values()}
    # a golden tensor some matching kernel value reproduces is no orphan, even where another golden was the
    # better name for that value (``rt`` equals both the input ``rstd`` and its reshape ``r``)
    used |= {g for r in an.recs if r.summ is not None and an.status.get(r.seq) in GOOD for g in r.summ.hits}
    orphans = [n for n, k in an.g.kinds.items() if k == "intermediate" and n not in used
               and not an.g.is_input_copy(n)]
    if not orphans:
        return
    kids = _children(an)
    nodes: dict[int, list[Rec]] = {}
    for r in an.recs:
        # candidates: values a statement binds to a name (not the inner ops of an expression), computed, or
        # a view of an intermediate named like the orphan (``up = view(gu, ...)``)
        if r.node is None or r.is_write or not r.name:
            continue
        if r.op in _TRANSPARENT and not (r.op == "view" and not r.source and r.name in orphans):
            continue
        if r.op in _SEVERAL_OUTPUTS:
            continue  # its record holds one of its outputs (a top-k's values), not necessarily the one named
        if r.has_value and all(p.has_value for p in an.operand_recs(r)):
            nodes.setdefault(r.node, []).append(r)
    cand: dict[str, list[int]] = {}
    for node, rs in nodes.items():
        if any(an.status.get(r.seq) not in ("unknown", "match") or
               (an.status.get(r.seq) == "match" and r.op != "view") for r in rs):
            continue
        regions = [an.offs.get(r.seq) for r in rs]
        if len(set(regions)) * 2 <= len(regions):
            continue  # executions mostly land on a shared golden slice: per-chunk partial values, not the tensor
        rs = [r for r in rs if _statement_inputs_good(an, r)]  # the executions whose inputs match
        nodes[node] = rs
        first = next((r for r in rs if r.bshape is not None and an.offs.get(r.seq) is not None), None)
        if first is None:
            continue
        floor = max(an._operand_order(r) for r in rs)
        ceiling = len(an.g.order)
        frontier, seen = [r for r in rs], set()
        running = False
        for _depth in range(6):  # consumers, through values without a golden counterpart
            nxt = []
            for r in frontier:
                for c in kids.get(r.seq, []):
                    if c.seq in seen:
                        continue
                    seen.add(c.seq)
                    if c.is_write and c.target and an.arg_shapes and c.target not in an.arg_shapes:
                        running = True  # feeds state kept in a local tensor: a partial value (online softmax)
                    o = _anchor_order(an, c)
                    if o is not None:
                        ceiling = min(ceiling, o)
                    elif an.status.get(c.seq) == "unknown":
                        nxt.append(c)
            frontier = nxt
        if running and not _proportional_orphan(an, rs, orphans):
            continue  # (unless its values are a constant multiple of an orphan: a wrong scale constant)
        bs = first.bshape
        assert bs is not None
        named = [g for g in orphans if any(r.name == g for r in rs)]
        if rs[0].op == "view" and not named:
            continue
        for g in named or orphans:
            o = an.g.order[g]
            if floor < o < ceiling and an.first_region(first, g) is not None:
                cand.setdefault(g, []).append(node)
    taken: set[int] = set()
    for g, ns in sorted(cand.items(), key=lambda kv: an.g.order[kv[0]]):
        ns = [n for n in ns if n not in taken]
        if not ns:
            continue
        same = [n for n in ns if any(r.name == g for r in nodes[n])]
        if len(ns) > 1 and len(same) == 1:
            ns = same  # of the ops that fit, the one the kernel names like the golden
        pick = ns[0] if len(ns) == 1 else _most_correlated(an, g, [nodes[n] for n in ns])
        if pick is None:
            continue
        node = pick if isinstance(pick, int) else pick[0].node
        taken.add(node)  # type: ignore[arg-type]
        rs = nodes[node]  # type: ignore[index]
        for r in rs:
            _compare_with(an, r, g, forget_match=False)
        an.paired[node] = g  # type: ignore[index]
        peers = _pair_aligned(an, rs, g)
        how = "the only one" if len(ns) == 1 else "of the ops that fit, the one whose values follow it most closely"
        evidence.append(f"golden {g!r} matches no kernel value; the op at line {rs[0].line} ({rs[0].op}) is {how} "
                        f"whose operands match and whose place in the data flow fits it, so it is compared "
                        f"with {g!r}")
        if peers:
            evidence.append(f"(its statement runs {len(peers) + 1} times in that loop iteration, as many as the "
                            f"golden statement of {g!r}: execution j is compared with the golden's j-th value)")


def _compare_with(an: Analyzer, r: Rec, g: str, *, forget_match: bool = True) -> None:
    """Set ``r``'s status by its comparison with golden ``g`` (the pairing's comparison). A value inside atol like
    the golden is neither a match nor a departure: left as it is. ``forget_match``: a departing value no longer
    keeps the golden it matched before (the first pairing keeps it, as it always did: a view that matched)."""
    if r.summ is None or r.bshape is None or an.offs.get(r.seq) is None or g in r.summ.vacuous:
        return
    reg = an.match_region(r, g)
    if reg is not None:
        an.status[r.seq] = "match"
        an.matched[r.seq] = (g, reg)
        if an.lid(r, g):
            an.lids[r.seq] = an.lid(r, g)
        return
    fr = an.first_region(r, g)
    if fr is not None:
        an.status[r.seq] = "nan" if r.summ.nan else ("misplaced" if r.op == "view" else "mismatch")
        if forget_match:
            an.matched.pop(r.seq, None)
        an.expected[r.seq] = (g, fr[1])
        if fr[0]:
            an.lids[r.seq] = fr[0]


def _pair_aligned(an: Analyzer, rs: list[Rec], g: str) -> list[int]:
    """A pairing of one execution of a statement a Python loop unrolls (Sinkhorn's 19 column sums: one node
    each) with the k-th value of a golden family of as many values (``Analyzer.aligned``): every other execution
    j of that statement is compared with the family's j-th value too, and the nodes are peers (the repair test
    sets them all). Returns the peer nodes (empty when the pairing is not of that kind)."""
    fam = an.family(g)
    if fam is None or not rs:
        return []
    first = rs[0]
    j, n = an.exec_index(first)
    if n != fam[2] or j != fam[1] or first.node is None:
        return []
    members = an.family_members(fam[0], fam[2])
    peers = []
    by_node: dict[int, list[Rec]] = {}
    for y in an.recs:
        if y.node is not None:
            by_node.setdefault(y.node, []).append(y)
    for x in an.same_statement_op(first):
        if x.node is None or x.node == first.node:
            continue
        jx, _ = an.exec_index(x)
        gx = members.get(jx)
        if gx is None or an.paired.get(x.node) is not None:
            continue
        for y in by_node.get(x.node, [x]):  # (the node runs in every iteration of the kernel's traced loops)
            _compare_with(an, y, gx)
        an.paired[x.node] = gx
        peers.append(x.node)
    if peers:
        group = [first.node, *peers]
        for nd in group:
            an.peers[nd] = group
    return peers


def _fit_of(rs: list[Rec], g: str) -> tuple[float, float | None] | None:
    """(|correlation|, constant factor) of the first execution in ``rs`` measured against golden ``g``."""
    for x in rs:
        if x.summ is not None and g in x.summ.fit:
            return x.summ.fit[g]
    return None


def _proportional_orphan(an: Analyzer, rs: list[Rec], orphans: list[str]) -> bool:
    """The node's values are ``k`` times an orphan golden tensor at their region (``k`` != 1, one ``k`` for every
    element): a wrong scale constant. That holds for a value feeding running state too, so it may be paired."""
    for g in orphans:
        f = _fit_of(rs, g)
        if f is not None and f[1] is not None:
            return True
    return False


def _most_correlated(an: Analyzer, g: str, groups: list[list[Rec]]) -> list[Rec] | None:
    """The candidate whose values correlate clearly best with golden ``g`` (a wrong activation or constant keeps
    the values' order; an unrelated value does not), or None when no candidate stands out."""
    scores = []
    for rs in groups:
        f = _fit_of(rs, g)
        scores.append(f[0] if f is not None else 0.0)
    order = sorted(range(len(groups)), key=lambda i: -scores[i])
    best = order[0]
    second = scores[order[1]] if len(order) > 1 else 0.0
    if scores[best] >= 0.5 and scores[best] - second >= 0.2:
        return groups[best]
    return None


def _view_of(an: Analyzer, w: Rec) -> Rec | None:
    cur = w
    for _ in range(4):  # through casts and copies to the view itself
        if cur.op == "view":
            return cur
        ops = an.operand_recs(cur)
        if cur.op not in _TRANSPARENT or len(ops) != 1:
            return None
        cur = ops[0]
    return None


def _axis_values(an: Analyzer, r: Rec, axis: int) -> set[int]:
    """Tile offsets on ``axis`` that the op of ``r`` takes over all its iterations."""
    out = set()
    for x in an.recs:
        if x.node == r.node and x.node is not None:
            o = an.offs.get(x.seq)
            if o is not None and len(o) > axis:
                out.add(o[axis])
    return out


def _misplaced_view(an: Analyzer, r: Rec) -> tuple[Rec, int] | None:
    """An input view feeding ``r`` from a tile offset its sibling operands disagree with.

    With two operands that disagree, the one whose offset on that axis never moves while the other's follows
    the loop is the odd one (``weight[:, 0:64]`` read for every column chunk ``k``)."""
    for axis in an.conflicts.get(r.seq, []):
        if any(a == axis for a, _ in an.minority.get(r.seq, [])):
            continue
        ops = an.operand_recs(r)
        varying = [p for p in ops if len(_axis_values(an, p, axis)) > 1]
        fixed = [p for p in ops if len(_axis_values(an, p, axis)) == 1]
        if varying and len(fixed) == 1:
            v = _view_of(an, fixed[0])
            if v is not None and v.source:
                an.minority.setdefault(r.seq, []).append((axis, fixed[0]))
    for axis, w in an.minority.get(r.seq, []):
        cur = w
        for _ in range(4):  # through casts and copies to the view itself
            if cur.op == "view":
                return cur, axis
            ops = an.operand_recs(cur)
            if cur.op not in _TRANSPARENT or len(ops) != 1:
                break
            cur = ops[0]
    return None


_COPIES = frozenset({"move", "assemble", "reshape", "transpose", "clone", "copy"})
"""ops that carry all their operand's values on unchanged (a cast rounds them; a view selects some of them - a view at
the wrong offset of a matching tensor is a culprit)"""


def copies_another_golden(an: Analyzer, r: Rec) -> str | None:
    """``r`` only moves its one operand's values, that operand matched golden ``A``, and ``r`` is compared with
    another golden ``B``: the name ``A``, else None. A copy cannot turn ``B`` into ``A``: the operand's match is a
    coincidence of a wrong quantity with another golden (a Sinkhorn loop whose wrong axis converges to the
    first row normalization), and the bug is upstream, not at the copy. (A copy to the wrong place is told by
    the geometry rules, which run first.)"""
    if r.op not in _COPIES:
        return None
    ops = an.operand_recs(r)
    if len(ops) != 1 or ops[0].seq not in an.matched or an.status.get(ops[0].seq) not in GOOD:
        return None
    mine = an.expected[r.seq][0] if r.seq in an.expected else (an.target_golden(r) if r.is_write else None)
    theirs = an.matched[ops[0].seq][0]
    if mine is None or mine == theirs:
        return None
    if an.g.kinds.get(theirs) == "output" and an.g.kinds.get(mine) == "output" \
            and theirs in an.write_map.values():
        return None  # another output's value, which the kernel delivers there too, copied into this output: the
        # copy's operand is the wrong one (``assemble(h_t, ..., c_new)``), not a coincidence
    if corroborated(an, ops[0], {r.seq}):
        return None
    return theirs


def corroborated(an: Analyzer, value: Rec, exclude: set[int]) -> bool:
    """``value`` flows, through at least one computing op and not through the ops ``exclude``, into a value that matches its
    golden (the ops between may have no golden of their own: ``unknown``).

    Then ``value``'s match is no coincidence: a computation downstream needed it to be that golden. Gym AdamW
    writes ``m_hat`` where ``m_new`` belongs (``assemble(m_hat, ..., m_out)``): ``m_hat`` feeds
    ``m_hat / denom * lr``, then ``p_new``, which matches, so the copy chose the wrong operand - it is the culprit.
    A Sinkhorn loop whose wrong axis converges to another golden ends in a value nothing but the copy reads: still
    a coincidence."""
    readers: dict[int, list[Rec]] = {}
    for other in an.by_seq.values():
        if other.seq not in exclude:
            for p in an.operand_recs(other):
                readers.setdefault(p.seq, []).append(other)
    frontier = [(value, False)]
    seen = {value.seq}
    for _ in range(12):
        nxt = []
        for cur, computed in frontier:
            for rd in readers.get(cur.seq, []):
                if rd.seq in seen:
                    continue
                seen.add(rd.seq)
                through = computed or (rd.op not in _COPIES and rd.op != "view")
                st = an.status.get(rd.seq)
                if st == "match" and through and rd.seq in an.matched:
                    return True
                if st in ("match", "unknown", None):
                    nxt.append((rd, through))
        frontier = nxt
        if not frontier:
            break
    return False


def missing_factor(an: Analyzer, before: str, after: str) -> float | None:
    """The constant ``k`` with golden ``after`` = ``k`` x golden ``before`` everywhere (within the golden's
    tolerance), when ``before`` comes first in the golden's data flow and ``k`` is no 1; else None.

    Why (s42): a copy that writes the golden's previous step is no coincidence when that step and the written
    golden differ by one constant factor: the kernel dropped the factor (``cast(dk_acc)`` where
    ``cast(mul(dk_acc, scale))`` was meant, flash_attention_score_grad's dK; a mean's ``1/N``)."""
    a, b = an.g.arrays.get(before), an.g.arrays.get(after)
    if a is None or b is None or a.size != b.size or a.size == 0 or an.g.order[before] >= an.g.order[after]:
        return None
    try:  # (bfloat16 / float8 goldens are ml_dtypes: kind "V", but they convert)
        af = np.asarray(a, dtype=np.float64).ravel()
        bf = np.asarray(b, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return None
    big = np.isfinite(af) & np.isfinite(bf) & (np.abs(af) > 10 * an.g.atol)
    if int(big.sum()) < 8:
        return None
    k = float(np.median(bf[big] / af[big]))
    if not np.isfinite(k) or k == 0.0 or abs(k - 1.0) <= 0.05:
        return None
    if not close_all(bf, k * af, an.g.atol, an.g.rtol):
        return None
    return k


def strict_culprit(an: Analyzer, bad: list[Rec], evidence: list[str]) -> Rec | None:
    """The first departing value whose inputs all match (or the misplaced view that feeds it)."""
    for r in bad:
        other = copies_another_golden(an, r)
        mine = an.expected[r.seq][0] if r.seq in an.expected else (an.target_golden(r) if r.is_write else None)
        k = missing_factor(an, other, mine) if other is not None and mine is not None else None
        if k is not None:
            src = an.operand_recs(r)[0]
            evidence.append(f"{r.where()} departs while its operand ({src.where()}) matches golden {other!r}, the "
                            f"golden's step before {mine!r}, which is {k:.6g} x {other!r}: the factor is missing "
                            f"where the written value is computed (line {src.line})")
            return Rec(seq=-1, node=None, op="missing_factor", file=src.file, line=src.line,
                       iteration=dict(src.iteration))
        if other is not None:
            evidence.append(f"{r.where()} departs while its operand matches golden {other!r}: a copy does not "
                            "change values, so that match is a coincidence of a wrong quantity and the copy is "
                            "not the cause")
            continue
        mis = _misplaced_view(an, r)
        if mis is not None:
            v, axis = mis
            evidence.append(f"{r.where()} departs from the golden; its operands come from tiles at different offsets "
                            f"on axis {axis}, and the view at {v.where()} (offsets {v.offsets}) is the one that "
                            "disagrees with the others")
            an.status[v.seq] = "misplaced"
            return v
        if _operands_good(an, r):
            ref = an.expected.get(r.seq) or (an.param_map.get(r.target or ""), None)
            what = f" (compared with golden {ref[0]!r})" if ref[0] else ""
            evidence.append(f"{r.where()} departs from the golden{what} while every operand it reads matches")
            return r
    return None


def line_claim(an: Analyzer, observed: Rec, window: list[Rec], evidence: list[str]) -> Rec | None:
    """All ops between the last matching values and the first departing one are on one line: name the line."""
    if observed.is_write and an.irregular_axes(observed) == []:
        # a write at regular offsets moves its source unchanged: the departure is its source's
        src = [p for p in an.operand_recs(observed) if p.seq in {w.seq for w in window}]
        if len(src) == 1:
            observed = src[0]
            window = [w for w in an.window(observed) if w.seq != observed.seq]
    for r in sorted([observed, *window], key=lambda x: x.seq):
        mis = _misplaced_view(an, r)
        if mis is not None:
            v, axis = mis
            evidence.append(f"the value first departs at {observed.where()}; {r.where()} combines tiles from "
                            f"different offsets on axis {axis}, and the view at {v.where()} (offsets {v.offsets}) "
                            "stays put while the other operand follows the loop")
            an.status[v.seq] = "misplaced"
            return v
    lines = {(r.file, r.line) for r in window} | {(observed.file, observed.line)}
    if len(lines) != 1 or observed.line is None or copies_another_golden(an, observed) is not None:
        return None
    ancestors_good = all(_operands_good(an, r) or any(p.seq in {w.seq for w in window} for p in an.operand_recs(r))
                         for r in window)
    if not ancestors_good:
        return None
    evidence.append(f"the value first departs at {observed.where()}; every op between the last matching values and "
                    f"it is on line {observed.line}, whose inputs match: the bug is on that line")
    return observed


def rank_suspects(an: Analyzer, observed: Rec, window: list[Rec]) -> list[Suspect]:
    """Lines that may hold the bug, nearest to the first departing value in the data flow first."""
    dist: dict[int, int] = {observed.seq: 0}
    frontier = [observed]
    in_window = {r.seq for r in window}
    depth = 0
    while frontier and depth < 50:
        depth += 1
        nxt = []
        for r in frontier:
            for p in an.parents(r):
                if p.seq in dist or (p.seq not in in_window and an.status.get(p.seq) in GOOD):
                    continue
                dist[p.seq] = depth
                nxt.append(p)
        frontier = nxt
    best: dict[tuple, tuple[int, Rec]] = {}
    for seq, d in dist.items():
        r = an.by_seq[seq]
        key = (r.file, r.line)
        if r.line is None:
            continue
        if key not in best or d < best[key][0]:
            best[key] = (d, r)
    out: list[Suspect] = []
    for d, r in sorted(best.values(), key=lambda t: (t[0], t[1].seq)):
        if d == 0:
            why = "the first value that departs from the golden is computed here"
        elif d == 1:
            why = "feeds the first departing value directly; its own value has no golden counterpart to check"
        else:
            why = f"{d} ops upstream of the first departing value, through values without a golden counterpart"
        out.append(Suspect(r, why, len(out) + 1))
    return out[:12]


def call_sites(source: str | None, stage_name: str, recs: list[Rec]) -> dict[int, int]:
    """seq -> kernel line that called the plain helper function in which the op was recorded.

    The helper is told apart per call by the loops around each call: the call whose enclosing
    ``pypto.loop(..., name=...)`` names are all among the record's iteration keys (the innermost such call).
    """
    if not source:
        return {}
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return {}
    # (`is_jit_def` takes a decorator with options, ``@pypto.frontend.jit(runtime_options=...)``, as a jit kernel too:
    # read as a helper, the kernel's calls of the real helpers were never visited and no helper op got its call site)
    helpers: dict[str, tuple[int, int]] = {}
    for node in tree.body:
        # a factory that defines the jit kernel inside it (sum_lstm's `def sum_lstm(run_mode)`) is not a helper: its
        # kernel's calls are visited (s36 sixth corpus: no helper op of sum_lstm ever got its call site)
        if isinstance(node, ast.FunctionDef) and not is_jit_def(node) and not any(
                isinstance(n, ast.FunctionDef) and is_jit_def(n) for n in ast.walk(node) if n is not node):
            helpers[node.name] = (node.lineno, node.end_lineno or node.lineno)
    if not helpers:
        return {}
    calls: list[tuple[str, int, list[str]]] = []
    top: dict[int, str] = {}  # call line -> the top-level function it is in

    def visit(node: ast.AST, loops: list[str], owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = loops
            if isinstance(child, ast.For) and isinstance(child.iter, ast.Call):
                name = next((kw.value.value for kw in child.iter.keywords
                             if kw.arg == "name" and isinstance(kw.value, ast.Constant)), None)
                if name is not None:
                    inner = [*loops, str(name)]
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in helpers:
                calls.append((child.func.id, child.lineno, list(loops)))
                top[child.lineno] = owner
            visit(child, inner, owner)

    spans: list[tuple[str, int, int]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            # (helpers too, s41: a helper called from another helper - sum_lstm's ``gelu_activation_core`` from
            # ``sum_lstm_compute`` - gets the line of that call, the innermost one, not the outer helper's)
            visit(node, [], node.name)
            spans.append((node.name, node.lineno, node.end_lineno or node.lineno))
    base = stage_name.rsplit("/", 1)[-1]
    # the kernels that ran: the top-level functions holding a recorded op outside every helper (s42: a file with two
    # jit kernels calling one helper in the same loops - flash_attention_score_grad's profile copy - gave the ops of
    # the kernel that ran the call site in the one that did not)
    own = {r.line for r in recs if r.line is not None and (not r.file or r.file.rsplit("/", 1)[-1] == base)}
    ran = {name for ln in own if not any(lo <= ln <= hi for lo, hi in helpers.values())
           for name, lo, hi in spans if lo <= ln <= hi}
    out: dict[int, int] = {}
    execs: dict[tuple, int] = {}

    def within(loops: list[str], it: dict) -> bool:
        # a ``loop_unroll`` named L records its iterations as ``L_LoopUnroll<k>``
        return all(any(k == lp or k.startswith(f"{lp}_") for k in it) for lp in loops)

    for r in recs:
        if r.line is None or (r.file and r.file.rsplit("/", 1)[-1] != base):
            continue
        key = (r.line, r.op, tuple(sorted(r.iteration.items())))
        nth = execs.get(key, 0)
        execs[key] = nth + 1
        inner = [(h, lo, hi) for h, (lo, hi) in helpers.items() if lo <= r.line <= hi]
        for h, _lo, _hi in sorted(inner, key=lambda t: t[2] - t[1])[:1]:
            sites = [(ln, loops) for name, ln, loops in calls if name == h and within(loops, r.iteration)]
            if ran and any(top.get(ln) in ran for ln, _lp in sites):
                sites = [(ln, lp) for ln, lp in sites if top.get(ln) in ran or top.get(ln) in helpers]
            if not sites:
                continue
            deepest = max(len(lp) for _ln, lp in sites)
            same = sorted(ln for ln, lp in sites if len(lp) == deepest)
            # several calls in the same loops (two GELUs in one trip): the n-th execution of the op in that iteration
            # is the n-th call in source order
            out[r.seq] = same[nth] if len(same) > 1 and nth < len(same) else same[-1]
    return out


def wrong_shape(an: Analyzer, evidence: list[str]) -> None:
    """A value named like a golden intermediate whose tile cannot be a slice of it (``ss`` of shape
    ``[1, D]`` where the golden ``ss`` is ``[B, 1]``: a reduction over the wrong axis), computed from inputs
    that match: it departs, whatever its values."""
    for r in an.recs:
        if not r.name or r.name not in an.g.arrays or an.g.kinds.get(r.name) != "intermediate" or r.is_write:
            continue
        if an.status.get(r.seq) != "unknown" or not r.has_value or an.offs.get(r.seq) is None:
            continue
        bs = r.bshape
        garr = an.g.shaped(r.name, len(bs)) if bs is not None else None
        if bs is None or garr is None or an.first_region(r, r.name) is not None:
            continue
        tile_ok = all(b <= g for b, g in zip(bs, garr.shape, strict=True))
        if tile_ok or not _statement_inputs_good(an, r):
            continue
        an.status[r.seq] = "mismatch"
        an.expected[r.seq] = (r.name, tuple(an.offs[r.seq] or ()))
        evidence.append(f"{r.where()} makes {r.name!r} with tile shape {list(bs)}, which cannot be a slice "
                        f"of the golden {r.name!r} of shape {list(an.g.arrays[r.name].shape)} (wrong axis?)")
        return


def departs_within_statement(an: Analyzer, evidence: list[str]) -> None:
    """``sq = xf * xf * 0.5``: an op inside the statement equals golden ``sq``, the value bound to ``sq`` does not.
    The statement departs from the golden of its own name (value evidence: the inner value matched)."""
    for r in an.recs:
        if not r.name or r.name not in an.g.arrays or an.status.get(r.seq) != "unknown" or not r.has_value:
            continue
        inner = [p for p in _statement_ops(an, r) if an.matched.get(p.seq, ("",))[0] == r.name]
        if not inner:
            continue
        fr = an.first_region(r, r.name)
        if fr is None:
            continue
        an.status[r.seq] = "mismatch"
        an.expected[r.seq] = (r.name, fr[1])
        if fr[0]:
            an.lids[r.seq] = fr[0]
        evidence.append(f"on line {r.line} an inner value equals golden {r.name!r} but the value bound to "
                        f"{r.name!r} ({r.where()}) does not")
        return


def _statement_ops(an: Analyzer, r: Rec) -> list[Rec]:
    out, stack, seen = [], [r], {r.seq}
    while stack:
        cur = stack.pop()
        for p in an.operand_recs(cur):
            if p.seq not in seen and p.line == r.line and p.iteration == r.iteration:
                seen.add(p.seq)
                out.append(p)
                stack.append(p)
    return out


def sibling_view(an: Analyzer, observed: Rec, window: list[Rec], evidence: list[str]) -> Rec | None:
    """Last resort before "not localized": two views of same-shaped inputs read in one iteration (``k`` and ``v``
    blocks) that disagree on an axis exactly where the departure shows: the one whose offset on that axis never
    moves while its sibling's follows the loop is the misplaced one (``k`` read at head 0 for every head)."""
    feeding: dict[int, Rec] = {}
    for r in [observed, *window]:
        for p in an.operand_recs(r):
            v = _view_of(an, p)
            if v is not None and v.source and an.param_map.get(v.source) in an.inputs:
                feeding[v.seq] = v
    views = [x for x in an.recs if x.op == "view" and x.source and an.param_map.get(x.source) in an.inputs]
    odd: dict[int, tuple[Rec, Rec, int]] = {}
    for v in feeding.values():
        vs = an.g.arrays[an.param_map[v.source]].shape  # type: ignore[index]
        for w in views:
            if w.node == v.node or w.iteration != v.iteration or w.source == v.source or w.shape != v.shape:
                continue
            if an.g.arrays[an.param_map[w.source]].shape != vs or not v.offsets or not w.offsets:  # type: ignore[index]
                continue
            for a, (ov, ow) in enumerate(zip(v.offsets, w.offsets, strict=False)):
                if ov != ow and len(_axis_values(an, v, a)) == 1 and len(_axis_values(an, w, a)) > 1:
                    odd.setdefault(v.node, (v, w, a))  # type: ignore[arg-type]
    if len(odd) != 1:
        return None
    v, w, a = next(iter(odd.values()))
    evidence.append(f"{v.where()} reads {v.source!r} at offsets {v.offsets} while {w.where()} reads {w.source!r} "
                    f"(same shape) at {w.offsets}: on axis {a} the first never moves, the second follows the loop, "
                    "and the values depart where they disagree")
    an.status[v.seq] = "misplaced"
    return v


def lineage(an: Analyzer, r: Rec, limit: int = 400) -> set[int]:
    """Seqs of every value ``r`` is computed from (its data-flow ancestors, ``r`` included)."""
    seen, stack = {r.seq}, [r]
    while stack and len(seen) < limit:
        for p in an.operand_recs(stack.pop()):
            if p.seq not in seen:
                seen.add(p.seq)
                stack.append(p)
    return seen


def _feeds_match(an: Analyzer, kids: dict[int, list[Rec]], r: Rec, limit: int = 200) -> bool:
    """Some value computed from ``r`` (downstream in the data flow) matches the golden."""
    seen, stack = {r.seq}, [r]
    while stack and len(seen) < limit:
        for c in kids.get(stack.pop().seq, []):
            if c.seq in seen:
                continue
            if an.status.get(c.seq) == "match":
                return True
            seen.add(c.seq)
            stack.append(c)
    return False


def wrong_input(an: Analyzer, bad: list[Rec], evidence: list[str]) -> Rec | None:
    """A view that reads input ``P`` where the kernel's unread input ``Q`` was meant.

    Why this is evidence and not a guess: every tensor argument the golden takes is read by a correct kernel,
    so an input the kernel never touches is itself a fault; and an input read twice at the same offsets in one
    iteration is redundant. When exactly one of the two duplicate reads feeds the first departing value (the
    other's consumers match the golden) and that read's tile differs from the unread input's golden slice at
    the same offsets, it is the read that took the wrong tensor. Nothing fires on kernels that read every input.
    """
    if not bad or not an.arg_shapes:
        return None
    read = {r.source for r in an.recs if r.source}
    for r in an.recs:
        read.update(str(ref.get("name")) for ref in r.inputs or [] if ref.get("kind") == "tensor")
    unread = [n for n in sorted(an.arg_shapes) if n not in read and n not in an.writes
              and an.param_map.get(n, n) in an.inputs and an.param_map.get(n, n) in an.g.arrays]
    if len(unread) != 1:
        return None
    q = unread[0]
    qname = an.param_map.get(q, q)
    qg = an.g.arrays[qname]
    views: dict[tuple, list[Rec]] = {}
    for x in an.recs:
        if x.op == "view" and x.source and x.source != q and x.offsets is not None \
                and an.arg_shapes.get(x.source) == an.arg_shapes[q]:
            views.setdefault((x.source, tuple(sorted(x.iteration.items())), tuple(x.offsets), tuple(x.shape or ())),
                             []).append(x)
    dup = {k: v for k, v in views.items() if len({x.node for x in v}) == 2}
    if not dup:
        return None
    observed = bad[0]
    feeding = lineage(an, observed)
    kids: dict[int, list[Rec]] | None = None
    for (src, _it, offs, _shape), pair in sorted(dup.items(), key=lambda kv: min(x.seq for x in kv[1])):
        hit = [x for x in pair if x.seq in feeding]
        if len(hit) != 1:
            continue
        w = hit[0]
        other = next(x for x in pair if x is not w)
        if kids is None:
            kids = _children(an)
        if not _feeds_match(an, kids, other):
            continue  # the sibling read feeds nothing that is shown right either
        bs = w.bshape
        sl = region_slice(qg, offs, bs) if bs is not None else None
        if sl is None or w.summ is None or qname in w.summ.exact:
            continue
        evidence.append(f"input {q!r} is never read by the kernel, while {src!r} is read twice at offsets "
                        f"{list(offs)} in one iteration ({other.where()} and {w.where()}); the read at line "
                        f"{w.line} feeds the first departing value ({observed.where()}) and holds {src!r}, not "
                        f"{q!r}: it reads the wrong tensor")
        an.status[w.seq] = "misplaced"
        an.expected[w.seq] = (an.param_map.get(q, q), offs)
        return w
    return None


def _bare_aliases(source: str, line: int) -> list[tuple[int, str, str]]:
    """``(line, target, value)`` of every ``target = value`` between two plain names in the function holding
    ``line`` (the innermost ``def`` around it), in source order."""
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return []
    fns = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
           and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not fns:
        return []
    fn = max(fns, key=lambda n: n.lineno)
    out = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Name):
            out.append((n.lineno, n.targets[0].id, n.value.id))
    return sorted(out)


def bare_alias(an: Analyzer, culprit: Rec, evidence: list[str]) -> tuple[int, str] | None:
    """The line of a bare alias ``name = other`` that binds, unchanged, a value the golden names ``name`` with
    another value, when the named op ``culprit`` is where that shows; or None.

    Why (session 43): no op runs on ``mean_sq = s`` (``s / num_features`` meant) or ``q_s = q_n`` (``q_n * scale``
    meant), so the first departing op was named - the ``sum`` making ``s``, compared with golden ``mean_sq`` by its
    place in the data flow, or the ``matmul`` reading ``q_s``. Two shapes, both by name against the golden's own:

    - the culprit's statement binds ``t`` and a later ``G = t`` binds it to the name of the golden ``G`` the culprit
      was compared with (and departs from): the value named ``G`` skipped the step between them;
    - the culprit reads ``a``, bound by ``a = b``, its operand's value matches a golden other than ``a`` while the
      golden holds an ``a`` of the same shape that differs: the alias passed ``b`` on where ``a`` was meant."""
    src = an.source
    if not src or culprit.seq < 0 or culprit.line is None or culprit.is_write:
        return None
    aliases = _bare_aliases(src, culprit.line)
    if not aliases:
        return None
    exp = an.expected.get(culprit.seq)
    tgt = culprit.name
    if exp is not None and tgt:
        for ln, a, b in aliases:
            if ln > culprit.line and b == tgt and a == exp[0]:
                evidence.append(f"{culprit.where()} makes {tgt!r}, which departs from golden {a!r}; line {ln} binds "
                                f"it unchanged to {a!r} ({a} = {b}): no op runs on that line, the step from {b!r} to "
                                f"{a!r} is missing there")
                return ln, a
    lines = src.splitlines()
    text = lines[culprit.line - 1] if 0 < culprit.line <= len(lines) else ""
    try:
        read = {n.id for n in ast.walk(pyast.parse(text.strip().split("=", 1)[-1].strip() or "0"))
                if isinstance(n, ast.Name)}
    except SyntaxError:
        return None
    for ln, a, b in reversed(aliases):
        if ln >= culprit.line or a not in read or a not in an.g.arrays or an.g.kinds.get(a) == "input":
            continue
        if any(ln2 > ln and ln2 < culprit.line and a2 == a for ln2, a2, _b in aliases):
            continue
        for p in an.operand_recs(culprit):
            m = an.matched.get(p.seq)
            # (the record may carry either name: bisect names a value after its last binding)
            if p.name not in (a, b) or m is None or an.status.get(p.seq) != "match" or m[0] == a:
                continue
            if an.g.arrays[a].shape != an.g.arrays[m[0]].shape \
                    or np.allclose(an.g.arrays[a], an.g.arrays[m[0]], atol=an.g.atol, rtol=an.g.rtol):
                continue
            evidence.append(f"{culprit.where()} reads {a!r}, bound on line {ln} unchanged to {b!r} ({a} = {b}); "
                            f"that value matches golden {m[0]!r}, not golden {a!r}: no op runs on line {ln}, the "
                            f"step from {b!r} to {a!r} is missing there")
            return ln, a
    return None
