"""Culprit rules of the automatic method, in order of evidence strength (see ``_auto``).

Each rule looks at the first departing value, its window of unanchored ancestors and the kernel source
(parsed, never run), and either names a culprit op (appending its reason to ``evidence``) or returns None.
"""

from __future__ import annotations

import ast
import re

import numpy as np

from runtime.bisect._analyzer import GOOD, Analyzer
from runtime.bisect._compare import mismatch_mask
from runtime.bisect._parse import parse_source
from runtime.bisect._records import Rec

__all__ = ["contraction_offsets", "overwritten_state", "coverage_gap", "geometry", "missing_cast", "rebound_after_loop",
           "shape_error_source", "stale_state", "wrong_axis"]


def _driving_loop(source: str | None, write: Rec, axis: int) -> Rec | None:
    """The ``for ... in pypto.loop(...)`` enclosing ``write`` whose index appears in its offsets on ``axis``."""
    if not source or write.line is None:
        return None
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    offs_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node, "lineno", None) == write.line:
            for arg in node.args:
                if isinstance(arg, ast.List | ast.Tuple) and len(arg.elts) > axis:
                    offs_names |= {n.id for n in ast.walk(arg.elts[axis]) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Assign) and node.lineno == write.line:
            for t in node.targets:
                if isinstance(t, ast.Subscript):
                    elts = t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]
                    if len(elts) > axis:
                        offs_names |= {n.id for n in ast.walk(elts[axis]) if isinstance(n, ast.Name)}
    best: ast.For | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and node.lineno <= write.line <= (node.end_lineno or node.lineno) \
                and isinstance(node.target, ast.Name) and node.target.id in offs_names \
                and (best is None or node.lineno > best.lineno):
            best = node
    if best is None:
        return None
    return Rec(seq=-1, node=None, op="loop", file=write.file, line=best.lineno, iteration={})


def coverage_gap(an: Analyzer, outputs: dict[str, np.ndarray]) -> tuple[dict[str, int], Rec | None, list[str]]:
    """Output elements that no write covered but should hold golden data; blame the cut-off view."""
    counts: dict[str, int] = {}
    culprit: Rec | None = None
    notes: list[str] = []
    for _tgt, ws in sorted(an.writes.items()):
        gname = an.target_golden(ws[0])
        if gname is None or gname not in outputs:
            continue
        g = an.g.arrays[gname]
        rank = next((len(w.offsets) for w in ws if w.offsets is not None), g.ndim)
        if rank != g.ndim:  # the kernel writes the output in another rank (the wrapper reshapes it on the host)
            g_k = an.g.shaped(gname, rank)
            if g_k is None or g_k.size != g.size:
                continue
            g = g_k
        cover = np.zeros(g.shape, dtype=bool)
        for w in ws:
            if w.offsets is None or w.valid_shape is None or len(w.offsets) != g.ndim:
                continue
            cover[tuple(slice(max(0, o), max(0, o + n)) for o, n in zip(w.offsets, w.valid_shape, strict=True))] = True
        got = np.asarray(outputs[gname])
        if got.size != g.size:
            continue
        got = got.reshape(g.shape)
        gap = mismatch_mask(got, g, an.g.atol, an.g.rtol) & ~cover
        n_gap = int(gap.sum())
        if not n_gap:
            continue
        counts[gname] = n_gap
        first = tuple(int(i[0]) for i in np.nonzero(gap))
        notes.append(f"{n_gap} element(s) of output {gname!r} were never written (first at index {list(first)})")
        def tile(w: Rec) -> list[int] | None:
            src = an.operand_recs(w)
            if src and src[0].shape is not None:
                return list(src[0].shape)
            return w.shape

        for w in ws:
            t = tile(w)
            if w.offsets is None or t is None or len(t) != g.ndim:
                continue
            if all(o <= p < o + s for o, p, s in zip(w.offsets, first, t, strict=True)):
                views = [v for v in an.lineage_views(w) if v.valid_shape and v.shape
                         and any(vs < s for vs, s in zip(v.valid_shape, v.shape, strict=True))]
                culprit = views[0] if views else w
                if views:
                    an.status[views[0].seq] = "misplaced"
                notes.append(f"the tile written at {w.where()} has valid_shape {w.valid_shape} of tile "
                             f"{t}; it was cut at {culprit.where()}")
                if views and views[0].valid_shape is not None and views[0].shape is not None:
                    cut = [a for a, (vs, sz) in enumerate(zip(views[0].valid_shape, views[0].shape, strict=True))
                           if vs < sz]
                    bound = _bound_line(an.source, views[0].line, cut[0]) if len(cut) == 1 else None
                    if bound is not None:
                        line, name = bound
                        notes.append(f"its valid shape on axis {cut[0]} is {name!r}, computed at line {line}: the "
                                     "bound is wrong there (the view only passes it on)")
                        culprit = Rec(seq=-1, node=None, op="valid_shape", file=views[0].file, line=line,
                                      iteration=dict(views[0].iteration))
                break
        if culprit is None and ws:
            culprit = ws[-1]
            notes.append("no write's tile covers these elements (loop trip count or offsets too small?)")
            axis = next((a for a in range(g.ndim) if all(
                w.offsets is None or tile(w) is None or len(tile(w) or []) != g.ndim
                or first[a] >= w.offsets[a] + (tile(w) or [0] * g.ndim)[a] for w in ws)), None)
            loop = _driving_loop(an.source, culprit, axis) if axis is not None else None
            if loop is not None:
                notes.append(f"the writes at line {culprit.line} advance along axis {axis} with the loop at line "
                             f"{loop.line}, which stops before reaching index {first[axis]}")
                culprit = loop
        break
    return counts, culprit, notes


