"""Culprit rules of the automatic method, in order of evidence strength (see ``_auto``).

Each rule looks at the first departing value, its window of unanchored ancestors and the kernel source
(parsed, never run), and either names a culprit op (appending its reason to ``evidence``) or returns None.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from runtime.bisect._analyzer import GOOD, Analyzer
from runtime.bisect._compare import mismatch_mask
from runtime.bisect._parse import parse_source
from runtime.bisect._records import Rec

__all__ = ["contraction_offsets", "coverage_gap", "discarded_combination", "geometry", "missing_cast", "overwritten_state",
           "rebound_after_loop", "shape_error_source", "stale_state", "static_consumed_source",
           "static_reshape_dim_source", "static_wrapper_pad_source", "static_zero_trip_source",
           "wrong_axis"]


def _enclosing_function(tree: ast.AST, line: int) -> ast.FunctionDef | None:
    """The innermost function definition whose body holds ``line``."""
    best: ast.FunctionDef | None = None
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.lineno <= line <= (fn.end_lineno or fn.lineno) \
                and (best is None or fn.lineno > best.lineno):
            best = fn
    return best


def _function_at(source: str, line: int) -> tuple[ast.Module, ast.FunctionDef] | None:
    """(the parsed source, the innermost function holding ``line``), or None when the source does not parse or no
    function holds the line."""
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    fn = _enclosing_function(tree, line)
    return None if fn is None else (tree, fn)


def _shape_read(value: ast.AST) -> tuple[str, int] | None:
    """``(tensor, axis)`` when ``value`` is ``tensor.shape[axis]`` with a constant int axis, else None."""
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) and value.value.attr == "shape" \
            and isinstance(value.value.value, ast.Name) and isinstance(value.slice, ast.Constant) \
            and isinstance(value.slice.value, int):
        return value.value.value.id, value.slice.value
    return None


def _reshapes_at(fn: ast.AST, line: int) -> list[ast.Call]:
    """The ``x.reshape(y, [dims])`` / ``pypto.reshape(y, [dims])`` calls of ``fn`` that span ``line`` and list their
    target's dims."""
    return [c for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
            and c.func.attr == "reshape" and c.lineno <= line <= (c.end_lineno or c.lineno) and len(c.args) >= 2
            and isinstance(c.args[1], ast.List | ast.Tuple)]


def _last_assignment(fn: ast.AST, name: str, before: int) -> ast.Assign | None:
    """The last plain assignment ``name = ...`` in ``fn`` on a line before ``before`` (the value a use reads; a
    kernel binds its tile offsets and valid shapes as locals: ``s_off = s_blk * S_TILE`` then ``[b, 0, s_off, 0]``)."""
    best: ast.Assign | None = None
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and node.lineno < before and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets) \
                and (best is None or node.lineno > best.lineno):
            best = node
    return best


def _names(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def _offset_exprs(tree: ast.AST, line: int, axis: int) -> list[ast.AST]:
    """The offset expressions on ``axis`` of the write statement on ``line``: the ``axis``-th element of each list
    argument of a call on that line (``assemble(t, [b, n_off, s_off, 0], out)``), or of a subscript target
    (``out[i:, d * T:] = t``)."""
    out: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node, "lineno", None) == line:
            for arg in node.args:
                if isinstance(arg, ast.List | ast.Tuple) and len(arg.elts) > axis:
                    out.append(arg.elts[axis])
        elif isinstance(node, ast.Assign) and node.lineno == line:
            for t in node.targets:
                if isinstance(t, ast.Subscript):
                    elts = t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]
                    if len(elts) > axis:
                        out.append(elts[axis])
    return out


def _offset_chain(source: str | None, write: Rec, axis: int) -> tuple[set[str], list[ast.Assign], ast.AST] | None:
    """The names the write on ``write.line`` computes its offset on ``axis`` from, followed back through the local
    assignments they read (``s_off = s_blk * S_TILE``: the loop index ``s_blk`` drives the offset ``s_off``), with
    those assignments (nearest first) and the parsed source; None without a parsable source."""
    if not source or write.line is None:
        return None
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for e in _offset_exprs(tree, write.line, axis):
        names |= _names(e)
    fn = _enclosing_function(tree, write.line)
    chain: list[ast.Assign] = []
    if not names and fn is not None:
        # the offsets bound to a local list first (``output_offset = [bs_offset, 0]`` then ``assemble(t,
        # output_offset, out)``, sum_lstm): that list's element on the axis, and its assignment in the chain
        for lst in _offset_lists(fn, write.line):
            elts = lst.value.elts  # type: ignore[attr-defined]
            if len(elts) > axis:
                names |= _names(elts[axis])
                chain.append(lst)
    todo, seen = list(names), set(names)
    while todo and fn is not None and len(chain) < 8:
        a = _last_assignment(fn, todo.pop(0), write.line)
        if a is None or a in chain:
            continue
        chain.append(a)
        for n in _names(a.value) - seen:
            seen.add(n)
            todo.append(n)
    return seen, chain, tree


def _offset_lists(fn: ast.FunctionDef, line: int) -> list[ast.Assign]:
    """The assignments of a list / tuple literal to a name the write call on ``line`` passes as an argument (its
    offsets bound to a local first: ``output_offset = [bs_offset, 0]``), latest before the line."""
    out: list[ast.Assign] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and getattr(node, "lineno", None) == line:
            for arg in node.args:
                if isinstance(arg, ast.Name):
                    a = _last_assignment(fn, arg.id, line)
                    if a is not None and isinstance(a.value, ast.List | ast.Tuple) and a not in out:
                        out.append(a)
    return out


def _bound_arg(loop: ast.For) -> ast.expr | None:
    """The stop argument of ``for .. in pypto.loop(stop, ..)`` / ``pypto.loop(start, stop, step)`` /
    ``pypto.loop_unroll(start, stop, step, ..)`` (keyword names aside), or None."""
    it = loop.iter
    if not isinstance(it, ast.Call) or not it.args:
        return None
    return it.args[1] if len(it.args) >= 2 else it.args[0]


def _stop_line(loop: ast.For) -> int:
    """The line of the loop's stop argument (a ``for`` whose call spans lines: ``pypto.loop_unroll(`` on one line,
    ``0, batch_size - 1, 1,`` on the next - the bound is on the second), else the ``for`` line."""
    b = _bound_arg(loop)
    return b.lineno if b is not None else loop.lineno


def _driving_loop(source: str | None, write: Rec, axis: int) -> Rec | None:
    """The ``for ... in pypto.loop(...)`` enclosing ``write`` whose index its offset on ``axis`` is computed from
    (directly, or through the local names the offset reads: ``s_off = s_blk * S_TILE``)."""
    found = _offset_chain(source, write, axis)
    if found is None or write.line is None:
        return None
    names, _chain, tree = found
    best: ast.For | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and node.lineno <= write.line <= (node.end_lineno or node.lineno) \
                and _loop_index(node) in names and (best is None or node.lineno > best.lineno):
            best = node
    if best is None:
        return None
    return Rec(seq=-1, node=None, op="loop", file=write.file, line=best.lineno, iteration={},
               attrs={"stop_line": _stop_line(best)})


def _count_source(source: str | None, write: Rec, axis: int, loop_line: int) -> tuple[int, str] | None:
    """For a loop that stops short along ``axis``: the line of its trip count when the count is a local computed
    for this axis (``s_loops = (S - 1) // S_TILE`` then ``pypto.loop(s_loops)``), and why; None when the loop is
    the place to look (a literal count, or a count computed for another axis: ``pypto.loop(bs_loop)`` where the
    writes step by ``TILE_D`` - the loop took the wrong count).

    The count belongs to this axis when its assignment reads a name the write's offset on the axis is computed from
    besides the loop index (the tile size it steps by). The loop statement only passes the count on; naming it was
    late when the count's own line rounds down (s38b's sigmoid ``(B - 1) // TILE_B``, s39's rope ``s_loops``)."""
    found = _offset_chain(source, write, axis)
    if found is None:
        return None
    names, _chain, tree = found
    loop = next((n for n in ast.walk(tree) if isinstance(n, ast.For) and n.lineno == loop_line), None)
    if loop is None or not isinstance(loop.iter, ast.Call) or len(loop.iter.args) != 1 \
            or not isinstance(loop.iter.args[0], ast.Name):
        return None
    fn = _enclosing_function(tree, loop_line)
    count = loop.iter.args[0].id
    made = _last_assignment(fn, count, loop_line) if fn is not None else None
    if made is None or len(made.targets) != 1:
        return None
    shared = sorted((_names(made.value) & names) - {_loop_index(loop), count})
    if not shared:
        return None
    return made.lineno, (f"the loop at line {loop_line} runs {count!r} trips, computed at line {made.lineno} "
                         f"({ast.unparse(made.value)}) from {', '.join(map(repr, shared))}, which the offset of the "
                         "writes steps by: the count is computed for this axis, and too small there")


_LOOP_EDGE = ("is_loop_begin", "is_loop_end")


def wrong_loop_guard(source: str | None, line: int | None) -> tuple[int, str] | None:
    """The ``if pypto.is_loop_begin(i)`` (or ``is_loop_end``) around ``line`` when ``i`` is the index of an outer
    loop, not of the innermost loop holding the ``if``, and why; None otherwise (parsed, never run).

    An accumulator initialised under the first trip of the *outer* loop (``is_loop_begin(s1_idx)`` inside the
    ``s2_idx`` loop, for ``is_loop_begin(s2_idx)``) is re-initialised on every inner trip of the first outer trip and
    never on the others: the write under the ``if`` departs, but its line is right; the guard chose when it runs."""
    if not source or line is None:
        return None
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    guards = [n for n in ast.walk(tree) if isinstance(n, ast.If) and n.lineno < line <= (n.end_lineno or n.lineno)
              and isinstance(n.test, ast.Call) and isinstance(n.test.func, ast.Attribute)
              and n.test.func.attr in _LOOP_EDGE and len(n.test.args) == 1 and isinstance(n.test.args[0], ast.Name)]
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
             and ast.unparse(n.iter.func).rsplit(".", 1)[-1] in ("loop", "loop_unroll")]
    for g in sorted(guards, key=lambda n: -n.lineno):
        held = [lp for lp in loops if lp.lineno < g.lineno <= (lp.end_lineno or lp.lineno)]
        if len(held) < 2:
            continue
        inner = max(held, key=lambda lp: lp.lineno)
        var = g.test.args[0].id  # type: ignore[attr-defined]
        outer = [lp for lp in held if lp is not inner and _loop_index(lp) == var]
        if _loop_index(inner) != var and outer and not _placed_by(g, inner):
            edge = g.test.func.attr  # type: ignore[attr-defined]
            return g.lineno, (f"line {line} runs under `{edge}({var})` at line {g.lineno}, inside the loop over "
                              f"{_loop_index(inner)!r} (line {inner.lineno}) but testing the index of the outer loop "
                              f"at line {outer[0].lineno}: it runs on every inner trip of the outer loop's "
                              f"{'first' if edge == 'is_loop_begin' else 'last'} trip and on no trip of the others; "
                              "the guard is the line to fix")
    return None


def _placed_by(guard: ast.If, loop: ast.For) -> bool:
    """Whether a write under ``guard`` lands at a place the index of ``loop`` chooses (``pypto.assemble(part, [0, j *
    TC], out)``, ``acc_j = pypto.view(buf, .., [0, j * TC])`` then ``acc_j[:] = ..``): then each inner trip starts
    its own accumulator, and a guard on the outer loop's first trip is right (a column sum started on the first row
    tile, s39b) - the guard rule is for one accumulator every inner trip re-initialises."""
    idx = _loop_index(loop)
    if idx is None:
        return False
    moved = {idx}
    for _ in range(4):  # names the inner loop computes from its index (a view at ``j * TC``), a few steps deep
        for a in (n for n in ast.walk(loop) if isinstance(n, ast.Assign) and n.lineno < guard.lineno):
            if _names(a.value) & moved:
                moved |= {t.id for t in a.targets if isinstance(t, ast.Name)}
    for node in (n for stmt in guard.body for n in ast.walk(stmt)):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and _names(t) & moved:
                    return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "assemble" \
                and any(_names(a) & moved for a in node.args[1:]):
            return True
    return False


def _loop_index(node: ast.For) -> str | None:
    """The index a ``for`` binds: ``i`` of ``for i in ...`` and of ``for i, n in pypto.loop_unroll(...)``."""
    t = node.target
    if isinstance(t, ast.Name):
        return t.id
    if isinstance(t, ast.Tuple) and t.elts and isinstance(t.elts[0], ast.Name):
        return t.elts[0].id
    return None


def _short_step(an: Analyzer, w: Rec, axis: int, tile: list[int] | None) -> tuple[int, int] | None:
    """(step, extent) when the executions of ``w``'s write statement (same line and target) advance their offset on
    ``axis`` by less than the tile each writes there - overlapping writes, an offset that does not scale its index
    by the tile size; None when they tile the axis (or do not move on it)."""
    if tile is None or len(tile) <= axis or w.offsets is None:
        return None
    ws = [x for x in an.recs if x.is_write and x.line == w.line and x.target == w.target
          and x.offsets is not None and len(x.offsets) == len(w.offsets)]
    offs = sorted({x.offsets[axis] for x in ws})  # type: ignore[index]
    if len(offs) < 2:
        return None
    step = min(b - a for a, b in zip(offs, offs[1:], strict=False))
    return (step, int(tile[axis])) if 0 < step < int(tile[axis]) else None


