"""Two kernel errors whose statement is right and whose bad number was made on an earlier line (session 49).

* A ``reshape`` that cannot hold its operand because one target dim is an extent read from **another tensor**:
  ``value_dim = key_cache.shape[3]`` where ``value_cache.shape[3]`` was meant, then ``reshape(value_cache, [n * b,
  value_num_heads, value_dim])`` raises ("cannot reshape array of size 327680 into shape (5120,1,512)"). The reshape
  is right; the line reading the sibling's extent is not (gather_pa_kv_cache, whose key and value caches share every
  axis but the head size).
* A scalar read ``t[i, base + j]`` outside its tensor, in a trip where every loop index of the index expression is 0:
  the whole out-of-range value is the local's (``table_offset = seq_offset[q]`` in tokens where ``// block_size``, a
  count of blocks, was meant). The read is right; the line computing the local is not. The emulator evaluates a
  symbolic scalar lazily, so the error may be raised at a later statement that uses the value (a view's offset): the
  read is found in the source by the tensor the message names.

Both are named only from the source and the error message (parsed, never run); each says why in its evidence.
"""

from __future__ import annotations

import ast
import re

from runtime.bisect._rules import _function_at, _last_assignment, _reshapes_at, _shape_read

__all__ = ["static_offsets_length_source", "static_scalar_index_source", "static_sibling_extent_source",
           "static_unpack_order_source",
           "static_write_stride_source"]

_NUMPY_RESHAPE_RE = re.compile(r"cannot reshape array of size (\d+) into shape \(([\d,\s]+)\)")
_ELEMENT_COUNT_RE = re.compile(r"element count of \[([\d,\s]+)\] != \[([\d,\s]+)\]")
_SCALAR_OOB_RE = re.compile(r"scalar read (\w+)\[([\d,\s-]+)\] outside shape \[([\d,\s]+)\](?: \(iteration ([^)]*)\))?")


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.replace(" ", "").split(",") if x]