def geometry(an: Analyzer, observed: Rec, window: list[Rec], evidence: list[str]) -> Rec | None:
    """Tile offsets that disagree between reads and writes (or between operands)."""
    shifted = False
    if observed.is_write and observed.target:
        src = an.operand_recs(observed)
        lin = an.offs.get(src[0].seq) if src else None
        gname = an.target_golden(observed)
        if lin is not None and gname is not None and observed.summ is not None \
                and tuple(lin) != tuple(observed.offsets or ()):
            if gname in observed.summ.at_src:
                shifted = True
                evidence.append(f"the values written at offsets {observed.offsets} ({observed.where()}) equal the "
                                f"golden {gname!r} at offsets {list(lin)}: read and write tiles disagree")
    conflict = [r for r in window if r.seq in an.conflicts]
    notes = []
    if conflict:
        notes.append(f"operands of {conflict[0].where()} come from tiles at different offsets on axis "
                     f"{an.conflicts[conflict[0].seq]}")
    if not shifted and not conflict:
        # a view feeding the departure whose offsets over the iterations break its tile grid (a step that is
        # not a multiple of the tile, an overlap): the only geometric anomaly upstream
        odd = {}
        for v in an.lineage_views(observed):
            if v.source and an.irregular_axes(v):
                odd.setdefault(v.node, v)
        if len(odd) == 1:
            v = next(iter(odd.values()))
            evidence.append(f"the view at {v.where()} (offsets {v.offsets}) feeds the first departing value and its "
                            f"offsets over the iterations break the tiling grid on axis {an.irregular_axes(v)}")
            an.status[v.seq] = "misplaced"
            return v
        return None
    views = an.lineage_views(conflict[0] if conflict and not shifted else observed)
    if shifted and lin is not None:
        # the read that fetched the written values: a view of an input at exactly the offsets where those values
        # belong, which is not where they are written (a view of the same code in another pass reads elsewhere)
        at = [v for v in views if v.source and v.offsets is not None and tuple(v.offsets) == tuple(lin)
              and an.param_map.get(v.source) in an.inputs]
        dist = _hops(an, observed)
        at = [v for v in at if v.seq in dist]
        # a view broadcast on an axis where read and write disagree (``cos`` is ``[B, 1, S, D]`` beside ``x``'s
        # ``[B, N, S, D]``) sits at offset 0 there whatever the loop does: it cannot be the read that misplaced it
        apart = [a for a, (o, lo) in enumerate(zip(observed.offsets or (), lin, strict=False)) if o != lo]
        at = [v for v in at if not _broadcast_on(v, observed, apart)]
        near = min((dist[v.seq] for v in at), default=None)
        at = [v for v in at if dist[v.seq] == near]  # the read on the write's own path, not one via running state
        if len({v.node for v in at}) == 1:
            v = at[-1]
            stuck = _stuck_write_axes(an, observed, v, tuple(lin))
            if stuck:
                evidence.append(f"the write at {observed.where()} stays at offset {observed.offsets} on axis {stuck} "
                                f"in every iteration while the read at {v.where()} follows the loop: the write's "
                                "offsets are wrong")
                an.status[observed.seq] = "misplaced"
                return observed
            late = _late_start_axes(an, observed, v, tuple(lin))
            if late:
                evidence.append(f"the write at {observed.where()} starts its walk at offset "
                                f"{[observed.offsets[a] for a in late] if observed.offsets else '?'} on axis {late} "
                                f"while the read at {v.where()} starts where its loop starts: the write's offsets are "
                                "shifted")
                an.status[observed.seq] = "misplaced"
                return observed
            evidence.append(f"the view at {v.where()} reads at offsets {v.offsets}, where the values written at "
                            f"{observed.offsets} belong: its offsets do not follow the write's")
            an.status[v.seq] = "misplaced"
            return v
    for v in views:
        axes = an.irregular_axes(v)
        if axes:
            evidence.extend(notes)
            evidence.append(f"the view at {v.where()} (offsets {v.offsets}) breaks the tiling grid on axis {axes}")
            an.status[v.seq] = "misplaced"
            return v
    if observed.is_write and an.irregular_axes(observed):
        evidence.extend(notes)
        evidence.append(f"the write at {observed.where()} (offsets {observed.offsets}) breaks the tiling grid")
        return observed
    if conflict and not shifted:
        v = _stuck_operand_view(an, conflict[0])
        if v is not None:
            evidence.extend(notes)
            evidence.append(f"the view at {v.where()} (offsets {v.offsets}) that feeds {conflict[0].where()} reads "
                            f"the same offset on axis {an.conflicts[conflict[0].seq]} in every iteration while the "
                            "other operand's view follows the loop: it does not follow the loop")
            an.status[v.seq] = "misplaced"
            return v
    if not shifted:
        return None  # operands disagree but no view breaks the grid: left to the evidence rules (_claims)
    evidence.extend(notes)
    return observed


def _broadcast_on(v: Rec, w: Rec, axes: list[int]) -> bool:
    """``v`` has extent 1 on one of ``axes`` where the write ``w`` has more (a broadcast operand)."""
    vs, ws = v.shape or [], w.shape or []
    return len(vs) == len(ws) and any(vs[a] == 1 and ws[a] > 1 for a in axes)