def _holes(an: Analyzer, w: Rec, first: tuple[int, ...], tile: list[int] | None) -> tuple[int, int, int] | None:
    """(axis, step, extent) when the executions of ``w``'s write statement advance their offset on an axis by more
    than the tile each writes there, and the first unwritten index ``first`` falls in a gap between two of them
    (``loop_unroll`` trips of 4 rows writing 1 row each); None otherwise."""
    if tile is None or w.offsets is None or len(tile) != len(first) or len(w.offsets) != len(first):
        return None
    ws = [x for x in an.recs if x.is_write and x.line == w.line and x.target == w.target
          and x.offsets is not None and len(x.offsets) == len(first)]
    for a in range(len(first)):
        offs = sorted({x.offsets[a] for x in ws})  # type: ignore[index]
        if len(offs) < 2:
            continue
        step, ext = min(b - c for c, b in zip(offs, offs[1:], strict=False)), int(tile[a])
        below = [o for o in offs if o <= first[a]]
        if step > ext and below and first[a] - below[-1] >= ext and first[a] < offs[-1] + step:
            return a, step, ext
    return None


def _extent_source(an: Analyzer, w: Rec, axis: int, ext: int) -> tuple[int, str] | None:
    """(line, name) of the local that sets the extent ``ext`` on ``axis`` of the tile ``w`` writes: the shape
    argument of a view it is computed from holds a bare name there (``view(x, [current_tile_bs, H], ...)``), whose
    last assignment before the view is the line; None when no view says."""
    if not an.source:
        return None
    try:
        tree = parse_source(an.source)
    except (SyntaxError, ValueError):
        return None
    for v in an.lineage_views(w):
        if v.line is None or v.shape is None or len(v.shape) <= axis or int(v.shape[axis]) != ext:
            continue
        fn = _enclosing_function(tree, v.line)
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and getattr(call, "lineno", None) == v.line
                    and ast.unparse(call.func).rsplit(".", 1)[-1] == "view" and len(call.args) >= 2):
                continue
            shape = call.args[1]
            if isinstance(shape, ast.List | ast.Tuple) and len(shape.elts) > axis \
                    and isinstance(elt := shape.elts[axis], ast.Name) and fn is not None:
                a = _last_assignment(fn, elt.id, v.line)
                if a is not None:
                    return a.lineno, elt.id
    return None


def _step_source(source: str | None, write: Rec, axis: int, loop_line: int) -> int | None:
    """The line that turns the loop index into the write's offset on ``axis`` (``n_off = n_blk * N_TILE``): the
    nearest local assignment of the offset's names that reads the index of the loop on ``loop_line``; the write's
    own line when its offset reads the index directly (``[m_idx, t]``); None when it cannot be told."""
    found = _offset_chain(source, write, axis)
    if found is None or write.line is None:
        return None
    _names_, chain, tree = found
    loop = next((n for n in ast.walk(tree) if isinstance(n, ast.For) and n.lineno == loop_line), None)
    idx = _loop_index(loop) if loop is not None else None
    if idx is None:
        return None
    if any(idx in _names(e) for e in _offset_exprs(tree, write.line, axis)):
        return write.line
    for a in chain:
        if idx in _names(a.value):
            return a.lineno
    return None


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
        got = np.asarray(outputs[gname])
        rank = next((len(w.offsets) for w in ws if w.offsets is not None), g.ndim)
        hosted = an.g.host_view(gname, got) if gname in an.g.host and an.g.host[gname].ndim == rank else None
        dropped: np.ndarray | None = None
        if hosted is not None:  # the wrapper permutes (and crops) the buffer the kernel writes: compared laid out so
            g, (got, shown) = an.g.host[gname], hosted
            dropped = ~shown
        elif rank != g.ndim:  # the kernel writes the output in another rank (the wrapper reshapes it on the host)
            g_k = an.g.shaped(gname, rank)
            if g_k is None or g_k.size != g.size:
                continue
            g = g_k
        cover = np.zeros(g.shape, dtype=bool) if dropped is None else dropped.copy()
        for w in ws:
            if w.offsets is None or w.valid_shape is None or len(w.offsets) != g.ndim:
                continue
            cover[tuple(slice(max(0, o), max(0, o + n)) for o, n in zip(w.offsets, w.valid_shape, strict=True))] = True
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
            holes = _holes(an, culprit, first, tile(culprit)) if axis is None else None
            if holes is not None:
                h_axis, h_step, h_ext = holes
                ext_at = _extent_source(an, culprit, h_axis, h_ext)
                notes.append(f"the writes at line {culprit.line} advance along axis {h_axis} by {h_step} per trip while each "
                             f"writes {h_ext}: the rows between them are never written"
                             + (f"; the tile's extent on that axis is computed at line {ext_at[0]} ({ext_at[1]!r})"
                                if ext_at is not None else ""))
                if ext_at is not None:
                    culprit = Rec(seq=-1, node=None, op="extent", file=culprit.file, line=ext_at[0],
                                  iteration=dict(culprit.iteration))
                return counts, culprit, notes
            loop = _driving_loop(an.source, culprit, axis) if axis is not None else None
            t_c = tile(culprit)
            fixed = axis is not None and loop is None and t_c is not None and len(t_c) == g.ndim and len(
                {w.offsets[axis] for w in ws if w.offsets is not None and len(w.offsets) == g.ndim}) == 1
            ext_at = _extent_source(an, culprit, axis, int(t_c[axis])) \
                if fixed and axis is not None and t_c is not None else None
            if ext_at is not None and axis is not None and t_c is not None:
                # no loop moves the writes along this axis (every write starts at the same offset there) and the
                # tile they write ends short of the output: the tile's own extent is too small, and the local the
                # view's shape takes on that axis is where (``W = 128`` for 256, ``C = 32`` for 64: s37/s38)
                notes.append(f"every write at line {culprit.line} starts at offset {culprit.offsets[axis]} on axis "
                             f"{axis} and writes a tile of {t_c[axis]} there, and no loop moves it along that axis: "
                             f"the tile is too small; its extent on that axis is {ext_at[1]!r}, set at line "
                             f"{ext_at[0]}")
                culprit = Rec(seq=-1, node=None, op="extent", file=culprit.file, line=ext_at[0],
                              iteration=dict(culprit.iteration))
                return counts, culprit, notes
            if loop is not None and axis is not None and loop.line is not None:
                w_last = culprit
                overlap = _short_step(an, w_last, axis, tile(w_last))
                offset_line = _step_source(an.source, w_last, axis, loop.line) if overlap is not None else None
                if overlap is not None and offset_line is not None:
                    # the writes overlap: the loop runs its trips, but each advances the offset by less than a tile
                    # (``n_off = n_blk`` for ``n_blk * N_TILE``), so the last trip ends short of the extent
                    notes.append(f"the writes at line {w_last.line} advance along axis {axis} by {overlap[0]} per trip "
                                 f"of the loop at line {loop.line} while each writes {overlap[1]}: they overlap and stop "
                                 f"before index {first[axis]}; the offset is computed from the loop index at line {offset_line}")
                    culprit = Rec(seq=-1, node=None, op="offset", file=w_last.file, line=offset_line,
                                  iteration=dict(w_last.iteration))
                    if offset_line == w_last.line:
                        culprit = w_last
                        an.status[w_last.seq] = "misplaced"
                else:
                    notes.append(f"the writes at line {culprit.line} advance along axis {axis} with the loop at line "
                                 f"{loop.line}, which stops before reaching index {first[axis]}")
                    same = [tuple(x.offsets) for x in an.recs if x.is_write and x.line == culprit.line
                            and x.target == culprit.target and x.offsets is not None]
                    # (two writes at one offset: the offsets are wrong, not the count - s39's head stride)
                    count = _count_source(an.source, culprit, axis, loop.line) if len(set(same)) == len(same) \
                        else None
                    repeat = _repeated_offset_source(an.source, culprit, axis, an.recs) \
                        if len(set(same)) != len(same) else None
                    if count is not None:
                        notes.append(count[1])
                        culprit = Rec(seq=-1, node=None, op="trip_count", file=loop.file, line=count[0],
                                      iteration=dict(culprit.iteration))
                    elif repeat is not None:
                        notes.append(repeat[1])
                        culprit = Rec(seq=-1, node=None, op="offset", file=culprit.file, line=repeat[0],
                                      iteration=dict(culprit.iteration))
                    else:
                        culprit = loop
                        stop = loop.attrs.get("stop_line")
                        if isinstance(stop, int) and stop != loop.line:
                            # (a ``for`` whose loop call spans lines: the bound is where it stops short)
                            notes.append(f"its stop bound is on line {stop}")
                            culprit = Rec(seq=-1, node=None, op="loop", file=loop.file, line=stop, iteration={})
        break
    return counts, culprit, notes


def _repeated_offset_source(source: str | None, write: Rec, axis: int, recs: list[Rec]) -> tuple[int, str] | None:
    """Writes on ``write``'s line that land on the same offsets in trips of an outer loop: the line whose offset
    expression leaves that loop's index out, and why; None when no trips repeat an offset or the index is read.

    Why (s41): ``assemble(dq_final, [s1_idx * S_TILE, 0], dq_2d)`` where ``[s1_off, 0]`` (``bn_base + ...``) was meant
    writes every head's rows over the first head's; the rows of the other heads stay unwritten, and the loop whose
    index the offset does read (``s1_idx``, one trip) was named as stopping short. The trips that repeat an offset
    are those of the loops the offset does not follow: the write's own offset expression (or the local it names
    directly) is where their index is missing."""
    found = _offset_chain(source, write, axis)
    if found is None or write.line is None:
        return None
    names, chain, tree = found
    seen: dict[tuple, dict[str, int]] = {}
    loops: set[str] = set()
    for x in recs:
        if not x.is_write or x.line != write.line or x.target != write.target or x.offsets is None:
            continue
        key = tuple(x.offsets)
        if key in seen:
            loops |= {k for k, v in x.iteration.items() if seen[key].get(k) != v}
        else:
            seen[key] = dict(x.iteration)
    if not loops:
        return None
    indices: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and node.lineno <= write.line <= (node.end_lineno or node.lineno) \
                and isinstance(node.iter, ast.Call):
            lname = next((str(kw.value.value) for kw in node.iter.keywords
                          if kw.arg == "name" and isinstance(kw.value, ast.Constant)), None)
            idx = _loop_index(node)
            if lname is not None and idx is not None and any(k == lname or k.startswith(f"{lname}_") for k in loops):
                indices.append(idx)
    if not indices or any(i in names for i in indices):
        return None
    exprs = _offset_exprs(tree, write.line, axis)
    line = write.line
    if len(exprs) == 1 and isinstance(exprs[0], ast.Name):
        made = next((a for a in chain if any(isinstance(t, ast.Name) and t.id == exprs[0].id for t in a.targets)),
                    None)
        if made is not None:
            line = made.lineno
    return line, (f"the writes at line {write.line} land on the same offset on axis {axis} in different trips of "
                  f"the loop(s) over {', '.join(map(repr, sorted(set(indices))))}, whose index the offset never reads: "
                  f"the offset computed at line {line} leaves them out, and every trip writes over the first one's")


def _reshape_keeps_padding(shape: list[int], valid: list[int], out: list[int]) -> bool:
    """A reshape of a tile ``shape`` whose valid region is ``valid`` into ``out`` keeps that region a box: the axes from
    the first partial one on are unchanged (leading axes merged or split: ``[4, 4, 32]`` valid ``[4, 4, 8]`` to ``[16,
    32]``), or the valid elements are a prefix in memory order (every axis before the partial one of extent 1, every
    one after it whole)."""
    n = len(shape)
    k = next((j for j in range(n) if valid[j] < shape[j]), None)
    if k is None:
        return True
    tail = shape[k:]
    if len(out) >= len(tail) and list(out[len(out) - len(tail):]) == list(tail):
        return True
    if all(shape[j] == 1 for j in range(k)) and all(valid[j] == shape[j] for j in range(k + 1, n)):
        return True
    return _valid_box_after_reshape(shape, valid, out)


_BOX_CHECK_MAX = 1 << 22


def _valid_box_after_reshape(shape: list[int], valid: list[int], out: list[int]) -> bool:
    """The valid region of a tile ``shape`` (leading box ``valid``) is again a leading box of ``out`` after the reshape.

    Why (s40 review): a split of the padded axis whose valid extent is a multiple of the new inner extent keeps the
    padding outside the valid box (``[4, 8]`` valid ``[4, 4]`` to ``[4, 2, 4]``: valid ``[4, 1, 4]``) - an honest
    reshape the axis test above does not see, and naming it hid the real bug downstream. Decided on the element mask
    itself (tiles are small; a tile above ``_BOX_CHECK_MAX`` elements is taken as kept: no claim)."""
    size = int(np.prod(shape))
    if size > _BOX_CHECK_MAX or int(np.prod(out)) != size:
        return True
    mask = np.zeros(shape, dtype=bool)
    mask[tuple(slice(0, v) for v in valid)] = True
    m = mask.reshape(out)
    if not m.any():
        return True
    ext = []
    for ax in range(m.ndim):
        hit = np.nonzero(m.any(axis=tuple(a for a in range(m.ndim) if a != ax)))[0]
        ext.append(int(hit[-1]) + 1)
    box = np.zeros(out, dtype=bool)
    box[tuple(slice(0, e) for e in ext)] = True
    return bool(np.array_equal(m, box))


