"""From the first departing value back to its cause, by repair: replay with ops' values set to what they should be.

Why: the first departing value is often a data movement (the write into the output, a move into running state)
fed by ops whose values have no golden counterpart to check. Value comparison alone then cannot say which of
them is wrong. The replay can: it runs the kernel's program again and, right after an op ran, may replace its
value with a *reference* - the golden slice it should equal (the golden tensor it or the same op elsewhere
matched, or the one it was paired with) - before any later op reads it.

``repair_search`` takes the ops upstream of the first departing value that have a reference, in execution
order, and asks the replay one question per step: "with every candidate up to here set to its reference, does
the first departing value come out right?". The answer is no before the op that introduces the error and yes
from it on (an op upstream of the error already produces its reference value, so setting it changes nothing;
once the erroneous op is set, every later op receives right inputs and the departure is gone), so a binary search
finds it in about log2(n) replays, each stopped right after the departing op. The claim is made only on that
evidence: setting that op to its reference repairs the departure, while setting every candidate before it does
not. The ops the culprit is computed from whose values nothing shows right (walking back, stopping at values that
match the golden and at candidates the replay held at their reference) are the window: the bug is on the
culprit's line or one of theirs.
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runtime import pyast
from runtime.bisect._analyzer import _REDUCE, BAD, GOOD, Analyzer, region_slice
from runtime.bisect._analyzer import CONST as _CONST_OPS
from runtime.bisect._claims import _bare_aliases, _children, _operands_good, corroborated
from runtime.bisect._compare import close
from runtime.bisect._parse import is_jit_def, parse_source
from runtime.bisect._records import Rec
from runtime.sandbox import no_fork

__all__ = ["Repair", "confirm_pairings", "copied_other_quantity", "dropped_axis", "dropped_scale_alias", "flipped_selection_claim", "name_reference", "side_producers",
           "stuck_loop_read", "reference", "repair_search", "unread_operand", "unverified_inputs",
           "walk_back", "wrong_selection"]

log = logging.getLogger(__name__)

_MAX_CANDIDATES = 400


class _Stop(Exception):
    """Raised by the replay hook once the departing op has been seen (the rest of the run is not needed)."""


@dataclass
class Repair:
    """What the repair search found."""

    culprit: Rec | None = None
    window: list[Rec] = field(default_factory=list)
    """ops between the last candidate that does not repair and the first that does (no reference of their own)"""
    evidence: list[str] = field(default_factory=list)
    replays: int = 0
    tested: int = 0
    ref: tuple[str, str, tuple[int, ...]] | None = None
    """the golden reference whose substitution at ``culprit`` repaired the departure"""


def reference(an: Analyzer, r: Rec, weak_ok: bool = False) -> tuple[str, str, tuple[int, ...]] | None:
    """(golden name, layout, region) of the value ``r`` should hold, or None when nothing says.

    In order: the golden it was compared with when it departed (``expected``); a golden tensor the same op
    matched elsewhere at the same region (another pass over the same tile, ``view`` -> ``mul(r, scale)``)."""
    if r.is_write or r.summ is None:
        return None
    st = an.status.get(r.seq)
    if st in GOOD:
        return None
    if r.seq in an.expected:
        g, reg = an.expected[r.seq]
        return g, an.lids.get(r.seq, ""), tuple(reg)
    offs = an.offs.get(r.seq)
    bs = r.bshape
    mine = _operand_key(an, r)
    if offs is not None and bs is not None and r.op not in _MOVES and (mine is not None or weak_ok):
        # (a move computes nothing: no evidence; and where every operand of ``r`` is shown right, only the same op
        # on the same inputs - each operand matching the same golden region - says what it should make: a ``mul``
        # of other values says nothing. Where some operand is not shown right, the sibling is a weak hint only.)
        for s in an.recs:
            if s.op != r.op or s.node == r.node or s.seq not in an.matched or an.status.get(s.seq) != "match":
                continue
            if an.offs.get(s.seq) != offs or s.bshape != bs or s.attrs.get("_fn") != r.attrs.get("_fn"):
                continue
            if mine is not None and _operand_key(an, s) != mine:
                continue
            g, reg = an.matched[s.seq]
            return g, an.lids.get(s.seq, ""), tuple(reg)
    return None


def name_reference(an: Analyzer, r: Rec) -> tuple[str, str, tuple[int, ...]] | None:
    """A golden tensor named like ``r``'s variable (plain layout only), as a *weak* reference: the repair search
    may set ``r`` to it, but a replay holding it there never shows ``r`` right - a kernel local named like a golden
    one (a helper's ``y`` re-bound five times) is often another quantity, and the claim would be wrong."""
    if r.is_write or r.summ is None or an.status.get(r.seq) in GOOD or not r.name or r.name not in an.g.arrays:
        return None
    fr = an.first_region(r, r.name)
    if fr is None or fr[0].startswith("axes"):
        return None
    return r.name, fr[0], tuple(fr[1])


def _operand_key(an: Analyzer, r: Rec) -> tuple | None:
    """What ``r`` computes from, by value: each operand's matched golden region (None if one is not shown right)."""
    key: list[tuple] = []
    for p in an.operand_recs(r):
        if an.status.get(p.seq) not in GOOD or p.seq not in an.matched:
            return None
        g, reg = an.matched[p.seq]
        key.append((g, tuple(reg)))
    key.extend(("tensor", str(ref.get("name"))) for ref in r.inputs or [] if ref.get("kind") == "tensor")
    return tuple(key) if key else None


def _cone(an: Analyzer, observed: Rec) -> list[Rec]:
    """Every op the departing value is computed from (through local tensors written back and read again)."""
    seen: dict[int, Rec] = {}
    stack = [observed]
    while stack and len(seen) < 20000:
        cur = stack.pop()
        for p in an.parents(cur):
            if p.seq not in seen and an.status.get(p.seq) not in ("input", "const"):
                seen[p.seq] = p
                stack.append(p)
    return sorted(seen.values(), key=lambda r: r.seq)


def _downstream(kids: dict[int, list[Rec]], starts: list[Rec], limit: int = 20000) -> Iterator[Rec]:
    """Every record computed from ``starts`` through ``kids`` (parent seq -> readers), each once, depth first, the
    ``starts`` themselves excluded; the walk stops once ``limit`` records are seen (a pairing test and the dropped-scale
    rule both look downstream of every execution of one op)."""
    seen, stack = {x.seq for x in starts}, list(starts)
    while stack and len(seen) < limit:
        for c in kids.get(stack.pop().seq, []):
            if c.seq not in seen:
                seen.add(c.seq)
                stack.append(c)
                yield c


def _golden_slice(an: Analyzer, ref: tuple[str, str, tuple[int, ...]], bs: tuple[int, ...]) -> np.ndarray | None:
    g, lid, reg = ref
    garr = an.g.layout(g, bs, lid)
    if garr is None:
        return None
    return region_slice(garr, reg, bs)


def repair_search(an: Analyzer, observed: Rec, run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                  ) -> Repair:
    """Binary search for the op whose reference value repairs ``observed`` (see the module docstring).

    Args:
        an: the classified analyzer of the run.
        observed: the first departing value (its golden: ``expected`` / the write target's golden).
        run: replays the kernel calls with a hook ``(env, node, v, seq)`` called after every op.
    """
    out = Repair()
    target = _observed_golden(an, observed)
    if target is None:
        return out
    moved = through_moves(an, observed, target)
    cands = []
    weak: set[int] = set()
    for r in _cone(an, observed):
        ref = moved.get(r.seq) or reference(an, r)
        if ref is None:
            ref = reference(an, r, weak_ok=True) or name_reference(an, r)
            if ref is not None:
                weak.add(r.seq)
        if ref is not None and r.bshape is not None and _golden_slice(an, ref, r.bshape) is not None:
            cands.append((r, ref))
    log.debug("repair: %s departs; %d candidates with a reference: %s", observed.where(), len(cands),
              [(r.line, r.op, ref[0]) for r, ref in cands[:30]])
    if not cands:
        return out
    cands = cands[-_MAX_CANDIDATES:]

    def repaired(k: int) -> bool:
        """Set candidates[:k] to their references; does ``observed`` come out right?"""
        out.replays += 1
        return _repairs(an, observed, {r.seq: ref for r, ref in cands[:k]}, run)

    if not repaired(len(cands)):
        log.debug("repair: setting every candidate does not repair %s", observed.where())
        return out  # setting every candidate does not repair it: the error comes from an op without a reference
    lo, hi = 0, len(cands)  # repaired(lo) is False (nothing set: it departs), repaired(hi) is True
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if repaired(mid):
            hi = mid
        else:
            lo = mid
    out.tested = len(cands)
    culprit, ref = cands[hi - 1]
    # the error enters at the culprit or at an op it is computed from (stopping at values shown right) that ran
    # after the last candidate whose reference does not repair the departure
    out.window = unverified_inputs(an, culprit, {r.seq for r, _ in cands[:hi - 1] if r.seq not in weak})
    out.culprit = culprit
    out.ref = ref
    what = f"golden {ref[0]!r}" + (f" (laid out {ref[1]})" if ref[1] else "")
    out.evidence.append(
        f"repair test: in a replay where {culprit.where()} holds the value of {what} it should hold, "
        f"{observed.where()} matches the golden; "
        + ("with every op before it set likewise it still departs" if hi > 1 else "left as computed, it departs")
        + f" ({out.replays} replays, {len(cands)} ops with a known value upstream)")
    return out


_MOVES = frozenset({"assemble", "cast", "move", "view", "reshape", "copy"})
"""ops that carry a value on without computing (a cast only rounds it): the value before them is the value after"""


def through_moves(an: Analyzer, observed: Rec, target: tuple[str, str, tuple[int, ...]],
                  ) -> dict[int, tuple[str, str, tuple[int, ...]]]:
    """References for the ops a departing write carries on: walking back from it over data movement (``cast``,
    ``move``, ``view`` ...) of one operand and the same shape, every op on the way - and the first op that computes
    - should hold the write's golden region. Setting the computing op to it then tests whether its output (not an
    input) is where the value departs."""
    out: dict[int, tuple[str, str, tuple[int, ...]]] = {}
    if not observed.is_write or observed.bshape is None:
        return out
    cur = observed
    ref = target
    for _ in range(16):
        ps = [p for p in an.parents(cur) if an.status.get(p.seq) not in ("input", "const")]
        if len(ps) != 1 or ps[0].is_write or ps[0].bshape is None:
            break
        p = ps[0]
        if p.bshape != cur.bshape:
            # through a reshape of the whole golden (a kernel computing [4, 8, 256] and writing it as [32, 256]):
            # the value before it is the golden laid out in its shape
            whole = _whole_layout(an, ref, cur, p.bshape)
            if whole is None:
                break
            ref = whole
        if an.status.get(p.seq) in GOOD:
            break
        out[p.seq] = ref
        if p.op not in _MOVES:
            break
        cur = p
    return out


def _whole_layout(an: Analyzer, ref: tuple[str, str, tuple[int, ...]], cur: Rec, shape: tuple[int, ...],
                  ) -> tuple[str, str, tuple[int, ...]] | None:
    """``ref`` (a region covering all of golden ``ref[0]``) laid out in ``shape`` (same size), or None."""
    g, _lid, reg = ref
    garr = an.g.arrays[g]
    if any(reg) or cur.bshape is None or int(np.prod(cur.bshape)) != garr.size or int(np.prod(shape)) != garr.size:
        return None
    for lid, arr in an.g.layouts(g, shape):
        if tuple(arr.shape) == tuple(shape):
            return g, lid, (0,) * len(shape)
    return None


def unverified_inputs(an: Analyzer, culprit: Rec, held: set[int]) -> list[Rec]:
    """The ops ``culprit`` is computed from whose values nothing shows right: not matching the golden and not
    among the ops the replay held at their reference (``held``); the walk stops at both. Setting the culprit
    repairs the departure and setting everything before it does not, so the error is in the culprit or in one
    of these."""
    seen: dict[int, Rec] = {}
    stack = [culprit]
    while stack and len(seen) < 5000:
        cur = stack.pop()
        for p in an.parents(cur):
            if p.seq in seen or p.seq in held or an.status.get(p.seq) in GOOD:
                continue
            seen[p.seq] = p
            stack.append(p)
    return sorted(seen.values(), key=lambda r: -r.seq)


def _observed_golden(an: Analyzer, r: Rec) -> tuple[str, str, tuple[int, ...]] | None:
    if r.is_write:
        g = an.target_golden(r)
        offs = an.offs.get(r.seq)
        if g is None or offs is None:
            return None
        return g, "", tuple(offs)
    if r.seq in an.expected:
        g, reg = an.expected[r.seq]
        return g, an.lids.get(r.seq, ""), tuple(reg)
    if an.status.get(r.seq) in BAD and r.seq in an.matched:
        g, reg = an.matched[r.seq]
        return g, an.lids.get(r.seq, ""), tuple(reg)
    return None


def _value_of(env: Any, node: Any, v: tuple) -> np.ndarray:
    g = env.geom or {}
    val = np.asarray(g.get("value", v[0]))
    valid = g.get("valid", v[1])
    if valid is not None and len(valid) == val.ndim:
        val = val[tuple(slice(0, max(0, int(n))) for n in valid)]
    return val


def _matches(an: Analyzer, env: Any, node: Any, v: tuple, r: Rec, target: tuple[str, str, tuple[int, ...]]) -> bool:
    return _value_matches(an, _value_of(env, node, v), target)


def _value_matches(an: Analyzer, val: np.ndarray, target: tuple[str, str, tuple[int, ...]]) -> bool:
    g, lid, reg = target
    garr = an.g.layout(g, tuple(val.shape), lid)  # (a write into an output of another rank: its shaped layout)
    if garr is None:
        return False
    sl = region_slice(garr, reg, tuple(val.shape))
    return sl is not None and close(val, sl, an.g.atol, an.g.rtol)


def _substitute(an: Analyzer, env: Any, node: Any, ref: tuple[str, str, tuple[int, ...]],
                bshape: tuple[int, ...] | None = None) -> None:
    """Set the op's value (its valid box) to the golden region ``ref``. ``bshape``: the box the analysis compared
    (a tile computed from a padded one keeps the emulator's poison past it: only the part before is set)."""
    key = node.op.out_key
    cur = env.buf.get(key) if key is not None else None
    if cur is None:
        return
    arr, valid = cur
    ext = [int(n) for n in (valid if valid is not None else arr.shape)]
    if bshape is not None and len(bshape) == len(ext):
        ext = [min(e, int(b)) for e, b in zip(ext, bshape, strict=True)]
    box = tuple(slice(0, max(0, n)) for n in ext)
    bs = tuple(int(s.stop) for s in box)
    sl = _golden_slice(an, ref, bs)
    if sl is None:
        return
    new = np.array(arr, copy=True)
    new[box] = np.asarray(sl).astype(new.dtype)
    env.buf[key] = (new, valid)


_MAX_WALK_REPLAYS = 24
"""replays the walk-back may spend (each stops right after the departing value)"""


def _guesses(an: Analyzer, r: Rec, ceiling: int, limit: int = 2) -> list[tuple[str, str]]:
    """Golden tensors ``r`` may stand for, nearest in the golden's data flow first: after the golden its operands
    match (``floor``), not after ``ceiling`` (the golden the repair showed downstream), with a region that fits
    its tile in every execution. A golden some other kernel value reproduces belongs to that value - unless it
    is one of ``r``'s own operands (the golden's step was an identity there: a scale of 1, a mask of zeros)."""
    floor = an._operand_order(r)
    if floor >= ceiling:
        # a wrong operand the golden computes later than the value itself (`c = o_gate * prev` for `f_gate * prev`,
        # fifth gym corpus s25): no golden lies between the latest operand and the ceiling - count from the earliest
        floor = an._operand_order(r, lowest=True)
    if floor < 0:
        floor = _ancestor_order(an, r)
    if floor < 0:
        return []
    own = {p.seq for p in an.operand_recs(r)}
    running = feeds_local_state(an, r) and _partial(an, r)
    mine = {_operand_key(an, x) for x in an.recs if (x.file, x.line, x.op) == (r.file, r.line, r.op)} - {None}
    out: list[tuple[str, str]] = []
    for g, o in sorted(an.g.order.items(), key=lambda kv: kv[1]):
        if not floor < o <= ceiling or an.g.kinds.get(g) == "input" or an.g.is_input_copy(g):
            continue
        if not an.g.aligned(g, r):
            continue  # another iteration's member of a family (``Golden.align``)
        # (a value computed from the very same inputs - another pass over the same tile, ``exp(r - gmax)`` in the
        # sum pass and in the normalize pass - does not own the golden: it is what ``r`` should make, whatever op
        # ``r`` applies; only a guess, the replay decides)
        taken = any(x.summ is not None and g in x.summ.hits and an.status.get(x.seq) in GOOD and x.seq not in own
                    and x.node != r.node and _operand_key(an, x) not in mine for x in an.recs)
        if taken:
            continue
        fr = an.first_region(r, g)
        if fr is None:
            continue
        if running and g not in an.g.align:  # (a family member is per iteration by construction: no share)
            f = next((x.summ.fit[g] for x in an.recs if x.node == r.node and x.summ is not None
                      and g in x.summ.fit), None)
            if f is None or f[1] is None:
                continue  # a partial value (one chunk of running state) is never set to the whole's golden
        # (members of iteration families - derived goldens, ``_online`` - are many and close together in the data
        # flow: they get a budget of their own, so the goldens nearest in data flow do not crowd them out)
        family = g in an.g.align
        if sum((n in an.g.align) == family for n, _ in out) >= (3 * limit if family else limit):
            continue
        out.append((g, fr[0]))
        if sum(n not in an.g.align for n, _ in out) >= limit and \
                (not an.g.align or sum(n in an.g.align for n, _ in out) >= 3 * limit):
            break
    return out


def _partial(an: Analyzer, r: Rec, limit: int = 64) -> bool:
    """``r``'s value may be one chunk's share of a golden total: it, or an op it is computed from through values no
    golden shows right, reduces or contracts an axis (a per-tile ``sum``, a ``matmul`` over one KV tile). An
    elementwise value of a tile (``exp(r - gmax)``) is a slice of its golden, not a share of it."""
    stack, seen = [r], {r.seq}
    while stack and len(seen) < limit:
        cur = stack.pop()
        if cur.op in _REDUCE or cur.op == "matmul":
            return True
        for p in an.parents(cur):
            if p.seq not in seen and an.status.get(p.seq) not in GOOD:
                seen.add(p.seq)
                stack.append(p)
    return False


def _ancestor_order(an: Analyzer, r: Rec, limit: int = 200) -> int:
    """Golden data-flow position of the nearest values ``r`` is computed from that match the golden (-1: none)."""
    best, seen, stack = -1, {r.seq}, [r]
    while stack and len(seen) < limit:
        for p in an.operand_recs(stack.pop()):
            if p.seq in seen:
                continue
            seen.add(p.seq)
            if an.status.get(p.seq) in GOOD and p.seq in an.matched:
                best = max(best, an.g.order[an.matched[p.seq][0]])
            else:
                stack.append(p)
    return best


def _node_fit(an: Analyzer, r: Rec, g: str) -> tuple[float, float | None] | None:
    return next((x.summ.fit[g] for x in an.recs if x.node == r.node and x.summ is not None and g in x.summ.fit),
                None)


def _wrong_constant(an: Analyzer, r: Rec, g: str) -> tuple[Rec, float, float] | None:
    """``r`` applies a scalar constant (``mul`` / ``div`` with one tensor operand) to a value that is ``k`` times
    golden ``g`` and makes ``k'`` times it (``k'`` != 1): the constant that should have made it ``g`` is wrong here
    (``s / (n // 2)`` where the golden takes ``mean = s / n``). Returns (operand, k, k')."""
    ops = an.operand_recs(r)
    tensors = [ref for ref in r.inputs or [] if ref.get("kind") == "tensor"]
    if r.op not in ("mul", "div") or len(ops) != 1 or tensors:
        return None
    fp, fr = _node_fit(an, ops[0], g), _node_fit(an, r, g)
    if fp is None or fr is None or fp[1] is None or fr[1] is None or min(fp[0], fr[0]) < 0.999:
        return None
    return ops[0], fp[1], fr[1]


def _scaled_before_sum(an: Analyzer, r: Rec, g: str) -> tuple[Rec, Rec, float] | None:
    """``r`` sums (a linear reduction) the values of one op ``q`` that applies a scalar constant (``mul`` / ``div``
    with one tensor operand) to a value matching the golden, and ``r`` makes ``k`` times golden ``g`` (``k`` != 1):
    the factor passes through the sum unchanged, so the constant ``q`` applies is wrong (``sum(y * (2 / H))`` where
    the golden takes ``mean(y)``). Returns (q, q's operand, k)."""
    if r.op not in ("sum", "mean"):
        return None
    ops = an.operand_recs(r)
    if len(ops) != 1 or any(ref.get("kind") == "tensor" for ref in r.inputs or []):
        return None
    q = ops[0]
    qs = an.operand_recs(q)
    if q.op not in ("mul", "div") or len(qs) != 1 or any(ref.get("kind") == "tensor" for ref in q.inputs or []):
        return None
    if an.status.get(qs[0].seq) not in GOOD or an.status.get(q.seq) in GOOD:
        return None
    fr = _node_fit(an, r, g)
    if fr is None or fr[1] is None or fr[0] < 0.999:
        return None
    return q, qs[0], fr[1]


def feeds_local_state(an: Analyzer, r: Rec, depth: int = 6) -> bool:
    """``r`` (through values without a golden counterpart) is written into a local tensor, not a kernel argument:
    running state (an online softmax's sum, a tiled reduction's accumulator), so its value may be a partial one
    by design - one chunk's share of a golden total."""
    if not an.arg_shapes:
        return False
    kids = an.kids()  # (every reader of a value comes after it: the records from ``r`` on are the ones walked)
    frontier, seen = [r], {r.seq}
    for _ in range(depth):
        nxt = []
        for x in frontier:
            for c in kids.get(x.seq, []):
                if c.seq in seen:
                    continue
                seen.add(c.seq)
                if c.is_write and c.target and c.target not in an.arg_shapes:
                    return True
                if an.status.get(c.seq) not in GOOD:
                    nxt.append(c)
        frontier = nxt
    return False


def walk_back(an: Analyzer, observed: Rec, start: Rec, window: list[Rec], ceiling: int,
              run: Callable[[Callable[[Any, Any, tuple, int], None]], None]) -> Repair:
    """From the op the repair search stopped at (``start``: its value repairs the departure, but the ops it is
    computed from have no golden value of their own) back to the cause.

    The ops of ``window`` have no golden counterpart by value. For each, earliest first, the golden tensors its
    place in the data flow allows (:func:`_guesses`) are tried one at a time: a replay sets *every* execution of
    the op (each at its own region) to that golden and nothing else. The first op whose substitution alone
    repairs the departing value, and whose operands all match the golden, is the culprit: its inputs are right,
    and its output - set right - is all it takes to make the departure disappear. A guess that is not the
    quantity the op computes does not repair anything, so it never makes a claim; it only costs a replay."""
    out = Repair()
    tried = 0
    ref = an.expected.get(start.seq)
    g0 = ref[0] if ref is not None else next((g for g, o in an.g.order.items() if o == ceiling), None)
    const = _wrong_constant(an, start, g0) if g0 is not None else None
    if const is not None:  # the op the repair stopped at applies a wrong constant to a multiple of its golden
        p, k, k2 = const
        out.culprit = start
        an.status[start.seq] = "mismatch"
        out.evidence.append(f"{start.where()} repairs the departure when set to golden {g0!r}; its operand "
                            f"({p.where()}) is {k:.4g} times {g0!r} and it makes {k2:.4g} times {g0!r}: the "
                            "constant it applies is wrong")
        return out
    order = sorted({r.node: r for r in window if r.node is not None and not r.is_write
                    and r.op not in _MOVES}.values(), key=lambda r: r.seq)
    log.debug("walk-back from %s over %s", start.where(), [(r.line, r.op) for r in order])
    for r in order:
        if tried >= _MAX_WALK_REPLAYS:
            out.evidence.append(f"walk-back stopped after {tried} replays")
            break
        execs = [x for x in an.recs if x.node == r.node and x.seq <= observed.seq and x.bshape is not None]
        for g, lid in _guesses(an, r, ceiling):
            subs: dict[int, tuple[str, str, tuple[int, ...]]] = {}
            for x in execs:
                gx = _member(an, g, x)
                if gx is None:
                    continue  # (no member of the family for this iteration: left as computed)
                fr = an.first_region(x, gx)
                if fr is None or fr[0] != lid:
                    subs = {}
                    break
                subs[x.seq] = (gx, lid, tuple(fr[1]))
            if not subs:
                continue
            tried += 1
            if _repairs(an, observed, subs, run):
                from runtime.bisect._claims import _operands_good  # (no import cycle at module load)

                operands_good = _operands_good(an, r)
                const = _wrong_constant(an, r, g) if not operands_good else None
                if const is not None:
                    p, k, k2 = const
                    out.culprit = r
                    out.replays = tried
                    an.status[r.seq] = "mismatch"
                    an.expected.setdefault(r.seq, (g, subs[r.seq][2] if r.seq in subs else next(iter(subs.values()))[2]))
                    out.evidence.append(
                        f"walk-back: in a replay where only {r.where()} holds golden {g!r}, {observed.where()} matches "
                        f"the golden; its operand ({p.where()}) is {k:.4g} times {g!r} and it makes {k2:.4g} times "
                        f"{g!r}: the constant it applies is wrong ({tried} replays)")
                    return out
                scaled = _scaled_before_sum(an, r, g) if not operands_good else None
                if scaled is not None:
                    q, p, k = scaled
                    out.culprit = q
                    out.replays = tried
                    an.status[q.seq] = "mismatch"
                    out.evidence.append(
                        f"walk-back: in a replay where only {r.where()} holds golden {g!r}, {observed.where()} "
                        f"matches the golden; it sums the values of {q.where()}, which applies a constant to "
                        f"{p.where()} (matching the golden), and it makes {k:.4g} times {g!r}: a factor passes "
                        f"through a sum unchanged, so the constant {q.where()} applies is wrong ({tried} replays)")
                    return out
                if not operands_good:
                    # (the bug is in it or in the values it is computed from: a selection among those that, taking
                    # the other end of its input, repairs the departure is named)
                    if _flip_claim(an, out, observed, start, [x for x in order if x.seq < r.seq]
                                   + side_producers(an, [r, *order]), run, tried):
                        return out
                    out.window = [r]
                    out.evidence.append(f"repair test: setting {r.where()} (every execution) to golden {g!r} "
                                        f"repairs {observed.where()}, but its operands are not shown right")
                    out.replays = tried
                    return out
                reader = _consumer_repairs_too(an, r, {r.node}, observed, subs, an.kids(through_tensors=True), run,
                                               out.evidence)
                if reader is not None:
                    # (the same golden set at the op reading it repairs as well: which of the two computes it is
                    # not shown - both are suspects, the reader first; s45 - the suspects' own replays, a dropped
                    # scale alias or a matmul variant, may still separate them: ``_auto``)
                    out.window = [reader]
                    out.evidence.append(f"repair test: setting {r.where()} (every execution) to golden {g!r} "
                                        f"repairs {observed.where()}, and so does setting {reader.where()}, which reads "
                                        "it, instead: which of the two computes it is not shown")
                    out.replays = tried + 1
                    return out
                out.culprit = r
                out.replays = tried
                an.status[r.seq] = "mismatch"  # shown by the repair: its golden value removes the departure
                an.expected.setdefault(r.seq, (g, subs[r.seq][2] if r.seq in subs else next(iter(subs.values()))[2]))
                if lid:
                    an.lids.setdefault(r.seq, lid)
                out.evidence.append(
                    f"walk-back: the values {start.where()} is computed from have no golden counterpart; in a replay "
                    f"where "
                    f"only {r.where()} (every execution, {len(subs)}) holds golden {g!r}"
                    + (f" (laid out {lid})" if lid else "") + f", {observed.where()} matches the golden, and every "
                    f"operand of it matches: the departure starts there ({tried} replays)")
                return out
    if _flip_claim(an, out, observed, start, order + side_producers(an, order), run, tried):
        return out
    if tried < _MAX_WALK_REPLAYS:
        variant = _matmul_variant(an, observed, order, run, _MAX_WALK_REPLAYS - tried)
        if variant is not None:
            r, what, n = variant
            out.culprit = r
            out.replays = tried + n
            an.status[r.seq] = "mismatch"
            out.evidence.append(
                f"walk-back: the values {start.where()} is computed from have no golden counterpart; {r.where()} "
                f"multiplies operands that match the golden, and in a replay where only it (every execution) is "
                f"computed {what}, {observed.where()} matches the golden: its operand order or transpose flags are "
                f"wrong ({tried + n} replays)")
            return out
    if tried < _MAX_WALK_REPLAYS:
        extra = _superfluous(an, observed, order, run, _MAX_WALK_REPLAYS - tried)
        if extra is not None:
            r, n = extra
            out.culprit = r
            out.replays = tried + n
            an.status[r.seq] = "mismatch"
            out.evidence.append(
                f"walk-back: the values {start.where()} is computed from have no golden counterpart; {r.where()} "
                f"computes from one operand that matches the golden, and in a replay where it (every execution) "
                f"passes that operand on unchanged, {observed.where()} matches the golden: the op should not be "
                f"there (a step applied twice, or one the golden does not take) ({tried + n} replays)")
            return out
    out.replays = tried
    return out


def _superfluous(an: Analyzer, observed: Rec, order: list[Rec],
                 run: Callable[[Callable[[Any, Any, tuple, int], None]], None], budget: int) -> tuple[Rec, int] | None:
    """(the op of ``order`` whose removal repairs ``observed``, replays spent), or None.

    An op with one tensor operand that matches the golden and a value of that operand's shape, when a replay in
    which every execution of it passes its operand on unchanged makes the departing value match: the op is one the
    golden does not take (``mul(mul(update, lr), lr)``: the learning rate applied twice, s38b). Its golden has no
    value to set (the golden never computes it), so the walk-back's substitutions cannot show it."""
    from runtime.bisect._claims import _operands_good  # (no import cycle at module load)

    target = _observed_golden(an, observed)
    if target is None:
        return None
    spent = 0
    for r in order:
        if spent >= budget:
            break
        if r.is_write or r.op in _MOVES or not _operands_good(an, r):
            continue
        execs = [x for x in an.recs if x.node == r.node and x.seq <= observed.seq]
        feeds: dict[int, int] = {}  # the operand's seq -> the execution's seq
        for x in execs:
            ops = [p for p in an.operand_recs(x) if p.shape is not None]
            if len(ops) != 1 or ops[0].bshape is None or x.bshape is None or tuple(ops[0].bshape) != tuple(x.bshape):
                feeds = {}
                break
            feeds[ops[0].seq] = x.seq
        if not feeds:
            continue
        held: dict[int, np.ndarray] = {}
        got: list[bool] = []

        def hook(env: Any, node: Any, v: tuple, seq: int, feeds: dict[int, int] = feeds,
                 held: dict[int, np.ndarray] = held, got: list[bool] = got) -> None:
            key = node.op.out_key
            if seq in feeds and key is not None and key in env.buf:
                held[feeds[seq]] = np.array(env.buf[key][0], copy=True)
            if seq in held and key is not None and key in env.buf:
                arr, valid = env.buf[key]
                if held[seq].shape == np.asarray(arr).shape:
                    env.buf[key] = (held[seq].astype(np.asarray(arr).dtype), valid)
            if seq == observed.seq:
                got.append(_matches(an, env, node, v, observed, target))
                raise _Stop
            if seq > observed.seq:
                raise _Stop

        spent += 1
        try:
            run(hook)
        except _Stop:
            pass
        if got and got[0]:
            return r, spent
    return None


def side_producers(an: Analyzer, recs: list[Rec]) -> list[Rec]:
    """The multi-output ops (``topk``) whose other outputs ``recs`` read (``_replay.link_other_outputs``' marks)."""
    out: dict[int, Rec] = {}
    for r in recs:
        for ref in r.inputs or []:
            src = ref.get("of")
            if isinstance(src, int) and src in an.by_seq:
                out[src] = an.by_seq[src]
    return sorted(out.values(), key=lambda x: x.seq)


def flipped_selection_claim(an: Analyzer, observed: Rec, start: Rec, recs: list[Rec],
                            run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                            evidence: list[str]) -> Rec | None:
    """A ``topk`` whose indices ``recs`` read that, taking the other end of its input, repairs the departure
    (:func:`_selection_flip`), named with its evidence; None."""
    out = Repair()
    if not _flip_claim(an, out, observed, start, side_producers(an, recs), run, 0):
        return None
    evidence.extend(out.evidence)
    return out.culprit


def _flip_claim(an: Analyzer, out: Repair, observed: Rec, start: Rec, order: list[Rec],
                run: Callable[[Callable[[Any, Any, tuple, int], None]], None], tried: int) -> bool:
    """The walk-back's claim on a ``topk`` / ``sort`` of ``order`` that takes the wrong end of its input
    (:func:`_selection_flip`), set on ``out``; whether one was found."""
    if tried >= _MAX_WALK_REPLAYS:
        return False
    flipped = _selection_flip(an, observed, order, run, _MAX_WALK_REPLAYS - tried)
    if flipped is None:
        return False
    r, what, n = flipped
    out.culprit = r
    out.replays = tried + n
    an.status[r.seq] = "mismatch"
    out.evidence.append(
        f"walk-back: the values {start.where()} is computed from have no golden counterpart; in a replay where only "
        f"{r.where()} (every execution) selects {what}, {observed.where()} matches the golden: it selects the wrong "
        f"end of its input ({tried + n} replays)")
    return True


def _replay_judged(an: Analyzer, observed: Rec, run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                   alter: Callable[[Any, Any, tuple, int], bool | None]) -> bool:
    """One replay with ``alter(env, node, v, seq)`` called after every op: it changes what an op computed (or raises
    ``_Stop`` when it cannot), and may judge the first departing value itself by returning a bool (the value it
    recomputed there). True when the first departing value ``observed`` then matches its golden; a replay the change
    breaks repairs nothing. The one replay-and-judge step of the repair rules that try what an op could have meant
    (the other end of a selection, a kept axis, a matmul variant, a read that steps with its loop)."""
    got: list[bool] = []

    def hook(env: Any, node: Any, v: tuple, seq: int) -> None:
        judged = alter(env, node, v, seq)
        if judged is not None:
            got.append(judged)
            raise _Stop
        if seq == observed.seq:
            target = _observed_golden(an, observed)
            got.append(target is not None and _matches(an, env, node, v, observed, target))
            raise _Stop
        if seq > observed.seq:
            raise _Stop

    try:
        run(hook)
    except _Stop:
        pass
    except Exception:  # noqa: BLE001 - a replay the change breaks repairs nothing
        pass
    return bool(got and got[0])


def _flipped_selection(x: np.ndarray, valid: tuple[int, ...], kk: int, largest: bool,
                        ) -> tuple[np.ndarray, np.ndarray] | None:
    """The (values, indices) a ``topk`` / ``sort`` of ``x`` (valid part ``valid``) over its last axis makes when it
    takes the other end (``largest`` is the flag it ran with); None where that cannot be made as the op made it."""
    n = int(valid[-1])
    if kk > n:
        return None
    box = tuple(slice(0, int(m)) for m in valid[:-1]) + (slice(0, n),)
    xv = np.asarray(x)[box]
    xf = xv.astype(np.float64)
    order = np.argsort(xf if largest else -xf, axis=-1, kind="stable")[..., :kk]
    return np.take_along_axis(xv, order, axis=-1), order.astype(np.int32)


def _selection_flip(an: Analyzer, observed: Rec, order: list[Rec],
                    run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                    budget: int) -> tuple[Rec, str, int] | None:
    """A ``topk`` / ``sort`` of ``order`` (ops without a golden between the last right value and the departure) that,
    taking the other end of its input in every execution (``largest`` flipped, one replay), makes the first departing
    value match: (that op, what it selects then, replays spent).

    Why: the indices a top-k picks have no golden of their own (``_, ids = torch.topk(..)`` keeps only what it
    gathers), so no golden value can be set on it and the ``gather`` reading them was named; the flipped selection is
    computed from the op's own input instead. A flip the kernel did not mean repairs nothing."""
    spent = 0
    for r in order:
        if r.op not in ("topk", "sort") or spent >= budget:
            continue
        execs = {x.seq for x in an.recs if x.node == r.node and x.seq <= observed.seq}
        made: list[bool] = []

        def alter(env: Any, node: Any, v: tuple, seq: int, execs: set[int] = execs,
                  made: list[bool] = made) -> bool | None:
            if seq in execs:
                p = node.op.params
                if node.op.kind != "sort" or p.get("kk") is None:
                    raise _Stop
                try:
                    x, vx = env.get(p["src"])
                except Exception:  # noqa: BLE001 - its input no longer held: the flip cannot be made
                    raise _Stop from None
                fl = _flipped_selection(x, tuple(vx), int(p["kk"]), bool(p["largest"]))
                if fl is None:
                    raise _Stop
                for key, new in zip((p["vals"], p["idx"]), fl, strict=True):
                    cur = env.buf.get(key)
                    if cur is None or tuple(cur[0].shape) != tuple(new.shape):
                        raise _Stop
                    env.buf[key] = (new.astype(cur[0].dtype), cur[1])
                made.append(bool(p["largest"]))
            return None

        judged = _replay_judged(an, observed, run, alter)
        if not made:
            continue
        spent += 1
        if judged and len(set(made)) == 1:
            return r, ("the smallest values (largest=False)" if made[0] else "the largest values (largest=True)"), spent
    return None


_BROADCASTING = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "maximum": np.maximum,
                 "minimum": np.minimum}