def _walk(an: Analyzer, v: Rec, axis: int, ndim: int) -> tuple[set[int], int]:
    """The tile offsets on ``axis`` that view ``v``'s statement reads over all its executions (those whose offsets
    have at least ``ndim`` axes), and in how many distinct loop iterations they ran: one offset over several
    iterations is a view that does not follow its loop (``contraction_offsets``, ``_stuck_operand_view``)."""
    execs = [(x, o) for x in an.recs if x.node == v.node and x.node is not None
             and (o := an.offs.get(x.seq)) is not None and len(o) >= ndim]
    return {o[axis] for _, o in execs}, len({tuple(sorted(x.iteration.items())) for x, _ in execs})


def _stuck_operand_view(an: Analyzer, r: Rec) -> Rec | None:
    """For an op whose operands come from tiles at different offsets (``an.conflicts``): the one operand whose
    source view (through copies, casts and lane selections) reads the same offset on a conflicting axis in every
    execution of its statement, over several iterations, although its tensor has room to move there and another
    operand's view does move - ``view(cos, ..., [b, 0, 0, 0])`` beside ``view(x, ..., [b, n, s, 0])``. A tile
    legitimately reused for every iteration (a weight as big as its tile) has no room to move and is never
    named; two stuck operands, or none moving, name nothing."""
    stuck: list[Rec] = []
    moving = False
    for a in an.conflicts.get(r.seq, []):
        for op in an.operand_recs(r):
            v = _source_view(an, op)
            if v is None or v.shape is None or len(v.shape) <= a or v.shape[a] <= 1:
                continue
            offs, its = _walk(an, v, a, a + 1)
            if len(offs) > 1:
                moving = True
                continue
            full = an.arg_shapes.get(v.source or "")
            room = full is not None and len(full) > a and int(full[a]) > int(v.shape[a])
            if room and its >= 2:
                stuck.append(v)
    nodes = {v.node for v in stuck}
    return stuck[0] if moving and len(nodes) == 1 else None


def _bound_line(source: str | None, view_line: int | None, axis: int) -> tuple[int, str] | None:
    """The line that computes the bare name a view passes as its ``valid_shape`` on ``axis`` (the last assignment
    of that name before the view, in the same function), with the name; None when the bound is an expression on
    the view's own line or cannot be found."""
    if not source or view_line is None:
        return None
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    name = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == view_line and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "view":
            for kw in node.keywords:
                if kw.arg == "valid_shape" and isinstance(kw.value, ast.List | ast.Tuple) \
                        and len(kw.value.elts) > axis and isinstance(kw.value.elts[axis], ast.Name):
                    name = kw.value.elts[axis].id
    if name is None:
        return None
    best = None
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or not fn.lineno <= view_line <= (fn.end_lineno or fn.lineno):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and node.lineno < view_line and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets):
                if best is None or node.lineno > best:
                    best = node.lineno
    return (best, name) if best is not None else None


def _stuck_write_axes(an: Analyzer, w: Rec, v: Rec, lin: tuple[int, ...]) -> list[int]:
    """Axes on which the write ``w`` and the read ``v`` disagree (``lin``: where the written values belong), the
    write's offset never moves over all executions of its statement, and the read's does (``out[i:, 0:]`` for
    every column tile ``d``): the write is the one that does not follow the loop."""
    offs = tuple(w.offsets or ())
    if len(offs) != len(lin):
        return []
    ws = [x for x in an.recs if x.is_write and x.line == w.line and x.target == w.target and x.offsets is not None]
    vs = [x for x in an.recs if x.op == "view" and x.line == v.line and x.source == v.source and x.offsets is not None]
    out = []
    for a, (o, lo) in enumerate(zip(offs, lin, strict=True)):
        if o == lo:
            continue
        if len({x.offsets[a] for x in ws if len(x.offsets) > a}) == 1 and \
                len({x.offsets[a] for x in vs if len(x.offsets) > a}) > 1:  # type: ignore[index]
            out.append(a)
        else:
            return []
    return out


def _late_start_axes(an: Analyzer, w: Rec, v: Rec, lin: tuple[int, ...]) -> list[int]:
    """Axes on which the write ``w`` and the read ``v`` disagree and the write's walk is the shifted one: over all
    executions of the read's view (same op node) its first offset on the axis is the smallest it ever reads - it
    starts where the loop starts - while the write's first offset on the axis is not the smallest it ever writes
    (``(k * CC + CC) % L``: it starts one tile in and wraps). Both walk the loop, so the stuck-write test cannot
    tell them apart; without this the read was named (a wrong claim on a right view). A read that starts late
    (the helper's offset is the bug) keeps the read named."""
    offs = tuple(w.offsets or ())
    if len(offs) != len(lin):
        return []
    ws = sorted((x for x in an.recs if x.is_write and x.line == w.line and x.target == w.target
                 and x.offsets is not None and len(x.offsets) == len(offs)), key=lambda x: x.seq)
    vs = sorted((x for x in an.recs if x.op == "view" and x.node == v.node and x.offsets is not None
                 and len(x.offsets) == len(offs)), key=lambda x: x.seq)
    if len(ws) < 2 or len(vs) < 2:
        return []
    out = []
    for a, (o, lo) in enumerate(zip(offs, lin, strict=True)):
        if o == lo:
            continue
        w_first, w_min = ws[0].offsets[a], min(x.offsets[a] for x in ws)  # type: ignore[index]
        v_first, v_min = vs[0].offsets[a], min(x.offsets[a] for x in vs)  # type: ignore[index]
        if w_first != w_min and v_first == v_min:
            out.append(a)
        else:
            return []
    return out