def scrambled_reshape(an: Analyzer, observed: Rec, evidence: list[str]) -> Rec | None:
    """A ``reshape`` upstream of the first departing value that reads a partly valid tile (padding on an inner axis)
    and lays it out so that the padding lands among the valid elements (``reshape(t, [32, 16])`` of a ``[16, 32]`` tile
    valid ``[16, 8]``, where a ``transpose`` was meant): nothing after it can be right, and the emulator's poison in the
    padding surfaces downstream as NaN or unwritten output rows, where the rules would name the write (s40, twelfth
    corpus: mhc_sinkhorn's final transpose written as a reshape). The earliest such reshape, or None."""
    from runtime.bisect._claims import lineage

    for seq in sorted(lineage(an, observed)):
        r = an.by_seq.get(seq)
        if r is None or r.op != "reshape" or not r.shape:
            continue
        ops = an.operand_recs(r)
        if len(ops) != 1:
            continue
        p = ops[0]
        if not p.shape or not p.valid_shape or len(p.valid_shape) != len(p.shape):
            continue
        shape = [int(x) for x in p.shape]
        valid = [max(0, min(int(v), int(x))) for v, x in zip(p.valid_shape, p.shape, strict=True)]
        out = [int(x) for x in r.shape]
        if int(np.prod(shape)) != int(np.prod(out)) or _reshape_keeps_padding(shape, valid, out):
            continue
        evidence.append(f"{r.where()} reshapes a tile {shape} whose valid region is {valid} into {out}: the padding "
                        f"after the valid elements of each row lands among the valid elements of the result, so "
                        f"every value computed from it departs (a transpose or a reshape of the valid region was "
                        f"meant?)")
        an.status[r.seq] = "mismatch"
        return r
    return None


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
            short = _short_step_axes(an, observed, v, tuple(lin))
            if short:
                evidence.append(f"the writes at line {observed.line} advance by less than the tile they write on axis "
                                f"{short} (they overlap) while the read at {v.where()} walks tile by tile: the "
                                "write's offsets are wrong (not scaled by the tile size?)")
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
    the view's own line or cannot be found. A ``valid_shape`` passed as one name (``valid_shape=vshape`` after
    ``vshape = [1, 1, valid_s, HALF]``) is followed to that list: its element on ``axis`` when that is a local name
    (``valid_s``), else the list's own line (the width was chosen there)."""
    if not source or view_line is None:
        return None
    found = _function_at(source, view_line)
    if found is None:
        return None
    tree, fn = found
    name = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == view_line and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "view":
            for kw in node.keywords:
                if kw.arg != "valid_shape":
                    continue
                value = kw.value
                if isinstance(value, ast.Name):
                    listed = _last_assignment(fn, value.id, view_line)
                    if listed is None or not isinstance(listed.value, ast.List | ast.Tuple) \
                            or len(listed.value.elts) <= axis:
                        return None
                    elt = listed.value.elts[axis]
                    inner = _last_assignment(fn, elt.id, listed.lineno) if isinstance(elt, ast.Name) else None
                    return (inner.lineno, elt.id) if inner is not None and isinstance(elt, ast.Name) \
                        else (listed.lineno, value.id)
                if isinstance(value, ast.List | ast.Tuple) and len(value.elts) > axis \
                        and isinstance(at := value.elts[axis], ast.Name):
                    name = at.id
    if name is None:
        return None
    best = _last_assignment(fn, name, view_line)
    return (best.lineno, name) if best is not None else None


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


def _short_step_axes(an: Analyzer, w: Rec, v: Rec, lin: tuple[int, ...]) -> list[int]:
    """Axes on which the write ``w`` and the read ``v`` disagree, the write statement's offsets advance by less than
    the tile it writes there (its writes overlap: ``[m_idx, t]`` for ``[m_idx, t * S_TILE]``) and the read's
    statement walks at least a tile per step: the write is the one off the grid. A read that overlaps as well (or
    a write that does not move) says nothing here."""
    offs = tuple(w.offsets or ())
    src = an.operand_recs(w)
    tile = src[0].shape if src and src[0].shape is not None else w.shape
    if len(offs) != len(lin) or tile is None or len(tile) != len(offs) or v.shape is None \
            or len(v.shape) != len(offs):
        return []
    ws = [x for x in an.recs if x.is_write and x.line == w.line and x.target == w.target
          and x.offsets is not None and len(x.offsets) == len(offs)]
    vs = [x for x in an.recs if x.op == "view" and x.line == v.line and x.source == v.source
          and x.offsets is not None and len(x.offsets) == len(offs)]

    def step(xs: list[Rec], a: int) -> int | None:
        o = sorted({x.offsets[a] for x in xs})  # type: ignore[index]
        return min(b - c for c, b in zip(o, o[1:], strict=False)) if len(o) > 1 else None

    out = []
    for a, (o, lo) in enumerate(zip(offs, lin, strict=True)):
        if o == lo:
            continue
        sw, sv = step(ws, a), step(vs, a)
        if sw is not None and sv is not None and sw < int(tile[a]) and sv >= int(v.shape[a]):
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


def _scalar_scaled(an: Analyzer, p: Rec) -> Rec | None:
    """The operand of ``p`` when ``p`` only applies a scalar constant to it (``mul`` / ``div`` with one recorded
    operand, no tensor read) and that operand matches a golden (the value ``p`` scales), else None."""
    if p.op not in ("mul", "div") or any(ref.get("kind") == "tensor" for ref in p.inputs or []):
        return None
    qs = an.operand_recs(p)
    if len(qs) != 1 or an.status.get(qs[0].seq) != "match" or qs[0].bshape != p.bshape:
        return None
    return qs[0]


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
        if len(ops) != 1:
            continue
        p = ops[0]
        scaled = ""
        if an.status.get(p.seq) != "match":
            # (``sum(mul(sq, 1 / H), 0)``: the operand is a matching value times a scalar, which has no golden of its
            # own - the RMSNorm's mean taken as a scaled sum; its reduction over the right axis is then a constant
            # multiple of the golden's, which the fit below accepts)
            q = _scalar_scaled(an, p)
            if q is None:
                continue
            scaled, p = f" (through {p.where()}, a scalar factor)", q
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
                evidence.append(f"{r.where()} reduces axis {a} of a value that matches golden {xname!r}{scaled}; reducing "
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
    # (a reshape's "element count of [400, 1] != [1, 8, 1, 1]": the first shape is the value reshaped, the second
    # the shape asked for; the reduction fits when over another axis it gives the element count asked for - s46,
    # bn_training_reduce's ``sum(v3_sq, dim=1, keepdim=True)`` for ``dim=0``, raised at the reshape of its result)
    count = "element count of" in (message or "")
    if not message or ("shape" not in message.lower() and "expand" not in message.lower() and not count):
        return None
    shapes = [tuple(int(x) for x in m.split(",")) for m in _SHAPE_RE.findall(message)]
    if len(shapes) < 2:
        return None
    by_seq = {r.seq: r for r in recs}
    for i, odd in enumerate(shapes):
        if count and i != 0:
            break
        others = [s for j, s in enumerate(shapes) if j != i and s != odd]
        if not others:
            continue
        src = next((r for r in reversed(recs) if r.shape is not None and not r.is_write
                    and _strip_ones(tuple(r.shape)) == _strip_ones(odd)), None)
        if src is not None and src.op == "unsqueeze" and src.line is not None and src.line != error_line:
            got = _unsqueeze_axis(src, by_seq, shapes, others)
            if got is not None:
                return src, got
            continue
        if src is None or src.op not in _REDUCERS or src.line is None or src.line == error_line:
            continue
        ops = [by_seq.get(int(x.get("seq", -1))) for x in src.inputs or [] if x.get("kind") == "record"]
        operand = next((o for o in ops if o is not None and o.shape is not None), None)
        if operand is None:
            continue
        s_in = tuple(operand.shape)
        fits = [a for a in range(len(s_in))
                if (k := s_in[:a] + (1,) + s_in[a + 1:]) != tuple(src.shape)
                and all((int(np.prod(k)) == int(np.prod(o))) if count else _broadcasts(k, o) for o in others)]
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


def _unsqueeze_axis(src: Rec, by_seq: dict[int, Rec], shapes: list[tuple[int, ...]],
                    others: list[tuple[int, ...]]) -> str | None:
    """Why the ``unsqueeze`` ``src`` made the operand that does not broadcast (or expand) - the new axis inserted at
    exactly one other place gives a shape of the same rank that does - or None.

    Why (s44, f16_ll_mask_broadcast): LLaDA2's group mask ``unsqueeze(group_mask, 1)`` for ``-1`` makes
    ``[B, 1, G]``; the ``expand_clone`` to ``[B, G, U]`` on the next line raised and was named, one line late. The
    reduction rule above reads an odd shape back to the op that made it; an inserted axis is the same slip."""
    ops = [by_seq.get(int(x.get("seq", -1))) for x in src.inputs or [] if x.get("kind") == "record"]
    operand = next((o for o in ops if o is not None and o.shape is not None), None)
    if operand is None or operand.shape is None or src.shape is None:
        return None
    s_in, made = tuple(operand.shape), tuple(src.shape)
    fits = [a for a in range(len(s_in) + 1)
            if (k := s_in[:a] + (1,) + s_in[a:]) != made
            and all(len(k) == len(o) and _broadcasts(k, o) for o in others)]
    if len(fits) != 1:
        return None
    a = fits[0]
    return (f"the kernel raised on shapes {[list(x) for x in shapes]}; the operand of shape {list(made)} is made at "
            f"{src.where()} by an unsqueeze of a {list(s_in)} value; the new axis at {a} "
            f"({list(s_in[:a] + (1,) + s_in[a:])}) fits: the unsqueeze's axis is the bug, not the line that raised")


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
    # a call through a local bound to the function (``kernel = my_kernel_fp32`` in one branch, then ``kernel(...)``:
    # a wrapper that dispatches on dtype) is a call of it too
    aliases = {t.id for a in ast.walk(tree) if isinstance(a, ast.Assign)
               and ast.unparse(a.value).rsplit(".", 1)[-1] == fn.name for t in a.targets if isinstance(t, ast.Name)}
    out: list[tuple[ast.expr, int]] = []
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and (ast.unparse(call.func).rsplit(".", 1)[-1] == fn.name
                                           or (isinstance(call.func, ast.Name) and call.func.id in aliases)):
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
    if not source or error_line is None or ("shape" not in (message or "").lower()
                                             and "element count of" not in (message or "")):
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
                twin = _twin_reduction(tree, start, assigns, reductions, line, red)
                if twin is not None:
                    return line, (f"the kernel raised at line {error_line} ({message.strip()[:120]}); the value it "
                                  f"reshapes or combines comes from line {line}, a {kind} of {operand} over axis "
                                  f"{axis}; the same statement on line {twin[1]} ran on the {kind} of line {twin[0]}, "
                                  f"which reduces over axis {twin[2]}: the axis of line {line} is the bug")
                other_axis = _axis_the_shapes_want(message, axis) if keep else None
                if other_axis is not None:
                    return line, (f"the kernel raised at line {error_line} on shapes that do not fit "
                                  f"({message.strip()[:120]}); the operand comes from line {line}, a {kind} of "
                                  f"{operand} over axis {axis} with keepdim: the shapes in the error say that a "
                                  f"{kind} over axis {other_axis} would have made the shape it meets")
            frontier.extend((n, line) for n in sorted(reads(value)))
            continue
        if fn is not None:
            for arg, at_line in call_arguments(tree, fn, name):
                frontier.extend((n, at_line) for n in sorted(reads(arg)))
    return None


def _block_of(fn: ast.FunctionDef, stmt: ast.stmt) -> list[ast.stmt] | None:
    """The statement list (a body, an ``else``) of ``fn`` that holds ``stmt`` itself."""
    for n in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list) and any(x is stmt for x in block):
                return block
    return None


def discarded_combination(source: str | None, line: int | None) -> tuple[int, str] | None:
    """A running-state update that stores the tile's own value where the combination of state and tile was meant:
    ``mi[:] = m_ij`` after ``mi_new = maximum(mi, m_ij)`` in the same block, ``mi_new`` never stored into ``mi``
    (gqa_decode_attn, session 47). Returns (that line, why) or None.

    Why: an online reduction's golden names only its end result (softmax over all keys), so no replay can set the
    state's values and the departure is left among every op of the loop body. The source says it: the block
    computes a value from the state and the stored value together - the state's next value - and then discards it
    for one of its parts; the state degenerates to the last tile's own value. Honest updates store that combined
    value (``mi[:] = mi_new``), and a first-trip initialisation (``mi[:] = m_ij`` in the ``is_loop_begin`` branch)
    computes nothing from the state before it."""
    if not source or line is None:
        return None
    found = _function_at(source, line)
    if found is None:
        return None
    fn = found[1]
    write = next((n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n.lineno == line
                  and _written_value(n) is not None), None)
    w = _written_value(write) if write is not None else None
    if write is None or w is None or not isinstance(w[1], ast.Name):
        return None
    state, part = w[0], w[1].id
    block = _block_of(fn, write)
    if block is None or state == part:
        return None
    feeds = _last_assignment(fn, part, line)
    if feeds is not None and state in _operand_names(feeds.value):
        return None  # the stored value already combines the state (``mi[:] = mi_new``)
    stored = _names_stored_into(fn, state, "")
    for st in block:
        if st is write:
            break
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            continue
        combined = st.targets[0].id
        if combined in (state, part) or combined in stored or not {state, part} <= _operand_names(st.value):
            continue
        return line, (f"line {line} stores {part!r} into the running state {state!r}, while line {st.lineno} of the "
                      f"same block computes {combined!r} from {state!r} and {part!r} together and nothing stores it "
                      f"into {state!r}: the state's update was meant to store {combined!r} (the state now holds the "
                      "last tile's own value)")
    return None