"""binary functions a recomputation with an operand's axis restored may apply (``dropped_axis``)"""


def dropped_axis(an: Analyzer, culprit: Rec, observed: Rec,
                 run: Callable[[Callable[[Any, Any, tuple, int], None]], None], evidence: list[str],
                 budget: int = 3) -> Rec | None:
    """The reduction that dropped the axis it reduced (``sum(x, -1, keepdim=False)``) where the named op broadcasts
    its result along the wrong axis, or None.

    Why: a row statistic ``d`` of ``[S]`` matches the golden's ``[S, 1]`` by value, so ``sub(dp, d)`` - subtracting it
    along the columns - was named: its operands "all match". The evidence: a replay in which every execution of the
    named op is recomputed with that operand given its reduced axis back (``[S, 1]``, nothing else changed) makes the
    first departing value match."""
    if culprit.is_write or culprit.seq < 0 or culprit.op not in _BROADCASTING:
        return None
    spent = 0
    seen: set[int | None] = set()
    for p in an.operand_recs(culprit):
        red = _reduction_source(an, p)
        if red is None or red.node in seen or spent >= budget:
            continue
        seen.add(red.node)
        reds = {x.seq for x in an.recs if x.node == red.node and x.seq <= observed.seq}
        execs = {x.seq for x in an.recs if x.node == culprit.node and x.seq <= observed.seq}
        keys: dict[int, int] = {}  # the reduction's output key -> the axis it reduced
        made: list[int] = []

        def alter(env: Any, node: Any, v: tuple, seq: int, reds: set[int] = reds, execs: set[int] = execs,
                  keys: dict[int, int] = keys, made: list[int] = made) -> bool | None:
            prm = node.op.params
            if seq in reds:
                if node.op.kind != "reduce" or prm.get("keepdim") or node.op.out_key is None:
                    raise _Stop
                keys[node.op.out_key] = int(prm["ax"])
            elif seq in execs:
                if node.op.kind != "binary" or prm.get("b") is None or prm.get("alpha") is not None \
                        or prm.get("fn") not in _BROADCASTING or node.op.out_key is None:
                    raise _Stop
                cur = env.buf.get(node.op.out_key)
                if cur is None:
                    raise _Stop
                xs = []
                for side in ("a", "b"):
                    x = np.asarray(env.get(prm[side])[0])
                    if np.may_share_memory(x, cur[0]):
                        raise _Stop  # (the op wrote over a dead operand: nothing to recompute from)
                    ax = keys.get(prm[side])
                    if ax is not None and 0 <= ax <= x.ndim:
                        x = x.reshape(x.shape[:ax] + (1,) + x.shape[ax:])
                        made.append(ax)
                    elif prm.get(f"pad_{side}"):
                        x = x.reshape((1,) * int(prm[f"pad_{side}"]) + x.shape)  # (the op's own rank padding)
                    xs.append(x.astype(np.float64))
                with np.errstate(all="ignore"):
                    new = _BROADCASTING[prm["fn"]](xs[0], xs[1])
                if tuple(new.shape) != tuple(np.shape(cur[0])):
                    raise _Stop
                env.buf[node.op.out_key] = (new.astype(np.asarray(cur[0]).dtype), cur[1])
                if seq == observed.seq:  # (the named op departs itself: its recomputed value is the one to compare)
                    target = _observed_golden(an, observed)
                    val = env.buf[node.op.out_key][0]
                    box = tuple(slice(0, int(n)) for n in (cur[1] if cur[1] is not None else val.shape))
                    return target is not None and len(box) == val.ndim and _value_matches(an, val[box], target)
            return None

        judged = _replay_judged(an, observed, run, alter)
        if not made:
            continue
        spent += 1
        if judged:
            an.status[red.seq] = "misplaced"  # (its values are right; the axis they lie along is not)
            evidence.append(
                f"{culprit.where()} departs although the values it computes from match the golden; but its operand "
                f"from {red.where()} lost the axis {made[0]} that reduction reduced, and in a replay where "
                f"{culprit.where()} (every execution) is computed with that axis given back (extent 1, nothing else "
                f"changed) {observed.where()} matches the golden: the reduction drops its axis (keepdim=False), so "
                f"its result is broadcast along the wrong one")
            return red
    return None