def _hops(an: Analyzer, r: Rec) -> dict[int, int]:
    """Operand distance of every op ``r`` is computed from (breadth first over operands)."""
    dist = {r.seq: 0}
    frontier = [r]
    while frontier and len(dist) < 20000:
        nxt = []
        for cur in frontier:
            for p in an.operand_recs(cur):
                if p.seq not in dist:
                    dist[p.seq] = dist[cur.seq] + 1
                    nxt.append(p)
        frontier = nxt
    return dist


def rebound_after_loop(an: Analyzer, window: list[Rec], evidence: list[str]) -> Rec | None:
    """A value made inside a loop and read after it: only the last iteration survives (stale re-binding)."""
    lines = (an.source or "").splitlines()
    for c in window:
        for p in an.operand_recs(c):
            inner = [k for k in p.iteration if k not in c.iteration]
            if not inner or an.status.get(p.seq) in GOOD or p.is_write:
                continue  # (reading a tensor written back inside the loop is how state is carried: fine)
            text = lines[p.line - 1] if p.line and 0 < p.line <= len(lines) else ""
            m = re.match(r"\s*(\w+)\s*=(?!=)(.*)", text)
            if m and not re.search(rf"\b{re.escape(m.group(1))}\b", m.group(2)):
                # the value is not an accumulator (`cmax = amax(xt)` does not read `cmax`): the reader after
                # the loop picked up a loop-local value, so the reading line is the suspect, not the loop
                evidence.append(f"{c.where()} reads {m.group(1)!r}, computed inside loop {inner[0]} at "
                                f"{p.where()}: after the loop it holds only the last iteration's value, which "
                                "this line was not meant to use")
                return c
            evidence.append(f"{c.where()} reads the value computed inside loop {inner[0]} at {p.where()}; "
                            "after the loop only the last iteration's value exists (a name re-bound inside "
                            "pypto.loop is not loop-carried: write the state back with t[:] = ... instead)")
            return p
    return None


_LOW = frozenset({"bf16", "fp16", "fp8e4m3", "fp8e5m2"})


def _ancestors(an: Analyzer, r: Rec, limit: int = 2000) -> list[Rec]:
    seen: dict[int, Rec] = {}
    stack = [r]
    while stack and len(seen) < limit:
        cur = stack.pop()
        for p in an.parents(cur):
            if p.seq not in seen:
                seen[p.seq] = p
                stack.append(p)
    return sorted(seen.values(), key=lambda x: x.seq)


def missing_cast(an: Analyzer, observed: Rec, evidence: list[str]) -> Rec | None:
    """An op consuming a low-precision value that the kernel casts up for its other uses."""
    anc = [*_ancestors(an, observed), observed]
    casts: dict[int, Rec] = {}
    for x in an.recs:
        if x.op == "cast" and x.dtype not in _LOW:
            for p in an.operand_recs(x):
                if p.dtype in _LOW:
                    casts.setdefault(p.seq, x)
    for r in anc:
        if r.op == "cast":
            continue
        for p in an.operand_recs(r):
            if p.dtype in _LOW and p.seq in casts:
                q = casts[p.seq]
                evidence.append(f"{r.where()} uses the {p.dtype} value from {p.where()} directly, while the "
                                f"kernel casts that value to {q.dtype} at {q.where()} for its other uses "
                                "(missing cast?)")
                return r
    return None


def stale_state(an: Analyzer, window: list[Rec], evidence: list[str]) -> Rec | None:
    """Loop-carried state that stopped being written back: a read in iteration k sees the write of k-2 or older.

    The usual cause is ``state = new`` (a Python re-binding, not loop-carried on the device) where
    ``state[:] = new`` was meant; the kernel source is searched for that re-binding inside the loop.
    """
    for r in window:
        reads: list[tuple[str, Rec]] = []
        for ref in r.inputs or []:
            if ref.get("kind") == "tensor":
                nm = str(ref.get("name"))
                ws = an.resolve_tensor(nm, r.seq) if an.param_map.get(nm) not in an.inputs else []
                if ws:
                    reads.append((nm, ws[-1]))
            elif ref.get("kind") == "record":
                p = an.by_seq.get(int(ref.get("seq", -1)))
                if p is not None and p.is_write and p.target:
                    reads.append((p.target, p))
        for nm, w in reads:
            loops = [k for k in r.iteration if k in w.iteration and r.iteration[k] - w.iteration[k] >= 2]
            if not loops:
                continue
            msg = (f"{r.where()} reads {nm!r}, last written at {w.where()}: the loop-carried state stopped "
                   f"being written back after iteration {w.iteration[loops[0]]} of loop {loops[0]}")
            line = None
            if an.source:
                try:
                    tree = parse_source(an.source)
                except (SyntaxError, ValueError):
                    tree = None
                for node in ast.walk(tree) if tree is not None else []:
                    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == nm
                                                            for t in node.targets) \
                            and w.line is not None and node.lineno > w.line - 50 and node.lineno != w.line:
                        if line is None or abs(node.lineno - (r.line or 0)) < abs(line - (r.line or 0)):
                            line = node.lineno
            if line is not None:
                evidence.append(msg + f"; line {line} re-binds the name {nm!r} instead of writing the tensor "
                                f"back ({nm}[:] = ...)")
                return Rec(seq=-1, node=None, op="rebind", file=r.file, line=line, iteration=dict(r.iteration))
            evidence.append(msg)
            return r
    return None