def misordered_reshape(source: str | None, line: int | None) -> tuple[int, str] | None:
    """The line to name and why, when the ``reshape`` on ``line`` lists its operand's own axes out of order; None
    otherwise (parsed, never run). The line is the reshape's, or - when its operand reaches it through a bare alias
    (``c = c``: what is left of a dropped ``c = transpose(c, 1, 0)``) - the alias'.

    A reshape keeps memory order: ``reshape(x, [n, h * w, c])`` where ``n, c, h, w = x.shape`` does not move the
    channels last, it reads the same memory under other extents - a permute (transpose) written as a reshape, or a
    layout misread (NHWC for NCHW). Named only from the source: every dim of the target that names one of the
    operand's axes (through ``a, b = x.shape`` or ``a = x.shape[k]`` in the same function) is read in order, and two
    of them go backwards (s46: bn_training_reduce)."""
    if not source or line is None or (found := _function_at(source, line)) is None:
        return None
    _tree, fn = found
    calls = [n for n in _reshapes_at(fn, line) if isinstance(n.args[0], ast.Name)]
    for call in calls:
        arg0, dims = call.args[0], call.args[1]
        assert isinstance(arg0, ast.Name) and isinstance(dims, ast.List | ast.Tuple)
        src = arg0.id
        axes: dict[str, int] = {}
        alias: int | None = None
        for a in ast.walk(fn):
            if not isinstance(a, ast.Assign) or a.lineno >= call.lineno or len(a.targets) != 1:
                continue
            t, v = a.targets[0], a.value
            if isinstance(t, ast.Tuple) and isinstance(v, ast.Attribute) and v.attr == "shape" \
                    and isinstance(v.value, ast.Name) and v.value.id == src:
                axes.update({e.id: k for k, e in enumerate(t.elts) if isinstance(e, ast.Name)})
            elif isinstance(t, ast.Name) and (read := _shape_read(v)) is not None and read[0] == src:
                axes[t.id] = read[1]
        if not axes:
            # (or the extents the operand was made with: ``c = view(x, [tile_t, hc * hc], ..)`` then
            # ``reshape(c, [hc, hc, tile_t])`` - the transpose between them dropped; mhc_sinkhorn, s46)
            made = _last_assignment(fn, src, call.lineno)
            for _ in range(3):  # (through bare aliases: ``c = c`` is what is left of a dropped ``transpose(c, 1, 0)``)
                if made is None or not isinstance(made.value, ast.Name):
                    break
                alias = alias or made.lineno
                made = _last_assignment(fn, made.value.id, made.lineno)
            if made is not None and isinstance(made.value, ast.Call) and isinstance(made.value.func, ast.Attribute) \
                    and made.value.func.attr in ("view", "reshape") and len(made.value.args) >= 2 \
                    and isinstance(made.value.args[1], ast.List | ast.Tuple):
                for k, e in enumerate(made.value.args[1].elts):
                    for x in ast.walk(e):
                        if isinstance(x, ast.Name) and x.id not in axes:
                            axes[x.id] = k
            if len(set(axes.values())) < 2:
                continue
        order = [axes[n.id] for e in dims.elts for n in sorted(
            (x for x in ast.walk(e) if isinstance(x, ast.Name) and x.id in axes), key=lambda x: x.col_offset)]
        back = next((i for i in range(len(order) - 1) if order[i] > order[i + 1]), None)
        if back is not None:
            names = {k: n for n, k in axes.items()}
            why = (f"line {line} reshapes {src} to {ast.unparse(dims)}, listing {src}'s axes "
                   f"{names[order[back]]!r} (axis {order[back]}) before {names[order[back + 1]]!r} (axis "
                   f"{order[back + 1]}): a reshape keeps memory order and moves no axis - a transpose written as a "
                   "reshape, or the layout misread")
            if alias is not None:
                return alias, why + (f"; its operand reaches it through the bare alias on line {alias}, what is left "
                                     "of the re-layout that was meant there")
            return line, why
    return None


def _shape_of_statement(node: ast.AST) -> str:
    """``node``'s syntax with every name and constant blanked (two statements that differ only in the values they
    name have the same form)."""
    class _Blank(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            return ast.copy_location(ast.Name(id="_", ctx=n.ctx), n)

        def visit_Attribute(self, n: ast.Attribute) -> ast.AST:
            self.generic_visit(n)
            return n

    import copy

    return ast.dump(_Blank().visit(copy.deepcopy(node)), annotate_fields=False)


def _twin_reduction(tree: ast.AST, failing: ast.stmt, assigns: list[tuple[int, str, ast.expr]],
                    reductions: list[tuple[int, tuple[str, str, str | None, bool | None]]], line: int,
                    red: tuple[str, str, str | None, bool | None]) -> tuple[int, int, str] | None:
    """(line, twin statement's line, axis) of the one other reduction of the same kind and ``keepdim`` over another
    axis whose result feeds an earlier statement of the same form as the ``failing`` one, or None.

    Why (s46): bn_training_reduce reduces the values (line 105) and their squares (line 106) the same way and
    reshapes both results the same way (lines 109, 110); with line 106 over ``dim=1`` the reshape of line 110 raised
    while its twin on line 109 had run: the statement is right (it ran on the twin), the value's reduction is not."""
    kind, _operand, axis, keep = red
    fn = _enclosing_function(tree, line)
    if fn is None:
        return None
    twins = [(ln, r2) for ln, r2 in reductions if ln != line and r2[0] == kind and r2[3] == keep
             and r2[2] is not None and r2[2] != axis and fn.lineno <= ln <= (fn.end_lineno or fn.lineno)]
    if len(twins) != 1:
        return None
    tl, (_k, _o, taxis, _kp) = twins[0]
    tname = next((t for ln, t, _v in assigns if ln == tl), None)
    if tname is None:
        return None
    form = _shape_of_statement(failing)
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and type(node) is type(failing) and node.lineno < failing.lineno \
                and tname in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} \
                and _shape_of_statement(node) == form:
            return tl, node.lineno, str(taxis)
    return None


def _written_value(node: ast.AST) -> tuple[str, ast.expr] | None:
    """(destination name, written value) of a write statement: ``pypto.assemble(v, offs, dst)``, ``dst[...] = v``,
    ``dst.move(v)``; None for anything else."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        short = ast.unparse(call.func).rsplit(".", 1)[-1]
        if short == "assemble" and len(call.args) >= 3 and isinstance(call.args[2], ast.Name):
            return call.args[2].id, call.args[0]
        if short == "move" and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                and call.args:
            return call.func.value.id, call.args[0]
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
            and isinstance(node.targets[0].value, ast.Name):
        return node.targets[0].value.id, node.value
    return None


def _upstream(fn: ast.FunctionDef, names: Iterable[str], before: int) -> Iterator[ast.Assign]:
    """The assignments that feed ``names`` read at line ``before``, breadth first: the last assignment of each name
    before that line, then those of the names its value reads (at most ~200 visits)."""
    frontier = [(x, before) for x in sorted(names)]
    seen: set[tuple[str, int]] = set()
    while frontier:
        name, line = frontier.pop(0)
        if (name, line) in seen or len(seen) > 200:
            continue
        seen.add((name, line))
        a = _last_assignment(fn, name, line)
        if a is None:
            continue
        yield a
        frontier.extend((x, a.lineno) for x in sorted(_names(a.value)))


def _failing_statement(source: str, error_line: int) -> tuple[ast.FunctionDef, list[ast.stmt], ast.stmt] | None:
    """(the function enclosing ``error_line``, its simple statements, the innermost one spanning that line) of a
    kernel source that raised, or None when the source does not parse or no statement spans the line."""
    got = _failing_in_module(source, error_line)
    return None if got is None else got[1:]


def _failing_in_module(source: str, error_line: int
                       ) -> tuple[ast.Module, ast.FunctionDef, list[ast.stmt], ast.stmt] | None:
    """`_failing_statement` with the parsed module first (a rule that also reads the module parses once)."""
    found = _function_at(source, error_line)
    if found is None:
        return None
    tree, fn = found
    stmts = [n for n in ast.walk(fn) if isinstance(n, ast.stmt) and not isinstance(
        n, ast.FunctionDef | ast.For | ast.If | ast.While | ast.With)]
    failing = [n for n in stmts if n.lineno <= error_line <= (n.end_lineno or n.lineno)]
    if not failing:
        return None
    return tree, fn, stmts, min(failing, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)


def _dtype_failure(source: str | None, error_line: int | None, message: str
                   ) -> tuple[ast.Module, ast.FunctionDef, list[ast.stmt], ast.stmt] | None:
    """`_failing_in_module` of a kernel that raised on dtypes (``dtype`` in its message): the shared start of the
    dtype rules; None for any other failure or a source that does not say."""
    if not source or error_line is None or "dtype" not in (message or "").lower():
        return None
    return _failing_in_module(source, error_line)


_DT_RE = re.compile(r"\bDT_[A-Z0-9_]+\b")
_PASS_ON = ("view", "reshape", "transpose", "clone")
"""calls whose result keeps their first argument's dtype (followed back to find a tile's dtype)"""


def _declared_dtype_of(fn: ast.FunctionDef, tree: ast.Module, name: str, before: int,
                       depth: int = 0) -> tuple[str, ast.Assign | None] | None:
    """The dtype the kernel source gives local ``name`` at line ``before`` - (``DT_...``, the cast assignment that
    chose it or None) - followed back through aliases (``k_2d = k``), views / reshapes of another local, a
    ``pypto.tensor(.., DT_X, ..)`` declaration and the annotation of a kernel parameter
    (``k: pypto.Tensor([..], pypto.DT_BF16)``); None where the source does not say (a computed value)."""
    if depth > 12:
        return None
    a = _last_assignment(fn, name, before)
    if a is None:
        arg = next((x for x in fn.args.args + fn.args.kwonlyargs if x.arg == name), None)
        if arg is None or arg.annotation is None:
            return None
        found = _DT_RE.findall(ast.unparse(arg.annotation))
        return (found[-1], None) if len(set(found)) == 1 else None
    v = a.value
    if isinstance(v, ast.Name):
        return _declared_dtype_of(fn, tree, v.id, a.lineno, depth + 1)
    if not isinstance(v, ast.Call):
        return None
    callee = ast.unparse(v.func).rsplit(".", 1)[-1]
    if callee == "cast" and len(v.args) >= 2:
        found = _DT_RE.findall(ast.unparse(v.args[1]))
        return (found[0], a) if len(found) == 1 else None
    if callee in ("tensor", "Tensor", "full"):
        found = _DT_RE.findall(ast.unparse(v))
        return (found[0], None) if len(set(found)) == 1 else None
    if callee in _PASS_ON and v.args and isinstance(v.args[0], ast.Name):
        return _declared_dtype_of(fn, tree, v.args[0].id, a.lineno, depth + 1)
    return None


def static_cast_dtype_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised on operands of different dtypes (``Non-FP8 inputs require identical dtypes`` from a
    matmul): the cast that gave one operand its dtype, when the source gives every operand of the failing call a
    dtype and exactly one operand, made by a ``pypto.cast`` to a dtype the kernel uses nowhere else (no parameter, no
    other cast), disagrees with the others (``ds_bf16 = cast(ds_ij, DT_FP16)`` then ``matmul(ds_bf16, k_j)`` where
    ``k_j`` is a view of a BF16 parameter: the cast chose the wrong dtype, the matmul only meets it), and why; None
    otherwise.

    Why (s42): the older missing-cast rule followed the operands' names back through the cast into the helper
    that computed its input and named a line there (a miss); the dtype the kernel declares is in the source."""
    got = _dtype_failure(source, error_line, message)
    if got is None:
        return None
    tree, fn, _stmts, start = got
    for call in (n for n in ast.walk(start) if isinstance(n, ast.Call)):
        names = [x.id for x in call.args if isinstance(x, ast.Name)]
        if len(names) < 2:
            continue
        typed = [(nm, _declared_dtype_of(fn, tree, nm, start.lineno)) for nm in names]
        if any(t is None for _nm, t in typed):
            continue
        kinds = {t[0] for _nm, t in typed if t is not None}
        if len(kinds) != 2:
            continue
        odd = [(nm, t) for nm, t in typed if t is not None and t[1] is not None
               and sum(1 for _x, u in typed if u is not None and u[0] == t[0]) == 1]
        others = {t[0] for _nm, t in typed if t is not None} - {t[0] for _nm, t in odd}
        if len(odd) != 1 or len(others) != 1:
            continue
        nm, (dt, made) = odd[0]
        assert made is not None
        # the cast's dtype must be one the kernel uses nowhere else (no parameter is declared with it, no other cast
        # makes it): a kernel that computes in FP32 and meets ``af = cast(at, FP32)`` beside a bare alias ``bf = bt``
        # of an FP16 input lost the other cast (s39's castpair: the alias rule names it), this cast is right
        used = set(_DT_RE.findall(" ".join(ast.unparse(a.annotation) for a in fn.args.args + fn.args.kwonlyargs
                                           if a.annotation is not None)))
        for c in ast.walk(fn):
            if isinstance(c, ast.Call) and _is_cast(c) and c is not made.value and len(c.args) >= 2:
                used |= set(_DT_RE.findall(ast.unparse(c.args[1])))
        if dt in used:
            continue
        return made.lineno, (f"the kernel raised at line {error_line} ({message.strip()[:120]}): its operand {nm!r} "
                             f"was cast to {dt} at line {made.lineno}, the other operand(s) are "
                             f"{', '.join(sorted(others))} as the source declares them: that cast chose the dtype")
    return None