def _reduction_source(an: Analyzer, p: Rec, depth: int = 4) -> Rec | None:
    """``p`` or the op it carries on through data movement of one operand: a reduction whose result has fewer axes
    than its operand (its reduced axis dropped), or None."""
    cur = p
    for _ in range(depth):
        if cur.op in _REDUCE:
            src = an.operand_recs(cur)
            if len(src) == 1 and cur.shape is not None and src[0].shape is not None \
                    and len(cur.shape) < len(src[0].shape):
                return cur
            return None
        if cur.op not in _MOVES:
            return None
        ops = an.operand_recs(cur)
        if len(ops) != 1:
            return None
        cur = ops[0]
    return None


def _matmul_variants(a: np.ndarray, b: np.ndarray, ta: bool, tb: bool,
                     shape: tuple[int, ...]) -> list[tuple[str, np.ndarray]]:
    """The products a matmul of operands ``a``, ``b`` (as stored, valid part) could have meant, other than the one
    it computed (``ta``/``tb``: its own flags): every other choice of transpose flags, and of operand order, whose
    result has the shape it made (a flag or an order that changes the shape would have been refused)."""
    def t(x: np.ndarray, on: bool) -> np.ndarray:
        return np.swapaxes(x, -1, -2) if on else x

    out: list[tuple[str, np.ndarray]] = []
    for swap in (False, True):
        x, y = (b, a) if swap else (a, b)
        for fa in (False, True):
            for fb in (False, True):
                if not swap and (fa, fb) == (ta, tb):
                    continue
                xa, yb = t(x, fa), t(y, fb)
                if xa.ndim < 2 or yb.ndim < 2 or xa.shape[-1] != yb.shape[-2]:
                    continue
                with no_fork():  # a threaded BLAS call while another thread forks can hang the fork (`no_fork`)
                    r = np.matmul(xa.astype(np.float32), yb.astype(np.float32))
                if tuple(r.shape) != tuple(shape):
                    continue
                what = ("with its operands swapped, " if swap else "") + f"with a_trans={fa}, b_trans={fb}"
                out.append((what, r))
    return out


