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

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runtime.bisect._analyzer import BAD, GOOD, Analyzer, region_slice
from runtime.bisect._compare import close
from runtime.bisect._records import Rec

__all__ = ["Repair", "repair_search", "reference"]

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


def reference(an: Analyzer, r: Rec) -> tuple[str, str, tuple[int, ...]] | None:
    """(golden name, layout, region) of the value ``r`` should hold, or None when nothing says.

    In order: the golden it was compared with when it departed (``expected``); a golden tensor the same op
    matched elsewhere at the same region (another pass over the same tile, ``view`` -> ``mul(r, scale)``); a
    golden tensor named like its variable."""
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
    if offs is not None and bs is not None and r.op not in _MOVES:  # (a move computes nothing: no evidence)
        for s in an.recs:
            if s.op != r.op or s.node == r.node or s.seq not in an.matched or an.status.get(s.seq) != "match":
                continue
            if an.offs.get(s.seq) != offs or s.bshape != bs or s.attrs.get("_fn") != r.attrs.get("_fn"):
                continue
            g, reg = an.matched[s.seq]
            return g, an.lids.get(s.seq, ""), tuple(reg)
    if r.name and r.name in an.g.arrays:
        fr = an.first_region(r, r.name)
        if fr is not None:
            return r.name, fr[0], tuple(fr[1])
    return None


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
    for r in _cone(an, observed):
        ref = moved.get(r.seq) or reference(an, r)
        if ref is not None and r.bshape is not None and _golden_slice(an, ref, r.bshape) is not None:
            cands.append((r, ref))
    log.debug("repair: %s departs; %d candidates with a reference: %s", observed.where(), len(cands),
              [(r.line, r.op, ref[0]) for r, ref in cands[:30]])
    if not cands:
        return out
    cands = cands[-_MAX_CANDIDATES:]

    def repaired(k: int) -> bool:
        """Set candidates[:k] to their references; does ``observed`` come out right?"""
        subs = {r.seq: ref for r, ref in cands[:k]}
        got: list[bool] = []

        def hook(env: Any, node: Any, v: tuple, seq: int) -> None:
            if seq in subs:
                _substitute(an, env, node, subs[seq])
            elif seq == observed.seq:
                got.append(_matches(an, env, node, v, observed, target))
                raise _Stop
            elif seq > observed.seq:
                raise _Stop

        out.replays += 1
        try:
            run(hook)
        except _Stop:
            pass
        return bool(got and got[0])

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
    out.window = _unverified_inputs(an, culprit, {r.seq for r, _ in cands[:hi - 1]})
    out.culprit = culprit
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
    for _ in range(16):
        ps = [p for p in an.parents(cur) if an.status.get(p.seq) not in ("input", "const")]
        if len(ps) != 1 or ps[0].bshape != observed.bshape or ps[0].is_write:
            break
        p = ps[0]
        if an.status.get(p.seq) in GOOD:
            break
        out[p.seq] = target
        if p.op not in _MOVES:
            break
        cur = p
    return out


def _unverified_inputs(an: Analyzer, culprit: Rec, held: set[int]) -> list[Rec]:
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
    val = _value_of(env, node, v)
    g, lid, reg = target
    garr = an.g.arrays[g] if r.is_write else an.g.layout(g, tuple(val.shape), lid)
    if garr is None:
        return False
    sl = region_slice(garr, reg, tuple(val.shape))
    return sl is not None and close(val, sl, an.g.atol, an.g.rtol)


def _substitute(an: Analyzer, env: Any, node: Any, ref: tuple[str, str, tuple[int, ...]]) -> None:
    key = node.op.out_key
    cur = env.buf.get(key) if key is not None else None
    if cur is None:
        return
    arr, valid = cur
    box = tuple(slice(0, max(0, int(n))) for n in (valid if valid is not None else arr.shape))
    bs = tuple(int(s.stop) for s in box)
    sl = _golden_slice(an, ref, bs)
    if sl is None:
        return
    new = np.array(arr, copy=True)
    new[box] = np.asarray(sl).astype(new.dtype)
    env.buf[key] = (new, valid)