def static_dtype_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised on mismatched dtypes: the statement, upstream of the failing line, where the odd
    dtype was chosen, and why (kernel source parsed, never run); None when the source does not say.

    Two cases, both a place other than where the dtypes meet:
    - a write into a local tensor whose declared dtype is not the dtype of what is written into it, when several
      statements write it (``mi = pypto.tensor([..], pypto.DT_BF16, "mi")``, then ``mi[:] = m_ij`` and
      ``mi[:] = mi_new``, both float32): one declaration disagrees with every write - the declaration is named;
    - a statement that computes with the rounded copy of a value made to be written out (``c_out_t = cast(c, FP16)``
      then ``assemble(c_out_t, .., c_out)``) while the value itself is at hand (``rms_norm(c_out_t)`` for
      ``rms_norm(c)``): rounding at the wrong step; the statement reading the copy is named.
    """
    got = _dtype_failure(source, error_line, message)
    if got is None:
        return None
    _tree, fn, stmts, start = got
    writes = [(n, w) for n in stmts if (w := _written_value(n)) is not None]
    params = {a.arg for a in fn.args.args}
    dest = _written_value(start)
    if dest is not None and "destination" in message.lower():
        decl = _last_assignment(fn, dest[0], start.lineno)
        into = {ast.unparse(w[1]) for _n, w in writes if w[0] == dest[0]}
        if decl is not None and isinstance(decl.value, ast.Call) and \
                ast.unparse(decl.value.func).rsplit(".", 1)[-1] in ("tensor", "Tensor") and len(into) >= 2:
            return decl.lineno, (f"the kernel raised at line {error_line} writing a value of another dtype into the "
                                 f"local tensor {dest[0]!r} ({message.strip()[:120]}); {len(into)} statements write "
                                 f"into it and its declaration at line {decl.lineno} gives its dtype: the "
                                 "declaration is the one that disagrees")
    # a write whose value was cast, on the statement that made it, to the dtype the message names as the source's:
    # that cast chose the dtype (fifth gym corpus, s25: `r = cast(r, DT_FP16)` then `assemble(r, .., out)` into a
    # BF16 output raised at the assemble)
    m = _SRC_DTYPE_RE.search(message or "")
    if dest is not None and m is not None and isinstance(dest[1], ast.Name):
        made = _last_assignment(fn, dest[1].id, start.lineno)
        if made is not None and _is_cast(made.value) and len(made.value.args) >= 2 and \
                ast.unparse(made.value.args[1]).rsplit(".", 1)[-1] == m.group(1):  # type: ignore[attr-defined]
            return made.lineno, (f"the kernel raised at line {error_line} ({message.strip()[:120]}); the value it "
                                 f"writes was cast to {m.group(1)} at line {made.lineno}: that cast chose the dtype "
                                 f"the destination ({m.group(2)}) does not take")
    # the rounded copies made to be written out: name -> (line of the cast, the value it rounds)
    rounded: dict[str, tuple[int, str]] = {}
    for n in stmts:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and _is_cast(n.value) and isinstance(arg := n.value.args[0], ast.Name):  # type: ignore[attr-defined]
            name = n.targets[0].id
            if any(w[0] in params and isinstance(w[1], ast.Name) and w[1].id == name for _s, w in writes):
                rounded[name] = (n.lineno, arg.id)
    if not rounded:
        return None
    for a in _upstream(fn, _names(start), start.lineno):
        hit = sorted(n for n in _names(a.value) if n in rounded and rounded[n][0] < a.lineno)
        if hit and not _is_cast(a.value):
            line, orig = rounded[hit[0]]
            return a.lineno, (f"the kernel raised at line {error_line} on mixed dtypes ({message.strip()[:120]}); "
                              f"line {a.lineno} computes with {hit[0]!r}, the copy of {orig!r} rounded at line {line} "
                              f"to be written out, where {orig!r} itself was meant: rounding at the wrong step")
    return None


def static_alias_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised on mixed dtypes: an operand of the failing statement bound by a bare alias
    (``states_tile = states_tile_half``) while another operand is computed from a ``cast`` (``z4_tile =
    pypto.cast(z4_tile_half, DT_FP32)``): the alias is where the cast was dropped, and why; None otherwise (parsed,
    never run).

    A bare alias renames a value and changes nothing, so in a kernel it is almost always the remains of a cast (or
    another op) deleted from the line; the statement that raised only meets the two dtypes (s39: sum_lstm)."""
    if not source or error_line is None or "dtype" not in (message or "").lower():
        return None
    found = _function_at(source, error_line)
    if found is None:
        return None
    tree, fn = found
    stmt = next((n for n in ast.walk(fn) if isinstance(n, ast.Assign | ast.Expr) and n.lineno <= error_line
                 <= (n.end_lineno or n.lineno)), None)
    if stmt is None:
        return None
    operands = sorted(_names(stmt.value) - {"pypto"})

    def casts_upstream(name: str, depth: int = 3) -> bool:
        a = _last_assignment(fn, name, error_line)
        if a is None or depth == 0:
            return False
        if any(_is_cast(n) for n in ast.walk(a.value)):
            return True
        return any(casts_upstream(n, depth - 1) for n in _names(a.value) - {"pypto", name})

    def cast_of(name: str, depth: int = 3) -> ast.Call | None:
        a = _last_assignment(fn, name, error_line)
        if a is None or depth == 0:
            return None
        c = next((x for x in ast.walk(a.value) if _is_cast(x)), None)
        if isinstance(c, ast.Call):
            return c
        return next((c for x in sorted(_names(a.value) - {"pypto", name}) if (c := cast_of(x, depth - 1))), None)

    for n in operands:
        a = _last_assignment(fn, n, error_line)
        if a is None or not isinstance(a.value, ast.Name) or len(a.targets) != 1:
            continue
        others = [o for o in operands if o != n and casts_upstream(o)]
        cast = cast_of(others[0]) if others else None
        if cast is not None and cast.args:
            # the alias' own dtype, where the kernel declares it, against what the other operand was cast from:
            # an fp32 input passed on bare next to an fp16 one cast to fp16 (``cast(at, DT_FP16)``, meant DT_FP32)
            # needs no cast - the cast is the wrong line, not the alias (s39b)
            mine = _declared_dtype(fn, a.value.id, a.lineno)
            theirs = _declared_dtype(fn, cast.args[0].id, cast.lineno) if isinstance(cast.args[0], ast.Name) \
                else None
            if mine is not None and theirs is not None and mine != theirs:
                to = cast.args[1].attr if len(cast.args) > 1 and isinstance(cast.args[1], ast.Attribute) else None
                if to == theirs:  # (a cast to the dtype its operand already has changes nothing: that is the slip)
                    return cast.lineno, (f"the kernel raised at line {error_line} on mixed dtypes "
                                         f"({message.strip()[:120]}); its operand {n!r} is {mine} as declared (a bare "
                                         f"alias needs no cast), while {others[0]!r} comes from a cast at line "
                                         f"{cast.lineno} of a {theirs} value to {to}, which changes nothing: that "
                                         "cast's target dtype is wrong")
                continue
        if others:
            return a.lineno, (f"the kernel raised at line {error_line} on mixed dtypes ({message.strip()[:120]}); "
                              f"its operand {n!r} is bound at line {a.lineno} to {a.value.id!r} unchanged, while "
                              f"{others[0]!r} is computed from a cast: the cast of {a.value.id!r} is missing there")
        # (s46) the other operand is declared in another dtype (a kernel parameter, not a cast): llada2_gate_select's
        # ``tile_x_fp32 = tile_x`` (BF16) meeting ``gate_weight`` (DT_FP32) in the router matmul
        mine = _declared_dtype(fn, a.value.id, a.lineno)
        declared = [(o, d) for o in operands if o != n and (d := _declared_dtype(fn, o, error_line)) is not None]
        if mine is not None and declared and all(d != mine for _o, d in declared):
            o, d = declared[0]
            return a.lineno, (f"the kernel raised at line {error_line} on mixed dtypes ({message.strip()[:120]}); "
                              f"its operand {n!r} is bound at line {a.lineno} to {a.value.id!r} ({mine} as declared) "
                              f"unchanged, while {o!r} is {d}: the cast of {a.value.id!r} to {d} is missing there")
    return None


def _declared_dtype(fn: ast.FunctionDef, name: str, before: int, depth: int = 4) -> str | None:
    """The ``DT_*`` dtype ``name`` holds where the kernel says it: a parameter's ``pypto.Tensor([..], pypto.DT_X)``
    annotation, a ``pypto.cast(.., pypto.DT_X)``, followed back through bare aliases and views; None when not said."""
    for arg in fn.args.args + fn.args.kwonlyargs:
        if arg.arg == name and arg.annotation is not None:
            dt = [n.attr for n in ast.walk(arg.annotation) if isinstance(n, ast.Attribute) and n.attr.startswith("DT_")]
            return dt[0] if len(dt) == 1 else None
    a = _last_assignment(fn, name, before)
    if a is None or depth == 0:
        return None
    v = a.value
    if isinstance(v, ast.Name):
        return _declared_dtype(fn, v.id, a.lineno, depth - 1)
    if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name):  # (a slice keeps its tensor's dtype)
        return _declared_dtype(fn, v.value.id, a.lineno, depth - 1)
    if isinstance(v, ast.Call):
        f = ast.unparse(v.func).rsplit(".", 1)[-1]
        if f == "cast" and len(v.args) >= 2 and isinstance(v.args[1], ast.Attribute):
            return v.args[1].attr
        if f == "view" and v.args and isinstance(v.args[0], ast.Name):
            return _declared_dtype(fn, v.args[0].id, a.lineno, depth - 1)
    return None


_SRC_DTYPE_RE = re.compile(r"source dtype (DT_\w+) != destination dtype (DT_\w+)")
_UNWRITTEN_RE = re.compile(r"[Tt]ensor '(\w+)' is missing Alloc|'(\w+)' is read (?:but|before it is) (?:never )?written")