def _matmul_variant(an: Analyzer, observed: Rec, order: list[Rec],
                    run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                    budget: int) -> tuple[Rec, str, int] | None:
    """A matmul of ``order`` (ops without a golden between the last right value and the departure) whose operands
    match the golden and which, computed with other transpose flags or the other operand order in every execution
    (one replay per variant), makes the first departing value match: (that matmul, the variant, replays spent).

    The golden names the product the kernel needed only downstream (``dk = ds^T @ q * scale``: the tile's partial
    product is no golden tensor), so no golden value can be set on the matmul itself; the variant is computed
    from its own operands instead. A variant that is not what the kernel should compute repairs nothing."""
    from runtime.bisect._claims import _operands_good  # (no import cycle at module load)

    spent = 0
    for r in order:
        if r.op != "matmul" or not _operands_good(an, r):
            continue
        for k in range(4 * 2):
            if spent >= budget:
                return None
            chosen: list[str] = []
            execs = {x.seq for x in an.recs if x.node == r.node and x.seq <= observed.seq}

            def alter(env: Any, node: Any, v: tuple, seq: int, k: int = k, execs: set[int] = execs,
                      chosen: list[str] = chosen) -> bool | None:
                if seq in execs:
                    p = node.op.params
                    a, b, arr, valid, box = _held_operands(env, node)
                    shape = tuple(int(s.stop) for s in box)
                    vs = _matmul_variants(a, b, bool(p.get("a_trans")), bool(p.get("b_trans")), shape)
                    if k >= len(vs):
                        raise _Stop
                    chosen.append(vs[k][0])
                    new = np.array(arr, copy=True)
                    new[box] = vs[k][1].astype(new.dtype)
                    env.buf[node.op.out_key] = (new, valid)
                return None

            judged = _replay_judged(an, observed, run, alter)
            if not chosen:
                break  # no variant k (or none could be made): the next matmul
            spent += 1
            if judged and len(set(chosen)) == 1:
                return r, chosen[0], spent
    return None


def _member(an: Analyzer, g: str, x: Rec) -> str | None:
    """The golden execution ``x`` of an op is set to when the op is guessed to compute ``g``: ``g`` itself, or - for
    a member of an iteration family (``Golden.align``) - the member of ``x``'s own iteration (None if none)."""
    a = an.g.align.get(g)
    if a is None or a.loop is None:
        return g
    it = x.iteration.get(a.loop)
    if it is None:
        return None
    return next((n for n, b in an.g.align.items() if b.family == a.family and b.k == it and b.loop == a.loop), None)


def _repairs(an: Analyzer, observed: Rec, subs: dict[int, tuple[str, str, tuple[int, ...]]],
             run: Callable[[Callable[[Any, Any, tuple, int], None]], None]) -> bool:
    return _replay_observed(an, observed, subs, run)[0]


def _replay_observed(an: Analyzer, observed: Rec, subs: dict[int, tuple[str, str, tuple[int, ...]]],
                     run: Callable[[Callable[[Any, Any, tuple, int], None]], None], *,
                     error: bool = False) -> tuple[bool, float | None]:
    """One replay with ``subs`` set, stopped at ``observed``: whether it then matches its golden and, with
    ``error``, the largest difference from it (None when it cannot be compared) - `_repairs` judges, the reader
    test (`_consumer_repairs_too`) also measures, from the same replay."""
    target = _observed_golden(an, observed)
    if target is None:
        return False, None
    got: list[tuple[bool, float | None]] = []

    def hook(env: Any, node: Any, v: tuple, seq: int) -> None:
        if seq in subs:
            _substitute(an, env, node, subs[seq], an.by_seq[seq].bshape)
        elif seq == observed.seq:
            got.append((_matches(an, env, node, v, observed, target),
                        _error_of(an, _value_of(env, node, v), target) if error else None))
            raise _Stop
        elif seq > observed.seq:
            raise _Stop

    try:
        run(hook)
    except _Stop:
        pass
    return got[0] if got else (False, None)


def _error_of(an: Analyzer, val: np.ndarray, target: tuple[str, str, tuple[int, ...]]) -> float | None:
    """The largest difference of ``val`` from its golden region (0.0 when every difference is NaN), or None when
    the golden has no region of that shape."""
    g, lid, reg = target
    garr = an.g.layout(g, tuple(val.shape), lid)
    sl = region_slice(garr, reg, tuple(val.shape)) if garr is not None else None
    if sl is None:
        return None
    with np.errstate(invalid="ignore"):
        diff = np.abs(np.asarray(val, dtype=np.float64) - np.asarray(sl, dtype=np.float64))
    return float(np.nanmax(diff)) if diff.size and not np.isnan(diff).all() else 0.0


def confirm_pairings(an: Analyzer, run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                     evidence: list[str], limit: int = 12) -> None:
    """A departing value that has a reference only by orphan pairing (``_claims.pair_orphans``: no value matched
    the golden tensor, the op's place in the data flow fits it) is evidence only if it is the same quantity. The
    test: set every execution of the paired op to the golden it was paired with; the first departing value
    downstream of it that is anchored by value (an output write, a value compared with its own golden) must come
    out right. A golden ``inv_rms = rsqrt(ms)`` paired with a kernel's ``sqrt(ms)`` (the kernel divides later)
    fails it - the reciprocal makes everything after it worse - and the pairing is dropped (the op goes back to
    having no golden counterpart). A pairing nothing downstream can test is dropped too (session 46: it was kept,
    and the strict rule named the op on it alone)."""
    untestable: set[int] = set()
    for _ in range(limit):
        # every departing paired op, not only the first departure: a later pass' op paired with a golden of an
        # earlier one (twopass: golden ``a = 3x`` paired with the second pass' ``exp`` after ``a = t`` dropped the
        # scale) is named by the strict rule when the first departure's own inputs are unknown
        # (one whose operands depart is only tested as the first departure, as before: no rule names it otherwise)
        bad = [r for r in an.recs if an.status.get(r.seq) in BAD]
        bad = [r for i, r in enumerate(bad) if r.node is not None and an.paired.get(r.node) is not None
               and r.node not in untestable and (i == 0 or _operands_good(an, r))]
        r = bad[0] if bad else None
        if r is None or r.node is None:
            return
        g = an.paired[r.node]
        kids = _kids_with_side_reads(an)
        # downstream of every execution of the op; the last departing value anchored by value is tested (a
        # kernel that rewrites a whole output per tile holds all tiles' values only in its last write)
        group = set(an.peers.get(r.node, [r.node]))  # (an unrolled statement paired with a golden family: all of it)
        execs = [x for x in an.recs if x.node in group]
        down, right = [], []
        for c in _downstream(kids, execs):
            if an.status.get(c.seq) in BAD and an.paired.get(c.node) is None and _observed_golden(an, c) is not None:
                down.append(c)
            elif c.is_write and an.status.get(c.seq) in GOOD and (c.node is None or c.node not in an.paired) \
                    and c.seq in an.matched and an.target_golden(c) is not None:
                right.append(c)
        if not down and not right:
            # (session 46) an orphan pairing is a guess from the op's place in the data flow; one nothing can test is
            # no evidence that the op departs, and a claim must not rest on it: gated_delta_rule's query ``sum``
            # (line 131) paired with the golden's unnamed ``golden.py:126 sum`` was named "departing while its
            # operands match" for a mask built with the wrong sign (line 148) - the pairing is dropped
            _drop_pairing(an, group, g)
            evidence.append(f"(the pairing of {r.where()} with golden {g!r} could not be tested: nothing downstream "
                            "of it is compared with a golden of its own - no evidence that it departs, dropped)")
            untestable |= group
            continue
        if not down:
            # every write computed from it holds the golden's values: the paired op computes what the kernel needs
            # (``sqrt`` that the kernel divides by, paired with the golden's ``rsqrt``); its "departure" is the
            # pairing's, not the kernel's
            _drop_pairing(an, group, g)
            evidence.append(f"the pairing of {r.where()} with golden {g!r} is dropped: what it feeds is written "
                            f"right ({max(right, key=lambda c: c.seq).where()} matches the golden): not the same "
                            "quantity")
            continue
        d = max(down, key=lambda c: c.seq)
        subs = {x.seq: (an.expected[x.seq][0], an.lids.get(x.seq, ""), tuple(an.expected[x.seq][1]))
                for x in an.recs if x.node in group and x.seq < d.seq and x.seq in an.expected
                and an.status.get(x.seq) in BAD}
        if _repairs(an, d, subs, run):
            reader = _consumer_repairs_too(an, r, group, d, subs, kids, run, evidence)
            if reader is not None:
                # the golden is as good a value for the op reading this one: the downstream test cannot tell which
                # of the two computes it (``attn = q k^T * decay`` set at ``qkt`` or at ``qkt * mask``: the mask of
                # a masked golden changes nothing) - the pairing is no evidence that this op departs
                _drop_pairing(an, group, g)
                untestable |= group
                evidence.append(f"repair test: with {r.where()} set to golden {g!r} (the value it was paired with), "
                                f"{d.where()} matches the golden - but so it does with {reader.where()}, which reads it, "
                                f"set to {g!r} instead: the test does not tell which of the two computes {g!r}, and "
                                "the pairing is dropped")
                continue
            evidence.append(f"repair test: with {r.where()} set to golden {g!r} (the value it was paired with), "
                            f"{d.where()} matches the golden: the pairing holds")
            return
        _drop_pairing(an, group, g)
        evidence.append(f"the pairing of {r.where()} with golden {g!r} is dropped: with it set to that golden, "
                        f"{d.where()} still departs (not the same quantity)")