def static_missing_cast(source: str | None, error_line: int | None) -> int | None:
    """For a dtype-mismatch error raised before any op ran: the statement that uses a value the kernel
    casts elsewhere, un-cast, and feeds the failing line (kernel source parsed, never run).

    Example: ``xf = cast(xt, FP32)`` exists, ``s = sum(xt)`` uses ``xt`` directly, and ``d = xf - s/D`` fails
    with "operand dtypes differ": the answer is the line of ``s = sum(xt)``.
    """
    if not source or error_line is None:
        return None
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    strong = _uncast_expression(tree, error_line)
    if strong is not None:
        return strong
    assigns: list[tuple[int, str, set[str], bool]] = []  # line, target, names read, is a cast
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            is_cast = isinstance(node.value, ast.Call) and ast.unparse(node.value.func).endswith("cast")
            if is_cast and node.value.args:  # type: ignore[attr-defined]
                reads = {n.id for n in ast.walk(node.value.args[0]) if isinstance(n, ast.Name)}  # type: ignore[attr-defined]
            else:
                reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)
                         and not (isinstance(n.ctx, ast.Load) and n.id == "pypto")}
            assigns.append((node.lineno, node.targets[0].id, reads, is_cast))
    assigns.sort()
    cast_sources = {n for _l, _t, reads, is_cast in assigns if is_cast for n in reads}
    failing = next((a for a in assigns if a[0] == error_line), None)
    if failing is None:
        return None
    # ancestors of the failing statement, by name, latest definition before each use
    frontier, seen, suspects = set(failing[2]), set(), []
    while frontier:
        name = frontier.pop()
        if name in seen:
            continue
        seen.add(name)
        defs = [a for a in assigns if a[1] == name and a[0] < error_line]
        if not defs:
            continue
        line, _t, reads, is_cast = defs[-1]
        if not is_cast and reads & cast_sources:
            suspects.append(line)
        frontier |= reads
    return min(suspects) if suspects else None


_REDUCERS = {"sum": np.sum, "amax": np.max, "amin": np.min, "mean": np.mean}


def wrong_axis(an: Analyzer, window: list[Rec], evidence: list[str]) -> Rec | None:
    """A reduction over the wrong axis, shown by values: its operand matches golden ``X`` (plain layout), the
    kernel reduces axis ``a``, and reducing the same golden slice of ``X`` over another axis ``a'`` gives a golden
    tensor later in the data flow (exactly, or a constant multiple of it: a sum the golden takes as a mean), while
    the kernel's own value matches nothing. The culprit is the reduction: its input is right, and the golden
    reduces that input over ``a'``."""
    from runtime.bisect._analyzer import region_slice
    from runtime.bisect._compare import close, fit

    for r in sorted(window, key=lambda x: x.seq)[:200]:
        if r.op not in _REDUCERS or an.status.get(r.seq) in GOOD:
            continue
        ops = an.operand_recs(r)
        if len(ops) != 1 or an.status.get(ops[0].seq) != "match":
            continue
        p = ops[0]
        xname, reg = an.matched[p.seq]
        pbs = p.bshape
        if pbs is None:
            continue
        lid = an.lids.get(p.seq, "")
        # (the golden in the layout the operand matched it in: a kernel working on transposed tiles - Sinkhorn's
        # [4, 4, T] for a golden [T, 4, 4] - reduces the axes of that layout)
        xg = an.g.layout(xname, pbs, lid) if lid else an.g.shaped(xname, len(pbs))
        xs = region_slice(xg if xg is not None else an.g.arrays[xname], tuple(reg), pbs)
        if xs is None:
            continue
        a = int(r.attrs.get("dim", -1)) % len(pbs)
        for a2 in range(len(pbs)):
            if a2 == a or pbs[a2] <= 1:
                continue
            red = _REDUCERS[r.op](np.asarray(xs, dtype=np.float64), axis=a2, keepdims=True)
            if red.size > 1 and float(np.ptp(red)) <= an.g.atol + an.g.rtol * float(np.abs(red).max()):
                # one value everywhere (the column sums of a column-normalized matrix are all 1): every normalized
                # golden reduces to it, so equal to a later golden is no evidence of the axis
                continue
            reg2 = list(reg)
            reg2[a2] = 0
            for gname, o in sorted(an.g.order.items(), key=lambda kv: kv[1]):
                if o <= an.g.order[xname] or an.g.kinds.get(gname) == "input" or not an.aligned(r, gname):
                    continue
                gs = None
                for _lid, garr in an.g.layouts(gname, tuple(red.shape)) if lid else \
                        [("", an.g.shaped(gname, len(pbs)))]:
                    gs = region_slice(garr, tuple(reg2), red.shape) if garr is not None else None
                    if gs is not None:
                        break
                if gs is None:
                    continue
                same = close(red, gs, an.g.atol, an.g.rtol)
                corr, k = fit(red, gs) if not same else (1.0, None)
                if not same and (k is None or corr < 0.999):
                    continue
                how = "equals" if same else f"is {k:.4g} times"
                evidence.append(f"{r.where()} reduces axis {a} of a value that matches golden {xname!r}; reducing "
                                f"that golden over axis {a2} instead gives a value golden {gname!r} {how} "
                                f"(the kernel's own result matches no golden tensor): the reduction takes the "
                                "wrong axis")
                an.status[r.seq] = "mismatch"
                an.expected[r.seq] = (gname, tuple(reg2))
                return r
    return None