def static_sibling_extent_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """(line, why) for a kernel that raised because a ``reshape(x, [dims])`` does not hold ``x``'s elements, when
    exactly one of the target's dims is a bare local bound to another tensor's extent (``value_dim =
    key_cache.shape[3]``, the operand being ``value_cache``) and the element count asks that dim - and only that one
    among such dims - to be another whole number; None otherwise. The line named is the local's."""
    m = _NUMPY_RESHAPE_RE.search(message or "")
    if m is not None:
        total, want = int(m.group(1)), _ints(m.group(2))
    else:
        e = _ELEMENT_COUNT_RE.search(message or "")
        if e is None or "reshape" not in (message or ""):
            return None
        have, want = _ints(e.group(1)), _ints(e.group(2))
        total = 1
        for h in have:
            total *= h
    if not source or error_line is None or not want:
        return None
    found = _function_at(source, error_line)
    if found is None:
        return None
    _tree, fn = found
    calls = [c for c in _reshapes_at(fn, error_line) if isinstance(c.args[0], ast.Name)]
    if len(calls) != 1:
        return None
    call = calls[0]
    operand = call.args[0].id  # type: ignore[attr-defined]
    dims = call.args[1].elts  # type: ignore[attr-defined]
    if len(dims) != len(want):
        return None
    fits = []
    for i, d in enumerate(dims):
        if not isinstance(d, ast.Name):
            continue
        a = _last_assignment(fn, d.id, call.lineno)
        read = None if a is None else _shape_read(a.value)
        if a is None or read is None or read[0] == operand:
            continue
        rest = 1
        for j, w in enumerate(want):
            if j != i:
                rest *= w
        if rest > 0 and total % rest == 0 and total // rest != want[i]:
            fits.append((d.id, a, read, total // rest))
    if len(fits) != 1:
        return None
    name, a, (other, axis), need = fits[0]
    return a.lineno, (f"the kernel raised at line {error_line}: the reshape of {operand!r} to {want} cannot hold its "
                      f"{total} elements; its dim {name!r} is the extent of another tensor, {other}.shape[{axis}] "
                      f"(line {a.lineno}), and the element count needs it to be {need}: {operand}'s own extent "
                      f"was meant there (the line reading the other tensor's is the bug, not the reshape)")


def _terms(expr: ast.expr) -> list[ast.expr]:
    """The terms of a sum (``a + b + c``), else the expression itself."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _terms(expr.left) + _terms(expr.right)
    return [expr]


def _loops_by_index(fn: ast.AST) -> dict[str, str]:
    """Loop index -> the loop's name as an iteration names it (``pypto.loop(.., name="L", idx_name="i")`` binds
    ``for i in``; ``pypto.loop_unroll`` yields ``(base, unroll)`` and is named like ``L_LoopUnroll<k>``)."""
    out: dict[str, str] = {}
    for node in ast.walk(fn):
        if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Call):
            continue
        name = next((k.value.value for k in node.iter.keywords if k.arg == "name"
                     and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)), None)
        target = node.target.elts[0] if isinstance(node.target, ast.Tuple) and node.target.elts else node.target
        if isinstance(target, ast.Name) and name is not None:
            out[target.id] = name
    return out


def static_scalar_index_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """(line, why) for a kernel that raised on a scalar read ``t[.., local + i]`` outside ``t``'s shape, when the
    out-of-range axis' index is a sum of exactly one local computed on its own line and loop indices that are all 0
    in the failing iteration (so the whole value is the local's); None otherwise. The read is the one of ``t`` in
    the function holding the error line (the emulator may raise where the value is used, not where it is read)."""
    m = _SCALAR_OOB_RE.search(message or "")
    if not source or error_line is None or m is None:
        return None
    tensor, index, shape = m.group(1), _ints(m.group(2)), _ints(m.group(3))
    iteration = dict(kv.split("=", 1) for kv in (m.group(4) or "").replace(" ", "").split(",") if "=" in kv)
    bad = [a for a, (i, s) in enumerate(zip(index, shape, strict=False)) if i >= s or i < 0]
    if len(index) != len(shape) or len(bad) != 1:
        return None
    axis = bad[0]
    found = _function_at(source, error_line)
    if found is None:
        return None
    _tree, fn = found
    reads = [s for s in ast.walk(fn) if isinstance(s, ast.Subscript) and isinstance(s.value, ast.Name)
             and s.value.id == tensor and isinstance(s.ctx, ast.Load) and isinstance(s.slice, ast.Tuple)
             and len(s.slice.elts) == len(index) and s.lineno <= error_line]
    exprs = {ast.unparse(r.slice.elts[axis]) for r in reads}  # type: ignore[attr-defined]
    if len(exprs) != 1:
        return None
    read = reads[-1]
    loops = _loops_by_index(fn)
    local = None
    for t in _terms(read.slice.elts[axis]):  # type: ignore[attr-defined]
        if not isinstance(t, ast.Name):
            return None
        if t.id in loops:
            at = next((v for k, v in iteration.items() if k == loops[t.id] or k.startswith(loops[t.id] + "_")), None)
            if at != "0":
                return None
            continue
        if local is not None:
            return None
        local = t.id
    if local is None:
        return None
    a = _last_assignment(fn, local, read.lineno)
    if a is None:
        return None
    return a.lineno, (f"the kernel raised at line {error_line}: the scalar read {tensor}[..] on line {read.lineno} "
                      f"indexes axis {axis} at {index[axis]}, outside its extent {shape[axis]}; the index is "
                      f"{ast.unparse(read.slice.elts[axis])} and every loop index in it is 0 in that trip, so the "  # type: ignore[attr-defined]
                      f"whole value is {local!r}, computed on line {a.lineno} ({ast.unparse(a.value)}): that "
                      "computation is the bug (a quantity in the wrong unit?), not the read")


_OUTSIDE_RE = re.compile(r"region \[(-?\d+), (-?\d+)\) on axis (\d+) is outside the destination extent (\d+)")


def _failing_assemble(source: str | None, error_line: int | None, message: str
                      ) -> tuple[ast.FunctionDef, ast.Call, int, re.Match[str]] | None:
    """(function, the ``assemble`` call, the axis, the message's match) of a kernel that raised because a write's
    region lands outside its destination on an axis; None otherwise."""
    from runtime.bisect._rules import _failing_statement

    m = _OUTSIDE_RE.search(message or "")
    if not source or error_line is None or m is None:
        return None
    got = _failing_statement(source, error_line)
    if got is None:
        return None
    fn, _stmts, st = got
    call = st.value if isinstance(st, ast.Expr) else None
    axis = int(m.group(3))
    if not (isinstance(call, ast.Call) and ast.unparse(call.func).rsplit(".", 1)[-1] == "assemble"
            and len(call.args) >= 3 and isinstance(call.args[1], ast.List | ast.Tuple)
            and axis < len(call.args[1].elts)):
        return None
    return fn, call, axis, m


def _through_locals(fn: ast.AST, expr: ast.expr, before: int, depth: int = 3) -> list[tuple[ast.expr, int]]:
    """The terms of ``expr`` as a sum, a bare local replaced by the terms of its value (up to ``depth`` levels), each
    with the line it was written on."""
    out: list[tuple[ast.expr, int]] = []
    for t in _terms(expr):
        a = _last_assignment(fn, t.id, before) if isinstance(t, ast.Name) and depth > 0 else None
        if a is not None and len(a.targets) == 1:
            out.extend(_through_locals(fn, a.value, a.lineno, depth - 1) if isinstance(a.value, ast.BinOp)
                       and isinstance(a.value.op, ast.Add) else [(a.value, a.lineno)])
        else:
            out.append((t, before))
    return out


def _bound_value(fn: ast.AST, value: ast.expr, before: int) -> ast.expr:
    """``value``, or - a bare local - the value it was last assigned before line ``before`` (followed one level)."""
    if isinstance(value, ast.Name):
        a = _last_assignment(fn, value.id, before)
        return a.value if a is not None else value
    return value


def _tile_extent(fn: ast.AST, value: ast.expr, before: int, axis: int) -> ast.expr | None:
    """The extent on ``axis`` of the tile a write carries: the shape argument of the ``view`` (or the call with a
    shape list) its value is bound to, followed through one local."""
    value = _bound_value(fn, value, before)
    if isinstance(value, ast.Call):
        shape = next((x for x in value.args[1:2] if isinstance(x, ast.List | ast.Tuple)), None)
        if shape is not None and axis < len(shape.elts):
            return shape.elts[axis]
    return None


def static_write_stride_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """(line, why) for a kernel that raised because a write lands outside its destination, when the write's offset on
    that axis holds ``i * S`` (through locals: ``token_offset = block_idx * key_dim``) for the index ``i`` of a loop
    around the write, the tile written is ``E`` long there (a bare name), the loop's count divides by ``E``
    (``ceildiv(seq_len, block_size)``) and ``S`` is another name: the offset steps by another extent than the tile's
    and the count's. The line named is the one computing ``i * S``; None otherwise."""
    got = _failing_assemble(source, error_line, message)
    if got is None:
        return None
    fn, call, axis, _m = got
    tile = _tile_extent(fn, call.args[0], call.lineno, axis)
    if not isinstance(tile, ast.Name):
        return None
    loops = {n.target.id: n for n in ast.walk(fn) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)
             and n.lineno < call.lineno <= (n.end_lineno or n.lineno) and isinstance(n.iter, ast.Call)
             and n.iter.args}
    hits = []
    for term, line in _through_locals(fn, call.args[1].elts[axis], call.lineno):  # type: ignore[attr-defined]
        if not (isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult)):
            continue
        sides = [term.left, term.right]
        idx = next((s.id for s in sides if isinstance(s, ast.Name) and s.id in loops), None)
        step = next((s for s in sides if not (isinstance(s, ast.Name) and s.id == idx)), None)
        if idx is None or not isinstance(step, ast.Name) or step.id == tile.id:
            continue
        count = _bound_value(fn, loops[idx].iter.args[0], loops[idx].lineno)  # type: ignore[attr-defined]
        divides = any((isinstance(c, ast.BinOp) and isinstance(c.op, ast.FloorDiv) and ast.unparse(c.right) == tile.id)
                      or (isinstance(c, ast.Call) and ast.unparse(c.func).rsplit(".", 1)[-1] == "ceildiv"
                          and len(c.args) == 2 and ast.unparse(c.args[1]) == tile.id) for c in ast.walk(count))
        if divides:
            hits.append((line, idx, step.id))
    if len(hits) != 1:
        return None
    line, idx, step = hits[0]
    return line, (f"the kernel raised at line {error_line}: the write lands outside its destination on axis {axis}; "
                  f"its offset there steps by {idx} * {step} (line {line}) while the tile it writes is {tile.id} long "
                  f"on that axis and the loop over {idx} counts tiles of {tile.id}: the stride is another extent "
                  f"({step} for {tile.id}?) - that line is the bug, not the write")


def static_offsets_length_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """(line, why) for a kernel that raised because a write lands outside its destination, when the write's offset
    on that axis starts at a local read from an offsets array (``out_start = seq_lens[q]``) and the tile's valid
    extent there is bounded by a local read from the next element of the same array, bare (``seq_len =
    seq_lens[q + 1]`` where ``seq_lens[q + 1] - out_start`` was meant): an end read as a length. The line named is
    the length's; None otherwise."""
    got = _failing_assemble(source, error_line, message)
    if got is None:
        return None
    fn, call, axis, _m = got
    starts: dict[str, str] = {}  # offsets array -> the text of the index the start reads it at
    for term, _line in _through_locals(fn, call.args[1].elts[axis], call.lineno):  # type: ignore[attr-defined]
        if isinstance(term, ast.Subscript) and isinstance(term.value, ast.Name):
            starts[term.value.id] = ast.unparse(term.slice)
    value = _bound_value(fn, call.args[0], call.lineno)
    vs = next((k.value for k in value.keywords if k.arg == "valid_shape"), None) \
        if isinstance(value, ast.Call) else None
    if not isinstance(vs, ast.List | ast.Tuple) or axis >= len(vs.elts) or not starts:
        return None
    hits = []
    for st in ast.walk(fn):
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and isinstance(st.value, ast.Subscript) and isinstance(st.value.value, ast.Name)
                and st.value.value.id in starts and st.lineno < call.lineno):
            continue
        index = st.value.slice
        base = starts[st.value.value.id]
        if not (isinstance(index, ast.BinOp) and isinstance(index.op, ast.Add) and ast.unparse(index.left) == base
                and isinstance(index.right, ast.Constant) and index.right.value == 1):
            continue
        feeds = {st.targets[0].id}
        bound = vs.elts[axis]
        chain = [bound]
        while chain:
            e = chain.pop()
            names = {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}
            if names & feeds:
                hits.append(st)
                break
            for n in names:
                a = _last_assignment(fn, n, call.lineno)
                if a is not None and a.lineno > st.lineno and len(chain) < 20:
                    chain.append(a.value)
    if len(hits) != 1:
        return None
    st = hits[0]
    name = st.targets[0].id  # type: ignore[union-attr]
    return st.lineno, (f"the kernel raised at line {error_line}: the write lands outside its destination on axis "
                       f"{axis}; it starts at {ast.unparse(call.args[1].elts[axis])} - an element of the offsets "  # type: ignore[attr-defined]
                       f"array {st.value.value.id!r} - and its valid extent is bounded by {name!r} (line {st.lineno}), "  # type: ignore[attr-defined]
                       f"the next element of the same array read bare ({ast.unparse(st.value)}): an end read as a "
                       "length (the start not subtracted?) - that line is the bug, not the write")