def static_unwritten_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised because it reads a local tensor nothing wrote (the emulator's "missing Alloc"):
    when every statement that writes that tensor sits inside one Python ``for`` over ``range(...)`` (a loop the
    trace unrolls), that loop's line and why - its trip count is what left the tensor (or part of it) unwritten
    (``for i in range(n - 1)`` for ``range(n)``); None otherwise (a write that is missing altogether, or one in
    straight-line code, stays with the line that raised)."""
    m = _UNWRITTEN_RE.search(message or "")
    if not source or error_line is None or m is None:
        return None
    name = m.group(1) or m.group(2)
    found = _function_at(source, error_line)
    if found is None:
        return None
    fn = found[1]
    writes = [n for n in ast.walk(fn) if isinstance(n, ast.stmt) and (w := _written_value(n)) is not None
              and w[0] == name and n.lineno < error_line]
    if not writes:
        return None
    loops = {n.lineno: n for n in ast.walk(fn) if isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
             and ast.unparse(n.iter.func) == "range"}

    def loop_of(s: ast.stmt) -> ast.For | None:
        inside = [lp for lp in loops.values() if lp.lineno < s.lineno <= (lp.end_lineno or lp.lineno)]
        return max(inside, key=lambda lp: lp.lineno) if inside else None

    found = {loop_of(w) for w in writes}
    if len(found) != 1 or None in found:
        return None
    lp = found.pop()
    assert lp is not None
    return lp.lineno, (f"the kernel raised at line {error_line}: it reads the local tensor {name!r} where nothing "
                       f"wrote it ({message.strip()[:120]}); every write into {name!r} is inside the loop at line "
                       f"{lp.lineno} ({ast.unparse(lp.iter)}): its trip count left it unwritten")


_UNINIT_RE = re.compile(r"has no data yet at run time|is missing Alloc|is read (?:but|before it is) (?:never )?written")


def static_branch_guard_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised because it reads a local tensor nothing wrote yet: when the raising statement sits in
    the ``else`` branch of an ``if`` inside a loop, whose other branch writes that very tensor (``if t == 0:
    tsum[:] = ts`` / ``else: tsum[:] = add(tsum, ts)``) and whose test reads that loop's index, the ``if``'s line and
    why - the accumulating branch ran before the initialising one ever did, so the test does not pick the loop's
    first trip (``t == 1`` for ``t == 0``). None otherwise (the raising line stays named)."""
    if not source or error_line is None or not _UNINIT_RE.search(message or ""):
        return None
    found = _function_at(source, error_line)
    if found is None:
        return None
    fn = found[1]
    for node in ast.walk(fn):
        if not isinstance(node, ast.If) or not node.orelse:
            continue
        inside = [s for s in node.orelse if s.lineno <= error_line <= (s.end_lineno or s.lineno)]
        if not inside:
            continue
        raised = next((s for s in ast.walk(inside[0]) if isinstance(s, ast.stmt)
                       and s.lineno <= error_line <= (s.end_lineno or s.lineno) and _written_value(s) is not None),
                      None)
        if raised is None:
            continue
        dst, value = _written_value(raised)  # type: ignore[misc]
        if dst not in _names(value):
            continue  # (the raising write does not read what it writes: no accumulation)
        if _uninit_other(fn, message, dst, value, raised.lineno):
            return None  # another local the raising line reads was never written: that one has no data, not ``dst``
        init = [s for s in node.body for w in [_written_value(s)] if w is not None and w[0] == dst]
        if not init:
            continue
        loops = [lp for lp in ast.walk(fn) if isinstance(lp, ast.For) and isinstance(lp.target, ast.Name)
                 and lp.lineno < node.lineno <= (lp.end_lineno or lp.lineno)]
        idx = {lp.target.id for lp in loops if isinstance(lp.target, ast.Name)}
        if not idx & _names(node.test):
            continue
        skipped = _loop_skips_tested_trip(loops, node.test)
        if skipped is not None:
            lp, start, value_tested = skipped
            return lp.lineno, (f"the kernel raised at line {error_line}: it accumulates into the local tensor {dst!r} "
                               f"before anything wrote it; the branch at line {init[0].lineno} that initialises "
                               f"{dst!r} is taken when `{ast.unparse(node.test)}` holds, but the loop at line "
                               f"{lp.lineno} starts at {start}, so its index is never {value_tested}: the loop's range "
                               f"skips the trip the branch initialises on")
        return node.lineno, (f"the kernel raised at line {error_line}: it accumulates into the local tensor {dst!r} "
                             f"before anything wrote it; the branch at line {init[0].lineno} that initialises "
                             f"{dst!r} is taken when `{ast.unparse(node.test)}` holds, which was not so on the loop's "
                             f"first trip: the test at line {node.lineno} does not pick the first trip")
    return None


_NAMED_TENSOR_RE = re.compile(r"Tensor '(\w+)'")


def _uninit_other(fn: ast.FunctionDef, message: str, dst: str, value: ast.expr, line: int) -> bool:
    """Whether the tensor without data at the raising line is another one than the accumulated ``dst``: the error
    names it (``Tensor 'sc' is missing Alloc``), or - unnamed - another local ``pypto.tensor`` the raising line reads
    has no write anywhere in the kernel before that line.

    Why (s40 review): ``else: acc[:] = add(acc, mul(ts, sc))`` with ``sc`` never written raised there too, and the
    first-trip ``if`` was named although its test and ``acc``'s initialisation were right."""
    m = _NAMED_TENSOR_RE.search(message or "")
    if m is not None:
        return m.group(1) != dst
    locals_ = {t.id for node in ast.walk(fn) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
               and ast.unparse(node.value.func).rsplit(".", 1)[-1] == "tensor"
               for t in node.targets if isinstance(t, ast.Name)}
    written = {w[0] for node in ast.walk(fn) if isinstance(node, ast.stmt) and node.lineno < line
               for w in [_written_value(node)] if w is not None}
    return any(n in locals_ and n not in written for n in _names(value) - {dst})


def _loop_skips_tested_trip(loops: list[ast.For], test: ast.expr) -> tuple[ast.For, int, int] | None:
    """``(loop, its first index, the tested index)`` when ``test`` is ``i == c`` on a loop ``for i in range(a, ..)``
    whose literal start ``a`` is above ``c``: the branch can never be taken, and the loop's range - not the test -
    dropped the trip (``range(1, n)`` with ``if t == 0``; s40 review). None otherwise (a test naming a trip the loop
    has, ``t == 1`` on ``range(n)``, is the test's fault)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant)
            and type(test.comparators[0].value) is int):
        return None
    c = int(test.comparators[0].value)
    for lp in loops:
        if not (isinstance(lp.target, ast.Name) and lp.target.id == test.left.id and isinstance(lp.iter, ast.Call)
                and isinstance(lp.iter.func, ast.Name) and lp.iter.func.id == "range" and len(lp.iter.args) >= 2):
            continue
        a = lp.iter.args[0]
        step = lp.iter.args[2] if len(lp.iter.args) > 2 else None
        if isinstance(a, ast.Constant) and type(a.value) is int and a.value > c \
                and (step is None or (isinstance(step, ast.Constant) and type(step.value) is int and step.value > 0)):
            return lp, int(a.value), c
    return None


_CONSUMED_RE = re.compile(r"'(\w+)' was consumed by an earlier whole-tensor move")


def _is_whole_move(node: ast.stmt, name: str) -> bool:
    """``dst[:] = name`` / ``dst[...] = name`` (every axis whole) or ``dst.move(name)``: a move that consumes ``name``."""
    w = _written_value(node)
    if w is None or not (isinstance(w[1], ast.Name) and w[1].id == name):
        return False
    if isinstance(node, ast.Expr):
        return ast.unparse(node.value.func).rsplit(".", 1)[-1] == "move"  # type: ignore[attr-defined]
    if not isinstance(node, ast.Assign):
        return False
    sl = node.targets[0].slice  # type: ignore[attr-defined]
    parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    return all(isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None or
               isinstance(p, ast.Constant) and p.value is Ellipsis for p in parts)


def _names_stored_into(fn: ast.FunctionDef, dest: str, skip: str) -> set[str]:
    """The names the writes into ``dest`` in ``fn`` read, other than writes of the bare ``skip``, each followed one
    assignment back (``mi[:] = mi_new`` with ``mi_new = maximum(mi, m_ij)``: ``{mi_new, mi, m_ij}``)."""
    assigned: dict[str, list[ast.expr]] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            assigned.setdefault(n.targets[0].id, []).append(n.value)
    out: set[str] = set()
    for n in ast.walk(fn):
        w = _written_value(n) if isinstance(n, ast.stmt) else None
        if w is None or w[0] != dest or isinstance(w[1], ast.Name) and w[1].id == skip:
            continue
        for x in _operand_names(w[1]):
            out.add(x)
            for v in assigned.get(x, []):
                out.update(_operand_names(v))
    return out


def _operand_names(expr: ast.expr) -> set[str]:
    """The names an expression reads as values (not ``pypto`` of ``pypto.maximum``, not a called function)."""
    skip = {id(n.value) for n in ast.walk(expr) if isinstance(n, ast.Attribute)} \
        | {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and id(n) not in skip}


def _misdirected_second_move(fn: ast.FunctionDef, name: str, move: ast.stmt, error_line: int) -> str | None:
    """Why the *raising* move is the one to name, when both moves of ``name`` are whole moves into two destinations:
    the first destination's other writes store values computed from ``name`` and the second's never do (gqa's
    ``li[:] = l_ij`` then ``mi[:] = l_ij``, where ``mi`` is elsewhere written ``maximum(mi, m_ij)``: the copy-paste is
    the second line, session 47). The opposite case (``li[:] = m_ij`` then ``mi[:] = m_ij``, fifth corpus) keeps the
    first move: ``li``'s other writes never read ``m_ij``. None when the source does not decide it."""
    raising = next((n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n.lineno == error_line
                    and _is_whole_move(n, name)), None)
    first, second = _written_value(move), _written_value(raising) if raising is not None else None
    if first is None or second is None or first[0] == second[0]:
        return None
    reads_first = _names_stored_into(fn, first[0], name)
    reads_second = _names_stored_into(fn, second[0], name)
    if name not in reads_first or name in reads_second or not reads_second:
        return None
    return (f"the kernel raised at line {error_line}: it moves {name!r} into {second[0]!r} after line {move.lineno} "
            f"moved it into {first[0]!r}; every other write into {first[0]!r} stores a value computed from {name!r}, "
            f"none into {second[0]!r} does (they read {', '.join(sorted(reads_second))}): line {error_line} reads "
            f"the wrong value (copied from line {move.lineno}?)")


def static_consumed_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised because it reads a tensor an earlier whole-tensor move consumed (``tsum[:] = gmax``
    where ``tsum[:] = ...gmax...`` or a copy was meant): the move's line. The line that raised only reads the tensor
    (fifth gym corpus, s25: an accumulator initialised by a move of the running max raised at the next tile's
    ``sub(r, gmax)``, and ``li[:] = m_ij`` raised at the following ``mi[:] = m_ij``). With several moves of the
    tensor, the last one before the raising line, else (a move later in a loop body, run on an earlier trip) the
    last one after it."""
    m = _CONSUMED_RE.search(message or "")
    if not source or error_line is None or m is None:
        return None
    name = m.group(1)
    found = _function_at(source, error_line)
    if found is None:
        return None
    moves = sorted((n for n in ast.walk(found[1]) if isinstance(n, ast.stmt) and _is_whole_move(n, name)
                    and n.lineno != error_line), key=lambda n: n.lineno)
    if not moves:
        return None
    before = [n for n in moves if n.lineno < error_line]
    move = before[-1] if before else moves[-1]
    second = _misdirected_second_move(found[1], name, move, error_line)
    if second is not None:
        return error_line, second
    return move.lineno, (f"the kernel raised at line {error_line}: it reads {name!r}, which the whole-tensor move at "
                         f"line {move.lineno} ({ast.unparse(move)[:60]}) consumed before; a move is the last use of "
                         "its source (a copy or a computed value was meant there)")


def _failing_write(source: str | None, error_line: int | None, message: str, needle: str
                   ) -> tuple[ast.FunctionDef, ast.stmt, tuple[str, ast.expr]] | None:
    """(the enclosing function, the statement, (its destination, the value it writes)) of a kernel that raised with
    ``needle`` in its message at a statement that writes a value; None otherwise."""
    if not source or error_line is None or needle not in (message or ""):
        return None
    got = _failing_statement(source, error_line)
    if got is None:
        return None
    fn, _stmts, start = got
    w = _written_value(start)
    return (fn, start, w) if w is not None else None


def static_extent_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised because a write reaches past its destination ("outside the destination extent"):
    the statement upstream of the written value, by name, that declares its tile fully valid - a ``valid_shape=``
    that repeats the tile's own shape expression on some axis (``reshape(t, [16, tile_t], valid_shape=[16,
    tile_t])`` where the tile holds ``t_valid`` rows of data) - and why; None when no such statement feeds it.
    The write only carries that valid shape on. The emulator says so in two ways: the region lands outside the
    destination ("outside the destination extent 8"), or - checked first since s47 - the valid data alone are
    larger than the destination ("source valid shape (32, 16) is larger than the destination shape (8, 16)"):
    both are a valid extent too large, made where the valid shape is declared."""
    got = _failing_write(source, error_line, message, "outside the destination extent") \
        or _failing_write(source, error_line, message, "is larger than the destination shape")
    if got is None:
        return None
    fn, start, w = got
    for a in _upstream(fn, _names(w[1]), start.lineno):
        for call in ast.walk(a.value):
            if not isinstance(call, ast.Call):
                continue
            vs = next((k.value for k in call.keywords if k.arg == "valid_shape"), None)
            shape = next((x for x in call.args[1:] if isinstance(x, ast.List | ast.Tuple)), None)
            if not isinstance(vs, ast.List | ast.Tuple) or shape is None or len(shape.elts) != len(vs.elts):
                continue
            full = [i for i, (s, v) in enumerate(zip(shape.elts, vs.elts, strict=True))
                    if ast.unparse(s) == ast.unparse(v) and not isinstance(v, ast.Constant)
                    and _names(v) and _last_assignment(fn, next(iter(sorted(_names(v)))), a.lineno) is not None]
            if full:
                return a.lineno, (f"the kernel raised at line {error_line}: the write reaches past its destination "
                                  f"({message.strip()[:120]}); the value written comes from line {a.lineno}, whose "
                                  f"valid_shape {ast.unparse(vs)} declares the whole tile valid on axis {full} "
                                  f"({ast.unparse(vs.elts[full[0]])}, the tile's own extent): the valid extent is "
                                  "wrong there, the write only carries it on")
    return None


def _feeding(fn: ast.FunctionDef, names: Iterable[str], before: int) -> Iterator[ast.stmt]:
    """The statements that feed ``names`` read at line ``before``, breadth first: like :func:`_upstream`, plus the
    in-place writes into a name before that line (``pypto.assemble(v, offs, tmp)`` feeds ``tmp`` with ``v``)."""
    writes = [(w[0], n) for n in ast.walk(fn) if isinstance(n, ast.stmt) for w in [_written_value(n)] if w is not None]
    frontier = [(x, before) for x in sorted(names)]
    seen: set[tuple[str, int]] = set()
    while frontier:
        name, line = frontier.pop(0)
        if (name, line) in seen or len(seen) > 200:
            continue
        seen.add((name, line))
        a = _last_assignment(fn, name, line)
        if a is not None:
            yield a
            frontier.extend((x, a.lineno) for x in sorted(_names(a.value)))
        for dst, st in writes:
            if dst == name and st.lineno < line and (a is None or st.lineno > a.lineno):
                yield st
                value = _written_value(st)
                if value is not None:
                    frontier.extend((x, st.lineno) for x in sorted(_names(value[1])))


def static_poison_bound_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised because a write carried padding into an output ("poisoned element(s): data from
    outside a valid_shape"): the line computing the one tail bound (``t_valid = (t - t_idx).min(tile_t)``) that
    every ``valid_shape`` upstream of the written value takes, and why - the valid part was declared smaller than
    the data the write carries (``(t - t_idx - 1).min(tile_t)``: one row short), the write only carries it on. None
    when no such bound, or more than one, feeds the write."""
    got = _failing_write(source, error_line, message, "poisoned element")
    if got is None:
        return None
    fn, start, w = got
    bounds: dict[int, str] = {}
    for st in _feeding(fn, _names(w[1]), start.lineno):
        for call in ast.walk(st):
            if not isinstance(call, ast.Call):
                continue
            vs = next((k.value for k in call.keywords if k.arg == "valid_shape"), None)
            if not isinstance(vs, ast.List | ast.Tuple):
                continue
            for elt in vs.elts:
                if not isinstance(elt, ast.Name):
                    continue
                a = _last_assignment(fn, elt.id, call.lineno)
                if a is not None and isinstance(a.value, ast.Call) and isinstance(a.value.func, ast.Attribute) \
                        and a.value.func.attr == "min":
                    bounds[a.lineno] = elt.id
    if len(bounds) != 1:
        return None
    line, name = next(iter(bounds.items()))
    return line, (f"the kernel raised at line {error_line}: the write carries padding into an output "
                  f"({message.strip()[:100]}); every valid_shape upstream of the value written takes the tail bound "
                  f"{name!r}, computed at line {line}: the valid part is declared smaller than the data written "
                  "(the write only carries it on)")


_VALID_EXTENT_RE = re.compile(r"valid extent (\d+) > view shape (\d+) on axis (\d+)")


def static_valid_bound_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised because a view's valid extent exceeds its tile on some axis ("valid extent 64 > view
    shape 16 on axis 0"): the line that computes the bound the view passes as its ``valid_shape`` on that axis
    (``actual_b = (B - b_idx * TILE_B).max(TILE_B)``, a bound that should never exceed the tile), and why; None when
    the bound is written on the view's own line (then that line is the one to fix) or cannot be followed."""
    m = _VALID_EXTENT_RE.search(message or "")
    if not source or error_line is None or m is None:
        return None
    got = _bound_line(source, error_line, int(m.group(3)))
    if got is None or got[0] == error_line:
        return None
    line, name = got
    return line, (f"the kernel raised at line {error_line}: the view's valid extent on axis {m.group(3)} "
                  f"({m.group(1)}) exceeds its tile ({m.group(2)}); that valid extent is {name!r}, computed at "
                  f"line {line}: a tail bound must never exceed the tile (the view only carries it)")


def _axis_the_shapes_want(message: str, axis: str | None) -> int | None:
    """For a keepdim reduction over ``axis`` (its source text) whose result is one of two same-rank shapes in an
    error message: the other axis the reduction should have taken - the one axis where the *other* shape is 1 and
    the reduced one is not, when on every axis but those two the shapes agree and the other shape is not 1 on the
    reduced axis (``amax(s, 1, keepdim=True)`` gives ``[4, 1, 64]`` where ``[4, 8, 1]`` is written to: axis 2).
    None when the shapes do not say so."""
    try:
        a0 = int(axis) if axis is not None else None
    except ValueError:
        return None
    if a0 is None:
        return None
    shapes = [tuple(int(x) for x in m.split(",")) for m in _SHAPE_RE.findall(message)]
    if len(shapes) != 2:
        return None
    for red, other in (shapes, shapes[::-1]):
        n = len(red)
        a = a0 % n if -n <= a0 < n else None
        if a is None or len(other) > n:
            continue
        # (a shape of lower rank meets the reduction's right-aligned, as broadcasting and a move's extents do:
        # ``tsum[:] = sum(r, 0, keepdim=True)`` is [1, 64] into [1])
        other = (1,) * (n - len(other)) + other
        if red[a] != 1 or (other[a] == 1 and len(shapes[0]) == len(shapes[1])):
            continue
        # (ranks differ and both are 1 on the reduced axis: that reduction left an axis of extent 1 where one of the
        # others was meant - the shape it meets is 1 on the axis the reduction kept)
        want = [b for b in range(n) if b != a and other[b] == 1 and red[b] != 1]
        if len(want) == 1 and all(red[c] == other[c] for c in range(n) if c not in (a, want[0])):
            return want[0]
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


_INT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
            ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def _int_value(expr: ast.AST, fn: ast.FunctionDef, tree: ast.Module, shapes: dict[str, tuple[int, ...]],
               before: int, depth: int = 0) -> int | None:
    """``expr`` as an int for one kernel call, where the source decides it: constants, module-level int constants,
    locals assigned before line ``before`` (followed back), ``p.shape[k]`` of a kernel parameter (``shapes``),
    ``+ - * // %``, ``.min(..)``/``.max(..)``, ``pypto.ceildiv``; None for anything else (a value read from a
    tensor, a loop index) - the caller then claims nothing."""
    if depth > 24:
        return None

    def val(e: ast.AST, at: int = before) -> int | None:
        return _int_value(e, fn, tree, shapes, at, depth + 1)

    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.BinOp) and type(expr.op) in _INT_OPS:
        a, b = val(expr.left), val(expr.right)
        if a is None or b is None or (isinstance(expr.op, (ast.FloorDiv, ast.Mod)) and b == 0):
            return None
        return _INT_OPS[type(expr.op)](a, b)
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape" \
            and isinstance(expr.value.value, ast.Name) and expr.value.value.id in shapes:
        k = val(expr.slice)
        dims = shapes[expr.value.value.id]
        return dims[k] if k is not None and -len(dims) <= k < len(dims) else None
    if isinstance(expr, ast.Call):
        f = expr.func
        if isinstance(f, ast.Attribute) and f.attr in ("min", "max") and len(expr.args) == 1:
            a, b = val(f.value), val(expr.args[0])
            return None if a is None or b is None else (min(a, b) if f.attr == "min" else max(a, b))
        if ast.unparse(f).split(".")[-1] == "ceildiv" and len(expr.args) == 2:
            a, b = val(expr.args[0]), val(expr.args[1])
            return None if a is None or not b else -(-a // b)
        return None
    if isinstance(expr, ast.Name):
        local = _last_assignment(fn, expr.id, before)
        if local is not None:
            return val(local.value, local.lineno) if len(local.targets) == 1 else None
        if any(a.arg == expr.id for a in fn.args.args + fn.args.kwonlyargs):
            return None
        module = [n for n in tree.body if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == expr.id for t in n.targets)]
        if not module:
            # (``N, D, T = 16, 8, 4``: one element of a tuple of constants)
            for n in tree.body:
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple) \
                        and isinstance(n.value, ast.Tuple) and len(n.value.elts) == len(n.targets[0].elts):
                    for t, v in zip(n.targets[0].elts, n.value.elts, strict=True):
                        if isinstance(t, ast.Name) and t.id == expr.id:
                            return val(v, n.lineno)
            return None
        return val(module[-1].value, module[-1].lineno) if len(module) == 1 and len(module[0].targets) == 1 else None
    return None