def _contraction_operands(an: Analyzer, r: Rec) -> list[tuple[int | None, Rec | None]]:
    """For a ``matmul`` record: per operand (a, b), its tile offset on the contracted axis (``None`` when not
    known) and the record that put the value there (the operand record, or the last write into a local tensor
    read by name)."""
    out: list[tuple[int | None, Rec | None]] = []
    for i, ref in enumerate((r.inputs or [])[:2]):
        trans = bool(r.attrs.get("a_trans" if i == 0 else "b_trans"))
        axis = (-2 if trans else -1) if i == 0 else (-1 if trans else -2)
        src: Rec | None = None
        offs: tuple[int, ...] | None = None
        if ref.get("kind") == "record":
            src = an.by_seq.get(int(ref.get("seq", -1)))
            offs = an.offs.get(src.seq) if src is not None else None
        elif ref.get("kind") == "tensor":
            name = str(ref.get("name"))
            _shape, offs = an._tensor_operand(name, r.seq)
            ws = an.resolve_tensor(name, r.seq)
            src = ws[-1] if ws else None
        out.append((int(offs[axis]) if offs is not None and len(offs) >= 2 else None, src))
    return out


def _source_view(an: Analyzer, r: Rec | None) -> Rec | None:
    """The view of a kernel argument ``r``'s value was copied from (through writes, casts, copies and lane
    selections), or None."""
    cur = r
    for _ in range(6):
        if cur is None:
            return None
        if cur.op == "view":
            return cur if cur.source else None
        ops = an.operand_recs(cur)
        if cur.op not in ("move", "assemble", "cast", "reshape", "clone", "copy", "gathermask") or len(ops) != 1:
            return None
        cur = ops[0]
    return None


def contraction_offsets(an: Analyzer, window: list[Rec], evidence: list[str]) -> Rec | None:
    """A ``matmul`` whose two operands come from different tiles of the axis it contracts: ``p @ v`` where ``p``
    holds key tile ``k`` (its columns follow the loop) and ``v`` holds key tile 0 in every iteration. In a right
    kernel both operands index the contracted axis alike in every execution (a contraction pairs element ``j`` of
    one with element ``j`` of the other), so a disagreement is a geometric fault, not a numerical one. The operand
    read through a view of a kernel argument whose offset on that axis never moves over all the view's executions
    (while it runs in several iterations) is the misplaced one, and that view is named; only when exactly one
    operand is stuck like that, and the disagreement is seen in an execution feeding the departure."""
    for r in window:
        if r.op != "matmul":
            continue
        mine = _contraction_operands(an, r)
        if len(mine) != 2 or mine[0][0] is None or mine[1][0] is None or mine[0][0] == mine[1][0]:
            continue
        stuck: list[tuple[int, Rec]] = []
        for i, (_off, src) in enumerate(mine):
            v = _source_view(an, src)
            if v is None or src is None:
                continue
            axis = (-2 if r.attrs.get("a_trans") else -1) if i == 0 else (-1 if r.attrs.get("b_trans") else -2)
            offs, its = _walk(an, v, axis, 2)
            if len(offs) == 1 and its >= 2:
                stuck.append((i, v))
        if len(stuck) != 1:
            continue
        i, v = stuck[0]
        evidence.append(f"{r.where()} contracts an axis on which its operands come from different tiles: operand "
                        f"{'ab'[i]} at offset {mine[i][0]}, operand {'ab'[1 - i]} at {mine[1 - i][0]}; the view at "
                        f"{v.where()} (offsets {v.offsets}) that feeds operand {'ab'[i]} reads the same offset on "
                        "that axis in every iteration: it does not follow the loop")
        an.status[v.seq] = "misplaced"
        return v
    return None


def _reads_of(an: Analyzer, w: Rec) -> bool:
    """Some op reads the value write ``w`` left in its tensor (through the write's record or the tensor's name)."""
    for x in an.recs:
        if x.seq <= w.seq:
            continue
        for ref in x.inputs or []:
            if ref.get("kind") == "record" and int(ref.get("seq", -1)) == w.seq:
                return True
            if ref.get("kind") == "tensor" and str(ref.get("name")) == w.target:
                ws = an.resolve_tensor(w.target or "", x.seq)
                if ws and ws[-1].seq == w.seq:
                    return True
    return False


def overwritten_state(an: Analyzer, window: list[Rec], evidence: list[str]) -> Rec | None:
    """State overwritten before anything read it: ``tsum[:] = ts`` in the iteration after ``tsum[:] = ts0``, where
    ``tsum[:] = tsum + ts`` was meant. A value computed from the kernel's data and written into a local tensor is
    there to be read; when the next write into the same place neither reads it nor lets anything else read it
    first, what the first one carried (tile 0's share of a running sum) is lost. Named: the overwriting write, when
    it feeds the departure (it is in the window) and the value it replaces is computed, not a constant fill."""
    for w2 in window:
        if not w2.is_write or not w2.target or w2.target in an.arg_shapes or w2.offsets is None:
            continue
        earlier = [w for w in an.writes.get(w2.target, []) if w.seq < w2.seq]
        if not earlier:
            continue
        w1 = earlier[-1]
        if w1.offsets != w2.offsets or w1.bshape != w2.bshape or _reads_of(an, w1):
            continue
        src = an.operand_recs(w1)
        if not src or all(p.op in CONST_FILLS for p in src) or an.status.get(w1.seq) == "const":
            continue
        if w1.seq in _lineage_seqs(an, w2):
            continue
        evidence.append(f"{w2.where()} overwrites {w2.target!r} at offsets {w2.offsets} without reading what "
                        f"{w1.where()} wrote there, and nothing read it in between: the value written first (computed "
                        "from the kernel's data) is lost - running state overwritten where it should be updated?")
        an.status[w2.seq] = "mismatch"
        return w2
    return None


CONST_FILLS = frozenset({"full", "zeros", "ones", "arange"})


def _lineage_seqs(an: Analyzer, r: Rec, limit: int = 400) -> set[int]:
    seen, stack = {r.seq}, [r]
    while stack and len(seen) < limit:
        for p in an.parents(stack.pop()):
            if p.seq not in seen:
                seen.add(p.seq)
                stack.append(p)
    return seen