_MOVE_SHAPES_RE = re.compile(r"source shape \[([\d,\s]+)\] != destination shape \[([\d,\s]+)\]")


def static_unpack_order_source(source: str | None, error_line: int | None, message: str,
                               shapes: dict[str, tuple[int, ...]]) -> tuple[int, str] | None:
    """(line, why) for a kernel that raised because a write's source shape differs from its destination's on one
    axis, when the written value is a reshape whose dim there is a name bound by unpacking a kernel argument's shape
    (``n, h, c, w = x.shape`` where ``n, c, h, w`` was meant) and exactly one other position of that argument's shape
    (``shapes``: the captured call's, else the wrapper's inputs by name) holds the extent the destination wants: the unpacking's line; None otherwise."""
    m = _MOVE_SHAPES_RE.search(message or "")
    if not source or error_line is None or m is None:
        return None
    src, dst = _ints(m.group(1)), _ints(m.group(2))
    axes = [a for a, (s, d) in enumerate(zip(src, dst, strict=False)) if s != d]
    if len(src) != len(dst) or len(axes) != 1:
        return None
    axis = axes[0]
    found = _function_at(source, error_line)
    if found is None:
        return None
    _tree, fn = found
    reshapes = [c for c in _reshapes_at(fn, error_line) if len(c.args[1].elts) == len(dst)]  # type: ignore[attr-defined]
    if len(reshapes) != 1:
        return None
    dim = reshapes[0].args[1].elts[axis]  # type: ignore[attr-defined]
    if not isinstance(dim, ast.Name):
        return None
    unpack = None
    for st in ast.walk(fn):
        if isinstance(st, ast.Assign) and st.lineno < error_line and len(st.targets) == 1 \
                and isinstance(st.targets[0], ast.Tuple) and isinstance(st.value, ast.Attribute) \
                and st.value.attr == "shape" and isinstance(st.value.value, ast.Name) \
                and any(isinstance(e, ast.Name) and e.id == dim.id for e in st.targets[0].elts) \
                and (unpack is None or st.lineno > unpack.lineno):
            unpack = st
    if unpack is None:
        return None
    tensor = unpack.value.value.id  # type: ignore[attr-defined]
    shape = shapes.get(tensor)
    names = [e.id if isinstance(e, ast.Name) else None for e in unpack.targets[0].elts]  # type: ignore[attr-defined]
    if shape is None or len(shape) != len(names):
        return None
    p = names.index(dim.id)
    others = [q for q, v in enumerate(shape) if v == dst[axis] and q != p]
    if shape[p] != src[axis] or len(others) != 1:
        return None
    return unpack.lineno, (f"the kernel raised at line {error_line}: the value written is {src[axis]} long on axis "
                           f"{axis} where the destination is {dst[axis]}; that extent is {dim.id!r}, unpacked from "
                           f"{tensor}.shape {tuple(shape)} at position {p} on line {unpack.lineno}, while position "
                           f"{others[0]} ({names[others[0]]!r}) holds the {dst[axis]} wanted: the unpacking lists the "
                           "axes out of order - that line is the bug, not the write")