def _writes_into(fn: ast.FunctionDef, params: set[str]) -> list[ast.stmt]:
    """Statements of ``fn`` that write into one of its parameters: ``P[...] = ...`` or ``pypto.assemble(x, offs, P)``."""
    out: list[ast.stmt] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                                             and t.value.id in params for t in n.targets):
            out.append(n)
        elif isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) \
                and ast.unparse(n.value.func).split(".")[-1] == "assemble":
            args = [*n.value.args, *(k.value for k in n.value.keywords)]
            if args and isinstance(args[-1], ast.Name) and args[-1].id in params:
                out.append(n)
    return out


def _aliases(fn: ast.FunctionDef, params: set[str]) -> dict[str, str]:
    """Locals of ``fn`` bound by a bare name to one of ``params`` (``dk_2d = dk``), and the parameters themselves:
    local name -> parameter."""
    out = {p: p for p in params}
    for _ in range(4):
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in out:
                for t in n.targets:
                    if isinstance(t, ast.Name) and t.id not in out:
                        out[t.id] = out[n.value.id]
    return out


def _trip_count(lp: ast.For, fn: ast.FunctionDef, tree: ast.Module, shapes: dict[str, tuple[int, ...]]) -> int | None:
    """The trip count of ``for .. in pypto.loop(stop)`` / ``pypto.loop(start, stop[, step])`` /
    ``pypto.loop_unroll(start, stop, step, ..)`` for one call's shapes (:func:`_int_value`), or None. (Before s42 the
    first argument was read as the count: a ``loop_unroll(0, n, 1)`` "ran 0 trips" whatever ``n``.)"""
    args = lp.iter.args  # type: ignore[attr-defined]
    if len(args) == 1:
        return _int_value(args[0], fn, tree, shapes, lp.lineno)
    start, stop = _int_value(args[0], fn, tree, shapes, lp.lineno), _int_value(args[1], fn, tree, shapes, lp.lineno)
    step = _int_value(args[2], fn, tree, shapes, lp.lineno) if len(args) >= 3 else 1
    if start is None or stop is None or not step:
        return None
    return max(0, -(-(stop - start) // step))


def static_zero_trip_source(source: str | None, calls: Iterable[tuple[str, dict[str, tuple[int, ...]]]],
                            written: set[str] | None = None) -> tuple[int, str] | None:
    """For a run whose kernel calls recorded no write while the outputs differ from the golden: the ``pypto.loop``
    around every write into the kernel's parameters whose trip count, worked out from the call's argument shapes
    and the source (:func:`_int_value`), is 0 - the outermost such loop - and the line that computes that trip
    count (``bs_loop = B // TILE_B``: a floor that is 0 for fewer rows than a tile, where ``(B + TILE_B - 1) //
    TILE_B`` was meant), with why; None when no loop's trip count can be shown to be 0 (then nothing is claimed).
    ``calls``: (kernel name, its parameters' shapes) per kernel call.

    ``written`` (s42): the kernel tensors the run did write. A parameter the source writes into (directly or through
    an alias, ``dk_2d = dk``) that the run never wrote is looked at alone: the loop around its writes that runs no
    trip (flash_attention_score_grad's dK/dV pass ``pypto.loop(s_loop - 1)`` with one tile, while the dQ pass wrote
    ``dq``). Without ``written``, every parameter (the run wrote nothing)."""
    if not source:
        return None
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    fns = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    for kernel, shapes in calls:
        fn = fns.get(kernel)
        if fn is None:
            continue
        params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
        alias = _aliases(fn, params)
        groups: list[tuple[str | None, list[ast.stmt]]] = [(None, _writes_into(fn, set(alias)))]
        if written is not None:
            targets = sorted({alias[w] for w in written if w in alias} | (written & params))
            writers = {p: [w for w in _writes_into(fn, {a for a, q in alias.items() if q == p})] for p in params}
            unwritten = [p for p in sorted(params) if writers[p] and p not in targets]
            if not unwritten:
                continue
            groups = [(p, writers[p]) for p in unwritten] if targets else groups
        loops = sorted((n for n in ast.walk(fn) if isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
                        and ast.unparse(n.iter.func).split(".")[-1] in ("loop", "loop_unroll") and n.iter.args),
                       key=lambda lp: lp.lineno)
        for param, writes in groups:
            around = [lp for lp in loops if writes and all(lp.lineno < w.lineno <= (lp.end_lineno or lp.lineno)
                                                           for w in writes)]
            for lp in around:  # outermost first
                if _trip_count(lp, fn, tree, shapes) != 0:
                    continue
                bound = _bound_arg(lp)
                assert bound is not None
                line, what = bound.lineno, ast.unparse(bound)
                if isinstance(bound, ast.Name) and (a := _last_assignment(fn, bound.id, lp.lineno)) is not None:
                    line, what = a.lineno, f"{bound.id} = {ast.unparse(a.value)}"
                dims = ", ".join(f"{p}{list(s)}" for p, s in shapes.items())
                which = (f"kernel {kernel!r} never wrote its parameter {param!r} while its outputs differ from the "
                         f"golden: every write into {param!r}") if param is not None else (
                    f"kernel {kernel!r} recorded no write while its outputs differ from the golden: every write into "
                    "its parameters")
                return line, (f"{which} is inside the loop at line {lp.lineno}, whose trip count ({what}) is 0 "
                              f"for this call's shapes ({dims}); line {line} computes it (a floor where a ceiling was "
                              f"meant, or a bound one short?)")
    return None


def _is_min_bound(value: ast.AST) -> bool:
    """``value`` is a clamp of a tail bound: ``(..).min(..)`` or ``pypto.min(..)`` / ``min(..)``."""
    return isinstance(value, ast.Call) and (
        (isinstance(value.func, ast.Attribute) and value.func.attr == "min")
        or (isinstance(value.func, ast.Name) and value.func.id == "min"))


def _int_adjusted(value: ast.AST) -> bool:
    """``value`` adds or subtracts an integer literal (``s2_end - s2_start - 1``): an explicit off-by-one there is
    the statement's own choice, not something the clamp behind it decided."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add | ast.Sub)
               and any(isinstance(x, ast.Constant) and isinstance(x.value, int) and not isinstance(x.value, bool)
                       and x.value != 0 for x in (n.left, n.right))
               for n in ast.walk(value))


def short_valid_source(an: Analyzer, origin: Rec, *, nan: bool = True) -> tuple[int, str] | None:
    """For NaN that first appears at ``origin`` from operands holding none (the poison of a padding read as data):
    the line computing the tail bound of the views upstream whose ``valid_shape`` cuts their tile shorter than the
    data their source tensor holds there, and why; None when no such view, or views bounded by more than one line,
    feed it.

    A right tail bound makes the valid extent ``min(tile, extent - offset)``: the padding then lies outside the
    tensor. A valid extent below that (``s2_end = pypto.min(s2_start + S2_TILE - 1, Skv)``: every tile one row
    short, gqa_decode_attn in s38) turns real data into poison that a matmul sums into every element. The view's
    bound is followed back (``s2_valid = s2_end - s2_start``) to the one assignment clamping it with ``min``.

    ``nan=False`` (session 45): the same evidence for a departure without NaN that nothing else could name (the
    emulator contracted the padding as nothing: flash_attention_score_grad's ``actual_s2 = (s - s2_idx * S_TILE -
    1).min(S_TILE)`` - ``k_j`` and ``v_j``, two views on two lines, share that one bound, and every value compared on
    its valid region matches until the ``dq`` written). Several short views are one piece of evidence when they all
    take their bound from the same line."""
    short: dict[tuple[Any, int], Rec] = {}
    for v in an.lineage_views(origin):
        full = an.arg_shapes.get(v.source or "")
        if v.valid_shape is None or v.shape is None or v.offsets is None or full is None \
                or not (len(v.valid_shape) == len(v.shape) == len(v.offsets) == len(full)):
            continue
        for a, (vs, n, o, f) in enumerate(zip(v.valid_shape, v.shape, v.offsets, full, strict=True)):
            if int(vs) < min(int(n), int(f) - int(o)):
                short.setdefault((v.node, a), v)
    if not short:
        return None
    bounds = {(_node, axis): _bound_line(an.source, view.line, axis) for (_node, axis), view in short.items()}
    if len({(v.line, a) for (_n, a), v in short.items()}) != 1 and \
            (None in bounds.values() or len(set(bounds.values())) != 1):
        return None
    (_node, axis), view = next(iter(short.items()))
    bound = bounds[(_node, axis)]
    if bound is None:
        return None
    line, name = bound
    found = _function_at(an.source or "", line)
    if found is not None:
        _tree, fn = found
        a = _last_assignment(fn, name, line + 1)
        if a is not None and not _is_min_bound(a.value) and not _int_adjusted(a.value):
            # (``s2_valid = s2_end - s2_start``: the clamp that sets it is one assignment up; not when this
            # assignment trims the bound itself, ``s2_end - s2_start - 1`` after a right clamp: s38b)
            clamps = {b.lineno: x for x in sorted(_names(a.value))
                      for b in [_last_assignment(fn, x, a.lineno)] if b is not None and _is_min_bound(b.value)}
            if len(clamps) == 1:
                line, name = next(iter(clamps.items()))
    views = sorted({v.line for v in short.values() if v.line is not None})
    head = (f"NaN first appears at {origin.where()} from operands holding none: " if nan else
            f"{origin.where()} departs and no op before it can be shown to be the cause, while ")
    return line, (f"{head}the view at line {view.line} "
                  f"declares {view.valid_shape} valid of its {view.shape} tile at offset {view.offsets} while its "
                  f"source holds {list(an.arg_shapes.get(view.source or '') or [])} - its valid extent on axis {axis} "
                  f"is shorter than the data there, so real data is read as padding"
                  + (f" (so do the views at lines {views}, bounded by the same line)" if len(views) > 1 else "")
                  + f"; the bound {name!r} is computed at line {line}")


_VIEW_OOB_RE = re.compile(r"offset (-?\d+) on axis (\d+) is outside the tensor extent (\d+)")


def _view_at(fn: ast.AST, line: int, axis: int) -> ast.Call | None:
    """The ``pypto.view(t, shape, offsets, ...)`` call on ``line`` whose offsets are a literal list reaching
    ``axis`` (the view a "view: offset ... on axis ..." error was raised at), or None."""
    return next((n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "view" and n.lineno <= line <= (n.end_lineno or n.lineno)
                 and len(n.args) >= 3 and isinstance(n.args[2], ast.List | ast.Tuple) and len(n.args[2].elts) > axis),
                None)


def static_view_extent_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised because a view's offset walked past its tensor ("view: offset 64 on axis 1 is
    outside the tensor extent 64"): the line that reads the loop's extent from *another* axis of that tensor, and
    why; None when the evidence is not there (kernel source parsed, never run).

    The loop whose index drives the view's offset on axis ``a`` of tensor ``T`` gets its trip count from
    ``T.shape[b]`` (followed back through the locals its bound reads) with ``b != a`` and never from ``T.shape[a]``
    (``Skv = k_full.shape[2]`` - the head dim - where ``k_full`` is ``[Nkv, Skv, D]`` and the tiles walk axis 1,
    s38b): the offset and the view are right, the extent they walk is another axis's. Without this the view that
    raises is named."""
    m = _VIEW_OOB_RE.search(message or "")
    if not source or error_line is None or m is None:
        return None
    axis = int(m.group(2))
    found = _function_at(source, error_line)
    if found is None:
        return None
    _tree, fn = found
    view = _view_at(fn, error_line, axis)
    if view is None or not isinstance(view.args[0], ast.Name):
        return None
    tensor = view.args[0].id  # type: ignore[union-attr]
    offsets = view.args[2].elts  # type: ignore[union-attr]

    def closure(names: set[str], before: int) -> tuple[set[str], list[ast.Assign]]:
        """The names ``names`` are computed from (followed back through local assignments) and those assignments."""
        seen, todo, assigns = set(names), [(x, before) for x in sorted(names)], []
        while todo:
            name, at = todo.pop(0)
            a = _last_assignment(fn, name, at)
            if a is None:
                continue
            assigns.append(a)
            for x in sorted(_names(a.value) - seen):
                seen.add(x)
                todo.append((x, a.lineno))
        return seen, assigns

    driven, _ = closure(_names(offsets[axis]), view.lineno)
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For) and _loop_index(n) in driven
             and n.lineno < view.lineno <= (n.end_lineno or n.lineno) and isinstance(n.iter, ast.Call)]
    if len(loops) != 1:
        return None
    loop = loops[0]
    _, assigns = closure(set().union(*(_names(a) for a in loop.iter.args)) if loop.iter.args else set(),  # type: ignore[union-attr]
                         loop.lineno)
    reads: dict[int, int] = {}  # the axis of ``tensor`` read -> the line reading it
    for a in assigns:
        for s in ast.walk(a.value):
            if (read := _shape_read(s)) is not None and read[0] == tensor and read[1] >= 0:
                reads.setdefault(read[1], a.lineno)
    if len(reads) != 1 or axis in reads:
        return None
    (other, line), = reads.items()
    return line, (f"the kernel raised at line {error_line}: the view of {tensor!r} walks axis {axis} "
                  f"({message.strip()[:120]}); the loop at line {loop.lineno} that moves it takes its trip count from "
                  f"{tensor}.shape[{other}], read at line {line}, never from {tensor}.shape[{axis}]: the extent comes "
                  f"from the wrong axis")