_SHAPE_RE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def _strip_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    i = 0
    while i < len(shape) - 1 and shape[i] == 1:
        i += 1
    return shape[i:]


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b), strict=False))


def shape_error_source(recs: list[Rec], message: str, error_line: int | None) -> tuple[Rec, str] | None:
    """For a kernel that raised on operands whose shapes do not broadcast: the reduction, on another line, that made
    the odd operand - reduced over the wrong axis, or with ``keepdim`` dropped - and why (or None).

    The op that raises is only where the two shapes meet (``sub(dp_ij, d_i)`` in a helper, ``div(x, y)``); the shape
    was made earlier by ``d_i = sum(t, 0, keepdim=True)`` ([1, 64] where [128, 1] was meant) or by ``sum(y, -1,
    keepdim=False)`` ([4] where [4, 1] was meant). Named only when reducing the same operand over one of its axes
    with ``keepdim`` would have given a shape that broadcasts with the other operand - i.e. the reduction's own
    choice of axis or ``keepdim`` is what does not fit.
    """
    if not message or "shape" not in message.lower():
        return None
    shapes = [tuple(int(x) for x in m.split(",")) for m in _SHAPE_RE.findall(message)]
    if len(shapes) < 2:
        return None
    by_seq = {r.seq: r for r in recs}
    for i, odd in enumerate(shapes):
        others = [s for j, s in enumerate(shapes) if j != i and s != odd]
        if not others:
            continue
        src = next((r for r in reversed(recs) if r.shape is not None and not r.is_write
                    and _strip_ones(tuple(r.shape)) == _strip_ones(odd)), None)
        if src is None or src.op not in _REDUCERS or src.line is None or src.line == error_line:
            continue
        ops = [by_seq.get(int(x.get("seq", -1))) for x in src.inputs or [] if x.get("kind") == "record"]
        operand = next((o for o in ops if o is not None and o.shape is not None), None)
        if operand is None:
            continue
        s_in = tuple(operand.shape)
        fits = [a for a in range(len(s_in))
                if (k := s_in[:a] + (1,) + s_in[a + 1:]) != tuple(src.shape) and all(_broadcasts(k, o) for o in others)]
        # (keepdim dropped: the axis it reduced first - the one whose removal gives the recorded shape)
        fits.sort(key=lambda a: s_in[:a] + s_in[a + 1:] != tuple(src.shape))
        if not fits:
            continue
        dropped = len(src.shape) < len(s_in)
        why = (f"the kernel raised on operands of shapes {[list(s) for s in shapes]}; the operand of shape "
               f"{list(src.shape)} is made at {src.where()} by a {src.op} of a {list(s_in)} value"
               + (" that drops the reduced axis (keepdim=False)" if dropped else "")
               + f"; the same {src.op} over axis {fits[0]} with keepdim would give "
               f"{list(s_in[:fits[0]] + (1,) + s_in[fits[0] + 1:])}, which fits: the reduction's axis or keepdim is "
               "the bug, not the line that raised")
        return src, why
    return None


_REDUCE_CALLS = ("sum", "amax", "amin", "mean", "max", "min")


def _reduction(node: ast.expr) -> tuple[str, str, str | None, bool | None] | None:
    """(function, first operand text, axis text, keepdim) of a reduction call ``pypto.sum(x, -1, keepdim=True)`` /
    ``x.sum(0, keepdim=True)``; None for anything else."""
    if not isinstance(node, ast.Call):
        return None
    fn = ast.unparse(node.func)
    short = fn.rsplit(".", 1)[-1]
    if short not in _REDUCE_CALLS:
        return None
    args = list(node.args)
    if fn.startswith("pypto."):
        if not args:
            return None
        operand, rest = ast.unparse(args[0]), args[1:]
    elif isinstance(node.func, ast.Attribute):
        operand, rest = ast.unparse(node.func.value), args
    else:
        return None
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    axis_node = kw.get("dim", kw.get("axis", rest[0] if rest else None))
    keep_node = kw.get("keepdim", rest[1] if len(rest) > 1 else None)
    keep = keep_node.value if isinstance(keep_node, ast.Constant) and isinstance(keep_node.value, bool) else None
    return short, operand, ast.unparse(axis_node) if axis_node is not None else None, keep


def call_arguments(tree: ast.AST, fn: ast.FunctionDef, param: str) -> list[tuple[ast.expr, int]]:
    """``(argument, line)`` of every call of ``fn`` (by its name, a method's or module's too) in ``tree`` for its
    parameter ``param``, positional or keyword: where a helper parameter's value comes from."""
    names = [a.arg for a in fn.args.args]
    if param not in names:
        return []
    idx = names.index(param)
    out: list[tuple[ast.expr, int]] = []
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and ast.unparse(call.func).rsplit(".", 1)[-1] == fn.name:
            arg = call.args[idx] if idx < len(call.args) else next(
                (k.value for k in call.keywords if k.arg == param), None)
            if arg is not None:
                out.append((arg, call.lineno))
    return out