def _kids_with_side_reads(an: Analyzer) -> dict[int, list[Rec]]:
    """Parent seq -> the records reading it, the reads of a multi-output op's other outputs included (the indices
    of a ``topk``, marked ``"of": seq`` by ``_replay.link_other_outputs``).

    Why (s48): the pairing test asks whether anything downstream of a paired op is compared with a golden. The
    data-flow links stop at a ``topk`` (its record's value is the top values, not the indices a ``scatter_`` or a
    ``gather`` reads), so llada2's group ``amin`` paired with golden ``group_scores`` had nothing downstream, its
    pairing was dropped as untestable and the ``gather`` of the picks was named. The pairing test replays, so
    following the indices too makes no claim by itself: the replay of the outputs decides."""
    kids = dict(an.kids(through_tensors=True))
    for x in an.recs:
        for ref in x.inputs or []:
            src = ref.get("of")
            if ref.get("kind") == "tensor" and isinstance(src, int) and src in an.by_seq \
                    and x not in kids.get(src, []):
                # (a copy, in record order as every list of the map: the shared map is not changed)
                kids[src] = sorted([*kids.get(src, []), x], key=lambda y: y.seq)
    return kids


def _consumer_repairs_too(an: Analyzer, r: Rec, group: set, d: Rec,
                          subs: dict[int, tuple[str, str, tuple[int, ...]]], kids: dict[int, list[Rec]],
                          run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                          notes: list[str] | None = None) -> Rec | None:
    """The op reading the paired op ``r`` (its statement ``group``) that repairs the departure ``d`` as well when it,
    not ``r``, is set to the golden ``subs`` gave ``r`` (``r`` left as computed), or None.

    Why (session 45): the pairing test sets ``r`` to the golden and looks downstream. When the op reading ``r``
    is idempotent on that golden - a mask multiplying a golden that is already masked, a cast, a move - the
    downstream comes out right whether ``r`` or that reader is the one that departs: gated_delta_rule's ``qkt``
    paired with ``attn = (q k^T * decay).tril()`` "held" with ``attn_chunk = qkt * lower`` (the decay dropped) as
    with a right one, and ``qkt`` - right - was named. One replay per reader (at most two): a reader on another
    line, with no golden of its own, that departs or is unknown and has ``r``'s shape - and computes (a cast or a
    move of the golden is the golden: setting it tells nothing, and the pairing stands as before)."""
    readers: list[Rec] = []
    for x in an.recs:
        if x.node not in group or x.seq not in subs:
            continue
        for c in kids.get(x.seq, []):
            if c.seq >= d.seq or c.node in group or c.node is None or an.paired.get(c.node) is not None \
                    or c.is_write or c.op in _MOVES or c.line == r.line or an.status.get(c.seq) in GOOD or c.bshape != x.bshape \
                    or any(c.node == y.node for y in readers):
                continue
            readers.append(c)
    if not readers:
        return None
    own = _replay_observed(an, d, subs, run, error=True)[1]
    for c in readers[:2]:
        moved = {y.seq: subs[x.seq] for x in an.recs if x.seq in subs
                 for y in kids.get(x.seq, []) if y.node == c.node and y.seq < d.seq and y.bshape == x.bshape}
        if not moved:
            continue
        repaired, alt = _replay_observed(an, d, moved, run, error=True)
        if not repaired:
            continue
        # (only a reader that repairs at least as closely: one whose own step the golden set there drops - an
        # ``eps`` added inside tolerance, rms_norm's ``mean_sq + eps`` - repairs a little worse, and the pairing stands)
        if own is not None and alt is not None and alt <= own * (1 + 1e-3) + 1e-12:
            other = _reader_computes_other_golden(an, subs, c, run)
            if other is None:
                return c
            if notes is not None:
                notes.append(f"{c.where()}, which reads {r.where()}, repairs {d.where()} too when set to the same "
                             f"golden - but fed that golden it computes golden {other!r}: it is the next step, not a "
                             "second candidate for the value")
    return None


def _reader_computes_other_golden(an: Analyzer, subs: dict[int, tuple[str, str, tuple[int, ...]]], c: Rec,
                                  run: Callable[[Callable[[Any, Any, tuple, int], None]], None]) -> str | None:
    """The golden, other than the one ``subs`` set the paired op to, that the reader ``c`` computes from it (its
    first execution after the substitution, same layout and region), or None.

    Why (s48): the downstream test cannot tell the paired op from its reader when what follows is blind to the
    step between them - mhc_sinkhorn's Sinkhorn iterations give the same result for ``exp`` as for
    ``exp / rowsum`` (row scaling), so ``exp2`` (line 78, paired with golden ``softmax.exp``) and the division
    reading it (81) both "repaired" and the pairing was dropped. When the reader, fed the golden, computes
    *another* golden's value (the division makes golden ``softmax``), it is the next step of the golden's
    computation, not a second candidate for the same value: the pairing stands. A golden holding the same values as
    the one set is no such evidence (a mask, a cast, a copy of it: gated_delta_rule's ``qkt * lower``, s45). One
    replay."""
    first = min((x for x in an.recs if x.node == c.node and any(p.seq in subs for p in an.parents(x))),
                key=lambda x: x.seq, default=None)
    if first is None:
        return None
    src = next(subs[p.seq] for p in an.parents(first) if p.seq in subs)
    g, lid, reg = src
    garr = an.g.arrays.get(g)
    if garr is None:
        return None
    got: list[np.ndarray] = []

    def hook(env: Any, node: Any, v: tuple, seq: int) -> None:
        if seq in subs:
            _substitute(an, env, node, subs[seq], an.by_seq[seq].bshape)
        elif seq == first.seq:
            val = _value_of(env, node, v)
            vs = first.valid_shape
            if vs is not None and len(vs) == val.ndim:  # (the record's valid part: a tail tile's padding has no golden)
                val = val[tuple(slice(0, int(n)) for n in vs)]
            got.append(np.array(val, copy=True))
            raise _Stop
        elif seq > first.seq:
            raise _Stop

    try:
        run(hook)
    except _Stop:
        pass
    if not got:
        return None
    gv = np.asarray(garr, dtype=np.float64)
    for name, arr in an.g.arrays.items():
        if name == g or np.shape(arr) != np.shape(garr) or an.g.is_input_copy(name):
            continue
        with np.errstate(invalid="ignore"):
            if np.allclose(np.asarray(arr, dtype=np.float64), gv, rtol=an.g.rtol, atol=an.g.atol, equal_nan=True):
                continue  # (the same values under another name: no step between them)
        if _value_matches(an, got[0], (name, lid, reg)):
            return name
    return None


def _drop_pairing(an: Analyzer, group: set, g: str) -> None:
    """Undo an orphan pairing of the statement(s) ``group`` with golden ``g``: their executions go back to having
    no golden counterpart."""
    for x in an.recs:
        if x.node in group:
            gx = an.paired.get(x.node, g) if x.node is not None else g
            if an.status.get(x.seq) in BAD or (x.seq in an.matched and an.matched[x.seq][0] == gx):
                an.status[x.seq] = "unknown"
            an.expected.pop(x.seq, None)
            an.lids.pop(x.seq, None)
            if x.seq in an.matched and an.matched[x.seq][0] == gx:
                del an.matched[x.seq]
    for nd in group:
        an.paired.pop(nd, None)
        an.peers.pop(nd, None)


_SELECTIONS = frozenset({"view", "gathermask", "gather", "cast", "reshape", "transpose", "move"})
"""ops that take some of a tensor's values (a lane mask, a window, a re-layout): a selection of an input matches a
golden copy of an input even when it is the wrong one"""

_MAX_SELECTION_REPLAYS = 12


def _selects_input(an: Analyzer, p: Rec, depth: int = 6) -> bool:
    """``p`` only selects values of a kernel input (views, lane masks, casts, re-layouts down to the argument)."""
    cur = p
    for _ in range(depth):
        if cur.op not in _SELECTIONS:
            return False
        if an.status.get(cur.seq) == "input":
            return True
        ops = an.operand_recs(cur)
        if not ops:
            names = [str(ref.get("name")) for ref in cur.inputs or [] if ref.get("kind") == "tensor"]
            return bool(names) and all(an.param_map.get(n) in an.inputs for n in names)
        if len(ops) != 1:
            return False
        cur = ops[0]
    return False