_VIEW_RUNS_PAST_RE = re.compile(r"view of '(\w+)': window \[(-?\d+), (-?\d+)\) on axis (\d+) runs past the tensor "
                                r"extent (\d+)")


def _const_int(expr: ast.AST, tree: ast.Module) -> int | None:
    """An integer literal, or a module-level ``NAME = <int literal>`` (``S_TILE = 64``), else None."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.Name):
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id == expr.id:
                return _const_int(node.value, tree) if isinstance(node.value, ast.Constant) else None
    return None


def static_wrapper_pad_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel whose view ran past its tensor (``window [0, 64) on axis 1 runs past the tensor extent 16``),
    the wrapper line that sized that argument to a multiple of a smaller number than the kernel's tile, and why;
    None when the source does not show it (parsed, never run).

    Why (session 43): a wrapper padding to a tile multiple wrongly (``padded_S = (S + 15) // 16 * 16`` where the
    kernel walks 64-wide tiles; ``pad = (L - S % 16) % L``) made the kernel's view overrun, and the view was named:
    the view is right, the extent it was handed is not. The claim needs all of: the extent is no multiple of the
    tile the view takes; the argument the wrapper passes at that parameter's position is computed (through its
    assignments, every branch) from exactly one statement rounding by a constant ``c`` (``// c``, ``% c``) with
    ``c`` below the tile, dividing it, the extent and the window's start.

    The extent need not be short of a tile multiple itself: gated_delta_rule's wrapper stacks 32 heads of ``S_pad``
    rows (``pad = (L - S % 16) % L``: ``S_pad = 16``), so 512 rows are a multiple of 128 while the kernel's views,
    ``S_pad`` apart, fall off the tile grid (``[400, 528)``)."""
    m = _VIEW_RUNS_PAST_RE.search(message or "")
    if not source or error_line is None or m is None:
        return None
    tensor, lo, hi, ext = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(5))
    tile = hi - lo
    if tile <= 0 or ext <= 0 or (ext % tile == 0 and lo % tile == 0):
        # (the extent a tile multiple and the window on the tile grid: the walk runs one tile too far, the size is
        # right; a window off the grid - [400, 528) of 512, the heads stacked S_pad = 16 rows apart - is the short
        # size seen through a stack of them)
        return None
    found = _function_at(source, error_line)
    if found is None:
        return None
    tree, kern = found
    params = [a.arg for a in kern.args.args]
    if tensor not in params or not any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "view" and n.args
            and isinstance(n.args[0], ast.Name) and n.args[0].id == tensor
            and n.lineno <= error_line <= (n.end_lineno or n.lineno) for n in ast.walk(kern)):
        return None  # (the error line is no view of that parameter: the message is about something else)
    pos = params.index(tensor)
    hits: set[tuple[int, int]] = set()
    for caller in ast.walk(tree):
        if not isinstance(caller, ast.FunctionDef) or caller is kern:
            continue
        for call in ast.walk(caller):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == kern.name):
                continue
            arg = next((k.value for k in call.keywords if k.arg == tensor), None)
            if arg is None and pos < len(call.args):
                arg = call.args[pos]
            if arg is None:
                continue
            seen, todo = set(_names(arg)), sorted(_names(arg))
            while todo:
                name = todo.pop(0)
                for node in ast.walk(caller):
                    if not (isinstance(node, ast.Assign) and node.lineno < call.lineno
                            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)):
                        continue
                    for b in ast.walk(node.value):
                        if isinstance(b, ast.BinOp) and isinstance(b.op, ast.FloorDiv | ast.Mod):
                            c = _const_int(b.right, tree)
                            if c is not None and 1 < c < tile and tile % c == 0 and ext % c == 0 and lo % c == 0:
                                hits.add((node.lineno, c))
                    for x in sorted(_names(node.value) - seen):
                        seen.add(x)
                        todo.append(x)
    if len({ln for ln, _c in hits}) != 1:
        return None
    ln, c = sorted(hits)[0]
    return ln, (f"the kernel's view of {tensor!r} takes {tile}-wide tiles on axis {m.group(4)} but the wrapper "
                f"hands it an extent of {ext}, no multiple of {tile}; line {ln} of the wrapper computes that "
                f"argument's size rounding by {c} (a multiple of {c}, not of the kernel's tile {tile}): the pad is "
                "short there, not the view")


_RESHAPE_SIZE_RE = re.compile(r"element count of \[([\d,\s]+)\] != \[([\d,\s]+)\]")


def static_reshape_dim_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """For a kernel that raised because a ``reshape`` target does not hold its operand's elements: the one local the
    target's dims are computed in (``group_unit = ne // topk_group``), when that dim alone, at the value the element
    count asks for, would make the reshape hold - and why; None otherwise.

    Why (s44, f16_ll_group_unit): the reshape ``[tile_batch, num_expert_group, group_unit]`` raised and was named; its
    dims are a loop's tile, a kernel parameter and a local computed from two others - a dim the kernel is given is no
    slip of this statement, the computed one is (``ne // topk_group`` for ``ne // num_expert_group``). Named only
    when exactly one dim is such a computed local, the count it needs is a whole number other than its value, and
    the other dims are plain names or constants (parameters, loop variables)."""
    m = _RESHAPE_SIZE_RE.search(message or "")
    if not source or error_line is None or m is None or "reshape" not in message:
        return None
    have = [int(x) for x in m.group(1).split(",")]
    want = [int(x) for x in m.group(2).split(",")]
    got = _function_at(source, error_line)
    if got is None:
        return None
    _tree, fn = got
    calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and getattr(c, "lineno", 0) <= error_line
             <= (getattr(c, "end_lineno", 0) or 0) and isinstance(c.func, ast.Attribute) and c.func.attr == "reshape"
             and len(c.args) >= 2 and isinstance(c.args[1], ast.List | ast.Tuple)]
    dims = calls[0].args[1] if len(calls) == 1 else None
    if not isinstance(dims, ast.List | ast.Tuple) or len(dims.elts) != len(want):
        return None
    elts = dims.elts
    computed = []
    for i, e in enumerate(elts):
        if isinstance(e, ast.Constant):
            continue
        if not isinstance(e, ast.Name):
            return None
        a = _last_assignment(fn, e.id, error_line)
        if a is not None and isinstance(a.value, ast.BinOp):
            computed.append((i, e.id, a))
    if len(computed) != 1:
        return None
    i, name, a = computed[0]
    rest = int(np.prod([w for j, w in enumerate(want) if j != i]))
    total = int(np.prod(have))
    if rest <= 0 or total % rest or total // rest == want[i]:
        return None
    need = total // rest
    return a.lineno, (f"the kernel raised at line {error_line}: the reshape to {want} cannot hold the {have} value; "
                      f"its dims are given to the kernel except {name!r}, computed on line {a.lineno} "
                      f"({ast.unparse(a.value)} = {want[i]}), which the element count needs to be {need}: that "
                      "computation is the bug, not the reshape")