def static_shape_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised on operands whose shapes do not broadcast while it was being traced (no op ran,
    nothing recorded): the reduction statement upstream of the failing line whose axis or ``keepdim`` made the odd
    shape, and why (kernel source parsed, never run).

    Followed back by name from the failing statement (latest assignment before each use; a parameter of a helper
    function continues at the argument of each call of that helper), a reduction is named when it drops the
    reduced axis (``keepdim=False``: ``sum(y, -1, keepdim=False)`` then ``div(x, y)``), or when the same reduction
    of the same operand elsewhere in the file uses another axis (``sum(dy_ao, 0, ...)`` where three other
    statements have ``sum(dy_ao, -1, ...)``).
    """
    if not source or error_line is None or "shape" not in (message or "").lower():
        return None
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    assigns: list[tuple[int, str, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigns.append((node.lineno, node.targets[0].id, node.value))
    assigns.sort(key=lambda a: a[0])
    reductions = [(ln, red) for ln, _t, v in assigns if (red := _reduction(v)) is not None]
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]

    def reads(node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id != "pypto"}

    failing = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and not isinstance(
        n, ast.FunctionDef | ast.For | ast.If | ast.While | ast.With) and n.lineno <= error_line <= (n.end_lineno or n.lineno)]
    if not failing:
        return None
    start = min(failing, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)
    frontier = [(name, start.lineno) for name in reads(start)]
    seen: set[tuple[str, int]] = set()
    while frontier:
        name, before = frontier.pop(0)
        if (name, before) in seen or len(seen) > 400:
            continue
        seen.add((name, before))
        fn = next((f for f in funcs if f.lineno <= before <= (f.end_lineno or f.lineno)
                   and all(not (g is not f and f.lineno < g.lineno <= before <= (g.end_lineno or g.lineno))
                           for g in funcs)), None)
        lo = fn.lineno if fn is not None else 0
        defs = [a for a in assigns if a[1] == name and lo <= a[0] < before]
        if defs:
            line, _t, value = defs[-1]
            red = _reduction(value)
            if red is not None:
                kind, operand, axis, keep = red
                other_lines = [(ln, a) for ln, (k2, op2, a, _kp) in reductions if ln != line and k2 == kind
                               and op2 == operand and a is not None and a != axis]
                others = sorted({a for _ln, a in other_lines})
                same = [ln for ln, (k2, op2, a, _kp) in reductions if ln != line and k2 == kind and op2 == operand
                        and a == axis]
                if keep is False:
                    return line, (f"the kernel raised at line {error_line} on operands whose shapes do not broadcast "
                                  f"({message.strip()[:120]}); the operand comes from line {line}, a {kind} with "
                                  "keepdim=False: it drops the reduced axis, so the result no longer lines up with "
                                  "the tensor it is combined with")
                if len(others) == 1 and len(other_lines) >= 2 and not same:  # (the odd one of three or more)
                    return line, (f"the kernel raised at line {error_line} on operands whose shapes do not broadcast "
                                  f"({message.strip()[:120]}); the operand comes from line {line}, a {kind} of "
                                  f"{operand} over axis {axis}, where every other {kind} of {operand} in the file "
                                  f"reduces over axis {others[0]}")
            frontier.extend((n, line) for n in sorted(reads(value)))
            continue
        if fn is not None:
            for arg, at_line in call_arguments(tree, fn, name):
                frontier.extend((n, at_line) for n in sorted(reads(arg)))
    return None


def _is_cast(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func).rsplit(".", 1)[-1] == "cast" and bool(node.args)


def _uncast_expression(tree: ast.AST, error_line: int) -> int | None:
    """The statement upstream of ``error_line`` that computes, un-cast, an expression the kernel casts wherever else
    it appears (``sum(pypto.mul(dy_i, ao_i), ...)`` where every other statement has
    ``cast(pypto.mul(dy_i, ao_i), FP32)``), followed back by name and through helper parameters to the arguments of
    each call of the helper; None when there is none."""
    casted = {ast.unparse(n.args[0]) for n in ast.walk(tree) if _is_cast(n)}  # type: ignore[attr-defined]
    casted = {c for c in casted if "(" in c}  # (expressions, not bare names: a name is cast for many reasons)
    if not casted:
        return None
    assigns: list[tuple[int, str, ast.expr]] = sorted(
        ((n.lineno, n.targets[0].id, n.value) for n in ast.walk(tree)
         if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)),
        key=lambda a: a[0])
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]

    def reads(node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id != "pypto"}

    def uncast(value: ast.AST) -> bool:
        inside_cast = {id(a) for c in ast.walk(value) if _is_cast(c) for a in ast.walk(c.args[0])}  # type: ignore[attr-defined]
        return any(isinstance(n, ast.Call) and id(n) not in inside_cast and ast.unparse(n) in casted
                   for n in ast.walk(value))

    stmts = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and not isinstance(
        n, ast.FunctionDef | ast.For | ast.If | ast.While | ast.With) and n.lineno <= error_line <= (n.end_lineno or n.lineno)]
    if not stmts:
        return None
    start = min(stmts, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)
    frontier = [(name, start.lineno) for name in sorted(reads(start))]
    seen: set[tuple[str, int]] = set()
    found: list[int] = []
    while frontier:
        name, before = frontier.pop(0)
        if (name, before) in seen or len(seen) > 400:
            continue
        seen.add((name, before))
        inner = [f for f in funcs if f.lineno <= before <= (f.end_lineno or f.lineno)]
        fn = max(inner, key=lambda f: f.lineno) if inner else None
        lo = fn.lineno if fn is not None else 0
        defs = [a for a in assigns if a[1] == name and lo <= a[0] < before]
        if defs:
            line, _t, value = defs[-1]
            if uncast(value):
                found.append(line)
                continue
            frontier.extend((n, line) for n in sorted(reads(value)))
            continue
        if fn is not None:
            for arg, at_line in call_arguments(tree, fn, name):
                frontier.extend((n, at_line) for n in sorted(reads(arg)))
    return found[0] if len(set(found)) == 1 else None