def wrong_selection(an: Analyzer, claimed: list[Rec], run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                    evidence: list[str]) -> Rec | None:
    """The op that selected the wrong part of an input for a value ``claimed`` departs on, or None.

    Why: a value whose operands "all match" is named - but an operand that is a selection of a kernel input (a
    view, the even/odd lanes of a ``gathermask``) matches *a* golden copy of an input, not necessarily the one the
    golden computes from there. RoPE's ``gathermask(cos_tile, pattern_mode=1)`` where ``pattern_mode=2`` belongs
    gives cos's even lanes, which match the golden's ``cos_even``; ``yo = x_e * s_o + x_o * c_o`` then departs
    "while its operands match" and the line after the bug was named. The replay decides: with that operand set
    to another golden of the same shape that is not an output (``cos_odd``, ``sin_even``, ...) at the same region,
    does the departing value come out right? If so, the selection is the culprit; if no swap repairs, nothing
    changes.
    """
    observed = claimed[0]
    lines = {(r.file, r.line) for r in claimed}
    cands: list[tuple[Rec, str, str, tuple[int, ...]]] = []
    seen: set[int] = set()
    for r in claimed:
        for p in an.operand_recs(r):
            if p.seq in seen or (p.file, p.line) in lines or p.op not in _SELECTIONS:
                continue
            seen.add(p.seq)
            if an.status.get(p.seq) != "match" or p.seq not in an.matched:
                continue
            g, reg = an.matched[p.seq]
            if g not in an.g.arrays or not _selects_input(an, p):
                continue
            if corroborated(an, p, {c.seq for c in claimed}):
                continue  # another computation needed it to be ``g``: right values, read by the wrong op (``c_e`` for
                # ``c_o`` on the claimed line) - the claim stands
            shape = an.g.arrays[g].shape
            for other in an.g.names:
                if other != g and an.g.kinds.get(other) != "output" and an.g.arrays[other].shape == shape:
                    cands.append((p, other, an.lids.get(p.seq, ""), tuple(reg)))
    if not cands or len(cands) > _MAX_SELECTION_REPLAYS:
        return None
    hits = [(p, other) for p, other, lid, reg in cands if _repairs(an, observed, {p.seq: (other, lid, reg)}, run)]
    if len({p.seq for p, _ in hits}) != 1:
        return None  # none repairs, or swaps of two different operands each do: no single selection is shown wrong
    p, other = hits[0]
    was = an.matched[p.seq][0]
    alias = _alias_named_like(an, p, other)
    if alias is not None:
        # the kernel itself binds the selection's value, unchanged, to the very name of the golden that repairs
        # (``a = t`` where ``a = mul(t, 3.0)`` was meant; golden ``a = xf * 3``): the selection is right, the step
        # between the two names is missing on the alias line (s44: twopass named the view)
        evidence.append(f"with {p.where()} set to golden {other!r}, {observed.where()} matches; the kernel binds that "
                        f"value unchanged to {other!r} on line {alias}: no op runs on that line, the step to {other!r} is "
                        "missing there")
        return Rec(seq=-1, node=None, op="alias", file=p.file, line=alias, iteration=dict(p.iteration))
    dead = _unread_holder(an, other, p)
    if dead is not None:
        # the kernel made the right values itself and dropped them: the selection feeding ``p`` is right for its
        # other readers (sum_lstm's ``b_state_b``, read again by the state path), and the claimed op read ``p`` where
        # that unread value was meant (``add(c_cand_norm, b_state_b)`` for ``b_cell_b``): the claim stands (s41)
        evidence.append(f"with {p.where()} set to golden {other!r}, {observed.where()} matches; the kernel computes "
                        f"{other!r} itself at {dead.where()}, and nothing reads that value: {observed.where()} reads "
                        f"{p.where()} where it was meant, not a wrong selection")
        return None
    root, arg = _root_view(an, p)
    culprit = p
    why = "the selection takes the wrong values"
    if root is not None and arg is not None and not _values_within(an.g.arrays[other], an.g.arrays[arg]):
        # the right values are not in the input the selection reads at all: the view reads the wrong input - unless
        # another selection of that very view is needed as it is downstream (``s_o = gathermask(s_t, 2)`` feeds a
        # value that matches): then the view is right and ``p`` reads the wrong one (``c_e = gathermask(s_t, 1)``
        # where ``c_t`` was meant)
        exclude = {c.seq for c in claimed} | {p.seq}
        right = next((k for k in an.by_seq.values() if k.seq != p.seq and k.op in _SELECTIONS
                      and root.seq in {q.seq for q in an.operand_recs(k)} and corroborated(an, k, exclude)), None)
        if right is None:
            culprit = root
            why = (f"the values of {other!r} are not in input {arg!r}, which {root.where()} reads: the view reads the "
                   "wrong input")
        else:
            why = (f"the values of {other!r} are not in input {arg!r}, which {root.where()} reads; but that view is "
                   f"right for {right.where()}, whose value a matching computation downstream needs: the selection "
                   "reads the wrong view")
    evidence.append(f"{observed.where()} departs although its operands match the golden; but {p.where()} is a "
                    f"selection of an input matching golden {was!r}, and with it set to golden {other!r} (another golden "
                    f"of the same shape) {observed.where()} matches: {why}")
    an.status[culprit.seq] = "mismatch"
    return culprit


def _alias_named_like(an: Analyzer, p: Rec, g: str) -> int | None:
    """The line of a bare alias ``g = <p's name>`` after ``p`` in the function holding it (the kernel names ``p``'s
    value like golden ``g`` without computing anything), or None."""
    if not an.source or p.line is None:
        return None
    lines = an.source.splitlines()
    text = lines[p.line - 1].strip() if 0 < p.line <= len(lines) else ""
    # (the record may carry the name of the value's last binding: the alias' target; the line binds the other)
    bound = {p.name, text.split("=", 1)[0].strip() if "=" in text else None} - {None, ""}
    return next((ln for ln, a, b in _bare_aliases(an.source, p.line) if ln > p.line and a == g and b in bound), None)


def _unread_holder(an: Analyzer, g: str, p: Rec) -> Rec | None:
    """A kernel value other than ``p`` that matches golden ``g`` in ``p``'s loop iteration and that no op reads (a
    value computed and dropped), or None."""
    kids = _children(an)
    it = dict(p.iteration)
    for k in an.recs:
        if k.seq == p.seq or k.is_write or an.status.get(k.seq) not in GOOD or k.seq in kids \
                or dict(k.iteration) != it:
            continue
        m = an.matched.get(k.seq)
        if m is not None and m[0] == g:
            return k
    return None


def _root_view(an: Analyzer, p: Rec, depth: int = 6) -> tuple[Rec | None, str | None]:
    """The view of a kernel argument at the root of selection ``p``, and the golden input that argument holds."""
    cur = p
    for _ in range(depth):
        ops = an.operand_recs(cur)
        if not ops:
            names = [str(ref.get("name")) for ref in cur.inputs or [] if ref.get("kind") == "tensor"]
            g = an.param_map.get(names[0]) if len(names) == 1 else None
            return (cur, g) if g in an.g.arrays else (None, None)
        if len(ops) != 1:
            break
        cur = ops[0]
    return None, None


def _values_within(part: np.ndarray, whole: np.ndarray) -> bool:
    """``part`` is a selection of ``whole`` along its last axis: equal extents but the last, and the last a slice of
    ``whole``'s - strided lanes (``whole[..., k::s]``, a lane mask) or a contiguous block (``whole[..., k*n:(k+1)*n]``).

    By position, not by value sets: a bf16 input in [-1, 1] holds nearly every bf16 value of its range, so "its
    values occur in the input" says nothing."""
    a = np.asarray(part)
    b = np.asarray(whole)
    if a.ndim != b.ndim or a.shape[:-1] != b.shape[:-1] or a.shape[-1] == 0 or b.shape[-1] % a.shape[-1]:
        return a.shape == b.shape and bool(np.array_equal(a.astype(np.float64), b.astype(np.float64)))
    n, s = a.shape[-1], b.shape[-1] // a.shape[-1]
    af = a.astype(np.float64)
    for k in range(s):
        if np.array_equal(af, b[..., k::s].astype(np.float64), equal_nan=True) or \
                np.array_equal(af, b[..., k * n:(k + 1) * n].astype(np.float64), equal_nan=True):
            return True
    return False


_MAX_STUCK_REPLAYS = 4


def _loop_of(tree: ast.AST, line: int) -> ast.For | None:
    """The innermost ``for .. in pypto.loop(.., name=..)`` whose body holds ``line`` (with a ``name=``: the records'
    iteration key)."""
    best: ast.For | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and node.lineno < line <= (node.end_lineno or node.lineno) \
                and isinstance(node.iter, ast.Call) and ast.unparse(node.iter.func).endswith("loop") \
                and _loop_name(node) is not None and (best is None or node.lineno > best.lineno):
            best = node
    return best


def _loop_name(node: ast.For) -> str | None:
    if not isinstance(node.iter, ast.Call):
        return None
    for k in node.iter.keywords:
        if k.arg == "name" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
            return k.value.value
    return None


def _view_offset(tree: ast.AST, line: int, axis: int) -> ast.expr | None:
    """The offset expression on ``axis`` of the one ``view(src, shape, offsets, ..)`` call on ``line``, or None."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node, "lineno", None) == line \
                and ast.unparse(node.func).rsplit(".", 1)[-1] == "view":
            offs = node.args[2] if len(node.args) > 2 else next(
                (k.value for k in node.keywords if k.arg == "offsets"), None)
            if isinstance(offs, ast.List | ast.Tuple) and len(offs.elts) > axis:
                found.append(offs.elts[axis])
    return found[0] if len(found) == 1 else None


def _input_views(an: Analyzer, observed: Rec, limit: int = 20000) -> list[Rec]:
    """The views of kernel arguments the departing value is computed from (through every op before it)."""
    seen, stack, out = {observed.seq}, [observed], []
    while stack and len(seen) < limit:
        for p in an.parents(stack.pop()):
            if p.seq in seen:
                continue
            seen.add(p.seq)
            if p.op == "view" and not an.operand_recs(p) and p.offsets is not None and p.shape is not None:
                out.append(p)
            else:
                stack.append(p)
    return out


def stuck_loop_read(an: Analyzer, observed: Rec, run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                    evidence: list[str]) -> Rec | None:
    """The line computing the offset of a read that stays put over the loop it sits in, when a replay reading the
    tile that steps with the loop repairs the departure; a line-only finding (``seq`` -1), or None.

    Why: ``s2_off = bn_base + s1_idx * S_TILE`` (``s1_idx`` for ``s2_idx``) inside the ``s2`` loop reads key tile
    ``s1`` in every ``s2`` pass; every value read and computed matches the golden somewhere (tile (s1, s1)), only the
    accumulation over the loop is wrong, so no op departs by itself. The evidence: the views of kernel arguments
    inside one ``pypto.loop`` whose offset on an axis is the same in every execution of one pass over the loop (the
    tensor having room to move there) are, in a replay, read at that offset plus ``k`` tiles in the pass's ``k``-th
    execution (every pass, nothing else changed); when the first departing value then matches, the line computing the
    offset the views share (``s2_off = ..``, else the view's own line) is named."""
    from runtime.bisect._rules import _enclosing_function, _last_assignment

    if not an.source:
        return None
    try:
        tree = parse_source(an.source)
    except (SyntaxError, ValueError):
        return None
    views = _input_views(an, observed)
    by_line: dict[tuple[str | None, int], list[Rec]] = {}
    for v in views:
        if v.line is not None:
            by_line.setdefault((v.file, v.line), [])
    for x in an.recs:
        if x.seq <= observed.seq and x.op == "view" and (x.file, x.line) in by_line and x.offsets is not None:
            by_line[(x.file, x.line)].append(x)
    groups: dict[tuple[int, int, str], list[tuple[Rec, int]]] = {}  # (loop line, axis, offset text) -> (view, k)
    for (_f, line), execs in by_line.items():
        loop = _loop_of(tree, line)
        lname = _loop_name(loop) if loop is not None else None
        if loop is None or lname is None:
            continue
        passes: dict[tuple, list[Rec]] = {}
        for x in execs:
            passes.setdefault(tuple(sorted((k, i) for k, i in x.iteration.items() if not k.startswith(lname))),
                              []).append(x)
        shape = execs[0].shape
        full = next((an.arg_shapes.get(str(ref.get("name"))) for ref in execs[0].inputs or []
                     if ref.get("kind") == "tensor"), None)
        if shape is None or full is None or len(full) != len(shape):
            continue
        for axis in range(len(shape)):
            if int(full[axis]) <= int(shape[axis]):
                continue  # (no room to move on that axis)
            stuck = [p for p in passes.values() if len(p) > 1]
            if not stuck or any(len({x.offsets[axis] for x in p}) != 1 for p in stuck):  # type: ignore[index]
                continue
            expr = _view_offset(tree, line, axis)
            if expr is None:
                continue
            key = (loop.lineno, axis, ast.unparse(expr))
            for p in passes.values():
                for k, x in enumerate(sorted(p, key=lambda r: r.seq)):
                    groups.setdefault(key, []).append((x, k))
    tried = 0
    for (loop_line, axis, text), members in groups.items():
        if tried >= _MAX_STUCK_REPLAYS:
            break
        moves = {x.seq: (x, k) for x, k in members if k > 0}
        if not moves:
            continue
        made: list[int] = []

        def alter(env: Any, node: Any, v: tuple, seq: int, moves: dict[int, tuple[Rec, int]] = moves, axis: int = axis,
                  made: list[int] = made) -> bool | None:
            if seq in moves:
                x, k = moves[seq]
                prm = node.op.params
                key = node.op.out_key
                cur = env.buf.get(key) if key is not None else None
                if node.op.kind != "view" or cur is None or x.offsets is None:
                    raise _Stop
                src, _vs = env.get(prm["src"])
                tile = [int(n) for n in prm["shape"]]
                offs = [int(o) for o in x.offsets]
                offs[axis] += k * tile[axis]
                if any(o + t > n for o, t, n in zip(offs, tile, src.shape, strict=True)):
                    raise _Stop
                new = np.array(np.asarray(src)[tuple(slice(o, o + t) for o, t in zip(offs, tile, strict=True))])
                if tuple(new.shape) != tuple(np.shape(cur[0])):
                    raise _Stop
                env.buf[key] = (new, cur[1])
                made.append(seq)
            return None

        tried += 1
        judged = _replay_judged(an, observed, run, alter)
        if not (judged and made):
            continue
        lines = sorted({x.line for x, _ in members if x.line is not None})
        culprit_line = lines[0]
        fn = _enclosing_function(tree, lines[0])
        expr = _view_offset(tree, lines[0], axis)
        why = f"the views on line(s) {lines}"
        if isinstance(expr, ast.Name) and fn is not None:
            a = _last_assignment(fn, expr.id, lines[0])
            if a is not None and loop_line < a.lineno:
                culprit_line = a.lineno
                why += f" take their offset on axis {axis} from {expr.id!r}, computed on line {a.lineno},"
        first = members[0][0]
        evidence.append(
            f"{observed.where()} departs and no op before it can be shown wrong by itself; {why} and read the "
            f"same offset ({text} = {first.offsets[axis] if first.offsets else '?'}) in every execution of one pass over "
            f"the loop on line {loop_line}; in a replay where the k-th read of each pass is taken k tiles further on "
            f"(every pass, nothing else changed) {observed.where()} matches the golden: the offset does not step with "
            f"its loop (the wrong loop variable?)")
        return Rec(seq=-1, node=None, op="offset", file=first.file, line=culprit_line, iteration={})
    return None


_MAX_UNREAD_REPLAYS = 8
"""replays :func:`unread_operand` may spend"""
_NEAREST = 6
"""values read elsewhere tried per operand (nearest first), after the unread ones"""


def unread_operand(an: Analyzer, observed: Rec, suspects: list[Rec],
                   run: Callable[[Callable[[Any, Any, tuple, int], None]], None], evidence: list[str]) -> Rec | None:
    """The op that reads one value where another value the kernel computed was meant, or None.

    Why (s41): a model that copies a neighbouring line or keeps a stale name reads the wrong local
    (``gelu(c_new_tile)`` for ``gelu(h_temp)``, ``cast(ds_ij)`` for ``cast(p_ij)``, ``view(sm_i_8, ..)`` for
    ``view(ss_i_8, ..)``). Its operand is right for what it is (it matches the golden), so every op that departs
    "is computed from matching values"; the ops after the wrong read have no golden of their own (the golden never
    computes them from that value), and the walk-back ends at a window of suspects. A replay decides: with the
    operand's buffer holding the other value just before the op runs (that one execution), does the departing value
    come out right? The operand is followed back through casts / views / moves (``p_bf16 = cast(ds_ij)``: the cast
    reads the wrong value, not the matmul reading ``p_bf16``), the deepest read tried first. Candidates, of the
    operand's shape and loop iteration and computed before the read, that do not depart themselves: values nothing
    reads first (the value left behind: ``h_temp`` of the state path, whose golden may be unknown), then the nearest
    values that hold another golden than the operand."""
    target = _observed_golden(an, observed)
    if target is None:
        return None
    kids = _children(an)
    tries: list[tuple[Rec, Rec, Rec]] = []
    for x in sorted(suspects, key=lambda r: r.seq):
        if x.is_write or x.seq > observed.seq:
            continue
        for o in an.operand_recs(x):
            pairs = [(x, o)]
            cur = o
            while cur.op in _MOVES and an.status.get(cur.seq) in GOOD:
                ops = an.operand_recs(cur)
                if len(ops) != 1:
                    break
                pairs.append((cur, ops[0]))
                cur = ops[0]
            for reader, op in reversed(pairs):
                if an.status.get(op.seq) in GOOD and op.bshape is not None:
                    tries.extend((reader, op, d) for d in _stand_ins(an, reader, op, kids))
    # the unread stand-ins first, over every suspect (a value left behind is the likelier slip), then the read ones
    tries.sort(key=lambda t: t[2].seq in kids)
    for reader, op, d in tries[:_MAX_UNREAD_REPLAYS]:
        if _reads_instead(an, observed, target, reader, op, d, run):
            held = f"golden {an.matched[d.seq][0]!r}" if d.seq in an.matched else "a value"
            what = "and nothing reads it" if d.seq not in kids else "(read elsewhere)"
            was = f" (golden {an.matched[op.seq][0]!r})" if op.seq in an.matched else ""
            evidence.append(
                f"{d.where()} computes {held} {what}; in a replay where {reader.where()} reads that value "
                f"instead of {op.where()}{was}, {observed.where()} matches the golden: {reader.where()} "
                "reads the wrong value")
            an.status[reader.seq] = "mismatch"
            return reader
    return None


def _stand_ins(an: Analyzer, reader: Rec, op: Rec, kids: dict[int, list[Rec]]) -> list[Rec]:
    """Values ``reader`` may have meant instead of ``op`` (see :func:`unread_operand`): unread ones, then the nearest
    read ones holding another golden."""
    it = dict(reader.iteration)
    og = an.matched.get(op.seq, ("",))[0]
    want = op.bshape
    if want is None:
        return []
    same = [k for k in an.recs if k.seq < reader.seq and k.seq != op.seq and not k.is_write
            and k.op not in _CONST_OPS and an.status.get(k.seq) not in BAD and k.bshape is not None
            and tuple(k.bshape) == tuple(want) and dict(k.iteration) == it]
    dead = [k for k in same if k.seq not in kids and (k.seq not in an.matched or an.matched[k.seq][0] != og)]
    read = [k for k in same if k.seq in kids and k.seq in an.matched and an.matched[k.seq][0] != og]
    return sorted(dead, key=lambda k: -k.seq) + sorted(read, key=lambda k: -k.seq)[:_NEAREST]


def _helper_span(source: str | None, line: int | None) -> tuple[int, int] | None:
    """The lines of the plain (not jit) function around ``line``, or None (the kernel body, or no source)."""
    if not source or line is None:
        return None
    try:
        tree = parse_source(source)
    except SyntaxError:
        return None
    best: tuple[int, int] | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if is_jit_def(node) or any(isinstance(n, ast.FunctionDef) and n is not node for n in ast.walk(node)):
                continue  # (a jit kernel, or a factory around one, is no helper)
            span = (node.lineno, node.end_lineno or node.lineno)
            if best is None or span[1] - span[0] < best[1] - best[0]:
                best = span
    return best


def _last_reader(an: Analyzer, x: Rec, o: Rec) -> int:
    """The last op that reads ``o`` in place of what ``x`` meant: ``x`` itself in the kernel body; in a helper, every
    read of ``o`` inside that call of the helper (``act(v)`` reads ``v`` twice: ``v * sigmoid(v)``)."""
    span = _helper_span(an.source, x.line)
    if span is None:
        return x.seq
    last = x.seq
    seq = x.seq + 1
    while seq in an.by_seq:
        r = an.by_seq[seq]
        if r.line is None or r.file != x.file or not span[0] <= r.line <= span[1]:
            break
        if o.seq in {p.seq for p in an.operand_recs(r)}:
            last = r.seq
        seq += 1
    return last


def _reads_instead(an: Analyzer, observed: Rec, target: tuple[str, str, tuple[int, ...]], x: Rec, o: Rec, d: Rec,
                   run: Callable[[Callable[[Any, Any, tuple, int], None]], None]) -> bool:
    """A replay in which ``o``'s buffer holds ``d``'s value while ``x`` (and, in a helper, the call's other reads of
    ``o``) runs, and its own value again afterwards: does ``observed`` match?"""
    held: dict[str, Any] = {}
    got: list[bool] = []
    last = _last_reader(an, x, o)

    def hook(env: Any, node: Any, v: tuple, seq: int) -> None:
        key = node.op.out_key
        if seq == d.seq and key is not None and key in env.buf:
            held["d"] = np.array(env.buf[key][0], copy=True)
        if seq == o.seq and key is not None:
            held["okey"] = key
        if seq == x.seq - 1 and "d" in held and held.get("okey") in env.buf:
            arr, valid = env.buf[held["okey"]]
            if np.shape(arr) == held["d"].shape:
                held["orig"] = (arr, valid)
                env.buf[held["okey"]] = (held["d"].astype(np.asarray(arr).dtype), valid)
        if seq == last and "orig" in held:
            env.buf[held["okey"]] = held.pop("orig")
        if seq == observed.seq:
            got.append(_matches(an, env, node, v, observed, target))
            raise _Stop
        if seq > observed.seq:
            raise _Stop

    try:
        run(hook)
    except _Stop:
        pass
    return bool(got and got[0])


_MAX_DEAD_REPLAYS = 4


def dead_successor_read(an: Analyzer, observed: Rec, claimed: list[Rec],
                        run: Callable[[Callable[[Any, Any, tuple, int], None]], None], evidence: list[str],
                        *, unmatched_ok: bool = False) -> Rec | None:
    """The op that reads a value where the value the kernel computed *from* it was meant, or None.

    Why (s42): ``o_final = div(o_ij, l_ij)`` is computed and nothing reads it, and the write casts ``o_ij`` (gqa's
    one-trip branch); ``o_final`` matches the golden output, ``o_ij`` has no golden, and setting ``o_ij`` to the
    output's golden repairs the write - so the matmul computing ``o_ij`` was named, a miss. A value computed from
    the claimed op that nothing reads while it matches a golden says the claimed op's value is what the kernel
    meant it to be; the slip is the later read of it. A replay decides (as :func:`unread_operand`): with the
    claimed op's buffer holding the unread value while a reader of it on the way to the departure runs, does the
    departing value come out right? At most :data:`_MAX_DEAD_REPLAYS` replays.

    ``unmatched_ok`` (s46, :func:`copied_other_quantity`): an unread value that no golden names counts too - the
    replay alone decides (bn_training_reduce's ``v1_sq = v1 * v1``, in a layout no golden has, never read while the
    squares' transpose reads ``v1``)."""
    target = _observed_golden(an, observed)
    if target is None:
        return None
    kids = _children(an)
    tries: list[tuple[Rec, Rec, Rec]] = []
    for p in sorted(claimed, key=lambda r: r.seq):
        if p.seq < 0 or (an.status.get(p.seq) in GOOD and not unmatched_ok) or p.bshape is None:
            continue
        dead = [d for d in kids.get(p.seq, []) if d.seq not in kids and not d.is_write
                and ((an.status.get(d.seq) == "match" and d.seq in an.matched)
                     or (unmatched_ok and an.status.get(d.seq) == "unknown" and d.op not in _MOVES))
                and d.bshape is not None
                and tuple(d.bshape) == tuple(p.bshape) and dict(d.iteration) == dict(p.iteration)]
        readers = [x for x in kids.get(p.seq, []) if x.seq in kids or x.seq == observed.seq]
        for d in dead:
            tries.extend((x, p, d) for x in readers if d.seq < x.seq <= observed.seq and x.seq != d.seq)
    for reader, op, d in tries[:_MAX_DEAD_REPLAYS]:
        if _reads_instead(an, observed, target, reader, op, d, run):
            what = f"golden {an.matched[d.seq][0]!r}" if d.seq in an.matched else "a value"
            evidence.append(
                f"{d.where()} computes {what} from {op.where()} and nothing reads it; in a "
                f"replay where {reader.where()} reads that value instead of {op.where()}, {observed.where()} matches "
                f"the golden: {reader.where()} reads the value before its last step, not the value after it")
            an.status[reader.seq] = "mismatch"
            return reader
    return None



def _numeric_literal(text: str) -> bool:
    """The statement text holds a number (a scale the op itself applies, which may be the wrong one)."""
    try:
        tree = pyast.parse(text.strip())
    except SyntaxError:
        return True
    return any(isinstance(n, ast.Constant) and isinstance(n.value, int | float) and not isinstance(n.value, bool)
               for n in ast.walk(tree))


def _scale_node(env: Any, node: Any, k: float) -> None:
    """Multiply the op's value in the replay by ``k`` (the value every later op reads)."""
    key = node.op.out_key
    cur = env.buf.get(key) if key is not None else None
    if cur is None:
        return
    arr, valid = cur
    env.buf[key] = ((np.asarray(arr) * k).astype(np.asarray(arr).dtype), valid)


_MAX_SCALE_REPLAYS = 3
"""factors ``dropped_scale_alias`` tries at most (one replay each)"""


def _constant_multiple(a: np.ndarray, b: np.ndarray) -> float | None:
    """``k`` with ``b == k * a`` elementwise to float rounding (k no 1, no 0), or None.

    Unlike ``_claims.missing_factor`` no element is required above the verify tolerance: gated_delta_rule's
    L2-normalised query (|q| ~ 0.09 under an atol of 0.05) and its ``1/sqrt(128)`` multiple are both "inside atol",
    yet the golden computes one from the other exactly - the relation is tested relative to the values."""
    if a.size != b.size or a.size == 0:
        return None
    try:
        af = np.asarray(a, dtype=np.float64).ravel()
        bf = np.asarray(b, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return None
    ok = np.isfinite(af) & np.isfinite(bf) & (af != 0)
    if int(ok.sum()) < 8:
        return None
    k = float(np.median(bf[ok] / af[ok]))
    if not np.isfinite(k) or k == 0.0 or abs(k - 1.0) <= 0.05:
        return None
    scale = float(np.max(np.abs(bf[np.isfinite(bf)]))) if np.isfinite(bf).any() else 0.0
    good = np.isfinite(af) & np.isfinite(bf)
    return k if np.allclose(bf[good], k * af[good], rtol=1e-3, atol=1e-6 * scale) else None
"""factors ``dropped_scale_alias`` tries at most (one replay each)"""


def dropped_scale_alias(an: Analyzer, culprit: Rec, observed: Rec,
                        run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                        evidence: list[str]) -> tuple[int, str] | None:
    """The line of a bare alias ``a = b`` the named op reads, when the value it passes on matches a golden ``G1``, a
    later golden is one constant ``k`` times ``G1``, and with that value scaled by ``k`` the last departing write
    downstream comes out right; or None.

    Why (s44, f14_gdr_q_noscale): ``q_s = q_n`` where ``q_s = mul(q_n, inv_sqrt_D)`` was meant runs no op, so the
    matmul reading ``q_s`` (its operands match: ``q_n`` is right) was named. The by-name alias rule
    (``_claims.bare_alias``) has nothing to compare ``q_s`` with when the golden re-binds the scaled value under the
    old name (``query = query * scale``). The op named applies no constant of its own (a matmul of two matching
    values); the golden holds the value it reads through the alias and, later, that value times a constant: the step
    between is the one the alias skipped - shown by a replay with the step put back (one per factor, at most 3)."""
    src = an.source
    if not src or culprit.seq < 0 or culprit.line is None or culprit.op not in ("matmul", "mul", "div"):
        return None
    lines = src.splitlines()
    if not 0 < culprit.line <= len(lines):
        return None
    text = lines[culprit.line - 1]
    rhs = text.split("=", 1)[-1] if "=" in text.split("(", 1)[0] else text
    if _numeric_literal(rhs):
        return None
    try:
        read = {n.id for n in ast.walk(pyast.parse(rhs.strip())) if isinstance(n, ast.Name)}
    except SyntaxError:
        return None
    every = _bare_aliases(src, culprit.line)
    aliases = [(ln, a, b) for ln, a, b in every if ln < culprit.line and a in read
               and not any(ln < ln2 < culprit.line and a2 == a for ln2, a2, _ in every)]
    ops = an.operand_recs(culprit)
    if len(aliases) != 1 or not ops or any(an.status.get(p.seq) not in GOOD for p in ops):
        return None
    ln, a, b = aliases[0]
    p = next((x for x in ops if x.name in (a, b) and x.seq in an.matched and x.node is not None), None)
    if p is None:
        return None
    g1 = an.matched[p.seq][0]
    ks: list[tuple[float, str]] = []
    for g2 in an.g.names:
        if g2 == g1 or an.g.kinds.get(g2) == "input" or an.g.order.get(g2, -1) <= an.g.order.get(g1, -1):
            continue
        k = _constant_multiple(an.g.arrays[g1], an.g.arrays[g2])
        if k is not None and not any(abs(k - k0) <= 1e-3 * abs(k0) for k0, _ in ks):
            ks.append((k, g2))
    if not ks or len(ks) > _MAX_SCALE_REPLAYS:
        return None
    kids = _children(an)
    execs = [x for x in an.recs if x.node == culprit.node]
    writes = [c for c in _downstream(kids, execs)
              if c.is_write and an.status.get(c.seq) in BAD and _observed_golden(an, c) is not None]
    if not writes:
        return None
    d = max(writes, key=lambda c: c.seq)
    target = _observed_golden(an, d)
    assert target is not None
    for k, g2 in ks:
        got: list[bool] = []

        def hook(env: Any, node: Any, v: tuple, seq: int, k: float = k, got: list[bool] = got) -> None:
            r = an.by_seq.get(seq)
            if r is not None and r.node == p.node:
                _scale_node(env, node, k)
            elif seq == d.seq:
                got.append(_matches(an, env, node, v, d, target))
                raise _Stop
            elif seq > d.seq:
                raise _Stop

        try:
            run(hook)
        except _Stop:
            pass
        if got and got[0]:
            evidence.append(f"{culprit.where()} applies no constant and reads only matching values; it reads {a!r}, "
                            f"bound on line {ln} unchanged to {b!r} ({a} = {b}), whose value matches golden {g1!r}; "
                            f"golden {g2!r} is {k:.6g} x {g1!r}, and with that value scaled by {k:.6g} "
                            f"{d.where()} matches the golden: no op runs on line {ln}, a scaling step is missing there")
            return ln, a
    return None


_MAX_RELAYOUT_REPLAYS = 3
"""transposes ``permuted_relayout`` tries at most (one replay each)"""


def copied_other_quantity(an: Analyzer, culprit: Rec, observed: Rec,
                          run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                          evidence: list[str]) -> Rec | None:
    """The read that took the wrong value, when the op a rule named only copies (a move, reshape, view, assemble)
    and its operand holds the value of *another* golden than the one it is compared with; or None.

    Why (s46): a copy computes nothing - when it "departs while every operand it reads matches", its operand is
    right as some other quantity (bn_training_reduce's squares' chain reading ``v1`` where ``v1_sq`` was meant: the
    sum of squares' move holds the plain sum, golden ``sum_out``). The slip is upstream, where the chain first read
    the wrong value; a value the kernel computed and nothing reads says which: :func:`dead_successor_read` over
    every op the departure is computed from, an unread value without a golden counting too (the replay decides)."""
    if culprit.op not in _MOVES or culprit.seq < 0:
        return None
    target = _observed_golden(an, culprit)
    ops = an.operand_recs(culprit)
    if target is None or not ops or not all(o.seq in an.matched and an.matched[o.seq][0] != target[0]
                                            for o in ops):
        return None
    from runtime.bisect._rules import _ancestors

    found = dead_successor_read(an, culprit, _ancestors(an, culprit), run, evidence, unmatched_ok=True)
    if found is not None:
        evidence.insert(len(evidence) - 1, f"{culprit.where()} only copies, and what it copies matches golden "
                        f"{an.matched[ops[0].seq][0]!r}, not {target[0]!r}: a value of another quantity reaches it")
    return found


def permuted_relayout(an: Analyzer, observed: Rec, suspects: list[Rec],
                      run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                      evidence: list[str]) -> Rec | None:
    """A ``transpose`` among ``suspects`` (the ops a departure left not localized could be in) whose operand holds
    the golden's values, that should have kept them in memory order, or None.

    Why: a re-layout of right values has no golden of its own when it permutes them in a way the golden never does
    - GQA's query heads grouped ``transpose(reshape(q, [GROUPS, Nkv, D]), 0, 1)`` (interleaved) where the golden
    groups them ``reshape(q, [Nkv, GROUPS, D])`` (contiguous, s45): the golden's split layout of the query does not
    match it, so nothing downstream is compared with anything until the output, and no golden can be set. The replay
    decides: every execution of the transpose is set to its operand's values laid out in its own shape in memory
    order (what the statement makes without the permutation); when the first departing value then matches, the
    transpose is named. An honest transpose (one the computation needs) repairs nothing that way."""
    tried = 0
    seen: set[Any] = set()
    for t in suspects:
        if t.op != "transpose" or t.seq < 0 or t.node is None or t.node in seen or an.status.get(t.seq) in GOOD:
            continue
        ops = an.operand_recs(t)
        # (or a re-layout of a kernel input, which holds the input's values even where no golden names that layout:
        # bn_training_reduce's ``transpose(reshape(x, [n, c, h * w]), 0, 2)`` for ``(.., 1, 2)``, s46)
        if len(ops) != 1 or (an.status.get(ops[0].seq) not in GOOD and not _selects_input(an, ops[0])):
            continue
        if t.valid_shape is not None and t.shape is not None and list(t.valid_shape) != list(t.shape):
            continue  # (a padded tile: the memory order of its valid part is not the buffer's)
        seen.add(t.node)
        if tried >= _MAX_RELAYOUT_REPLAYS:
            break
        tried += 1
        d0, d1 = int(t.attrs.get("dim0", -2)), int(t.attrs.get("dim1", -1))

        def alter(env: Any, node: Any, v: tuple, seq: int, _node: Any = t.node, _d: tuple = (d0, d1)) -> None:
            rec = an.by_seq.get(seq)
            if rec is None or rec.node != _node:
                return None
            key = node.op.out_key
            cur = env.buf.get(key) if key is not None else None
            if cur is None:
                raise _Stop
            arr, valid = cur
            a = np.asarray(arr)
            if valid is not None and [int(n) for n in valid] != list(a.shape):
                raise _Stop
            back = np.swapaxes(a, _d[0], _d[1])  # the operand, as the transpose read it
            env.buf[key] = (np.ascontiguousarray(back).reshape(a.shape).astype(a.dtype), valid)
            return None

        if _replay_judged(an, observed, run, alter):
            evidence.append(f"{observed.where()} departs and nothing between it and {t.where()} has a golden value; "
                            f"{t.where()} permutes values that match the golden, and with every execution of it set "
                            f"to those values in memory order (laid out in its shape without the permutation) "
                            f"{observed.where()} matches: the transpose arranges the axes differently from the golden")
            an.status[t.seq] = "mismatch"
            return t
    return None


def _held_operands(env: Any, node: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any, tuple[slice, ...]]:
    """In a replay's ``alter``: a binary op's two operands as the replay holds them (their valid boxes), its result
    buffer, the result's valid extents and box; `_Stop` when an operand or the result is not held (the altered
    computation cannot be made)."""
    p = node.op.params
    try:
        a, va = env.get(p["a"])
        b, vb = env.get(p["b"])
    except Exception:  # noqa: BLE001 - an operand no longer held
        raise _Stop from None
    a = np.asarray(a)[tuple(slice(0, int(n)) for n in va)]
    b = np.asarray(b)[tuple(slice(0, int(n)) for n in vb)]
    key = node.op.out_key
    cur = env.buf.get(key) if key is not None else None
    if cur is None:
        raise _Stop
    arr, valid = cur
    box = tuple(slice(0, int(n)) for n in (valid if valid is not None else arr.shape))
    return a, b, arr, valid, box


_SWAPPABLE = {"div": np.divide, "sub": np.subtract}
"""the non-commutative elementwise ops whose operands a model swaps by accident (``div(y, x)`` for ``div(x, y)``)"""


def suspect_swapped_operands(an: Analyzer, observed: Rec, suspects: list[Rec],
                             run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                             evidence: list[str]) -> Rec | None:
    """A ``div`` / ``sub`` of two tensors among the suspects of a departure left not localized that, computed with
    its operands swapped (every execution, nothing else changed), alone repairs the departure, or None.

    Why (session 47): sum_lstm's RMSNorm helper ``div(y, x_fp32)`` for ``div(x_fp32, y)``: the golden takes
    ``x * rsqrt(..)``, so nothing names the quotient nor the ``sqrt`` it divides by; the repair test stopped at "the
    bug is on line 65 or 63". Like the matmul variant, the swap is computed from the op's own operands (as the replay
    holds them); an order that is not what the kernel should compute repairs nothing. At most four replays."""
    spent = 0
    for r in suspects:
        if r.op not in _SWAPPABLE or r.seq < 0 or spent >= 4:
            continue
        # every execution of the statement: a helper's op, called from two sites, is two nodes of one line
        execs = {x.seq for x in an.recs if x.op == r.op and x.file == r.file and x.line == r.line
                 and x.seq <= observed.seq}
        made: list[bool] = []

        def alter(env: Any, node: Any, v: tuple, seq: int, execs: set[int] = execs, made: list[bool] = made,
                  fn: Any = _SWAPPABLE[r.op]) -> bool | None:
            if seq in execs:
                p = node.op.params
                if p.get("b") is None or p.get("alpha") not in (None, 1, 1.0):
                    raise _Stop
                a, b, arr, valid, box = _held_operands(env, node)
                with np.errstate(all="ignore"):
                    got = fn(b.astype(np.float32), a.astype(np.float32))
                if tuple(got.shape) != tuple(int(x.stop) for x in box):
                    raise _Stop
                new = np.array(arr, copy=True)
                new[box] = got.astype(new.dtype)
                env.buf[node.op.out_key] = (new, valid)
                made.append(True)
            return None

        judged = _replay_judged(an, observed, run, alter)
        if not made:
            continue
        spent += 1
        if judged:
            an.status[r.seq] = "mismatch"
            evidence.append(f"in a replay where only {r.where()} (every execution of its line) is computed with its "
                            f"two operands swapped, {observed.where()} matches the golden: its operands are in the wrong order "
                            f"({r.op} is not commutative)")
            return r
    return None


def suspect_matmul_variant(an: Analyzer, observed: Rec, suspects: list[Rec],
                           run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                           evidence: list[str]) -> Rec | None:
    """A ``matmul`` among the suspects of a departure left not localized that, computed another way (its other
    transpose flags, its operands swapped: ``_matmul_variant``), alone repairs the departure, or None.

    Why (session 45): the walk-back tries the variants only when no golden repairs. A golden that repairs at the op
    *reading* the matmul (gated_delta_rule's ``attn`` at ``attn_chunk = qkt * decay``) left ``qkt = k q^T`` (meant
    ``q k^T``) a suspect behind its reader; the variant replay separates them. At most eight replays."""
    mm = [r for r in suspects if r.op == "matmul" and r.seq >= 0]
    if not mm:
        return None
    variant = _matmul_variant(an, observed, mm, run, 8)
    if variant is None:
        return None
    r, what, _n = variant
    an.status[r.seq] = "mismatch"
    evidence.append(f"{r.where()} multiplies operands that match the golden, and in a replay where only it (every "
                    f"execution) is computed {what}, {observed.where()} matches the golden: its operand order or "
                    "transpose flags are wrong")
    return r
