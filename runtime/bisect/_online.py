"""Derived goldens for running state over a tiled softmax axis (online softmax): a second look at a run.

Why: a kernel that walks the axis a softmax reduces over, tile by tile (flash attention, GQA decode), keeps a
running maximum, a running sum and an unnormalised accumulator in local tensors, and rescales them with
``alpha = exp(m_old - m_new)`` / ``beta = exp(m_tile - m_new)``. The golden computes ``softmax(scores) @ v`` on the
whole axis: none of those values exists there, so every op of the recurrence is ``unknown`` and a bug inside it
is never more than "somewhere in these 10 lines". Yet each of them is determined by golden tensors the golden
already has - the softmax input ``X`` (``scores``) and the value tensor ``V`` it is contracted with - and by the
tiling the kernel uses. For tile ``k`` of ``T`` columns (``lo = kT``, ``hi = min(N, (k+1)T)``):

* tile-local: ``tile_max@k = max X[..., lo:hi]``, ``tile_exp@k = exp(X[..., lo:hi] - tile_max@k)``,
  ``tile_sum@k`` its sum, ``tile_pv@k = tile_exp@k @ V[..., lo:hi, :]``;
* running (``k >= 1``): ``run_max@k = max X[..., :hi]``, ``run_sum@k = sum exp(X[..., :hi] - run_max@k)``,
  ``run_pv@k = exp(X[..., :hi] - run_max@k) @ V[..., :hi, :]``, ``alpha@k = exp(run_max@k-1 - run_max@k)``,
  ``beta@k = exp(tile_max@k - run_max@k)``.

They are goldens like the others (a kernel value matches one or not; the repair replay decides whether a guess
is the quantity an op computes), with one restriction: each is the member ``k`` of a family and is compared only
with kernel values of iteration ``k`` of the loop that walks the axis (``Golden.align``).

What the data flow must show, nothing named: a golden ``M`` equal to the row maximum of a golden ``X`` over its
last axis (a softmax's first step: torch's ``F.softmax`` steps are captured as ``... softmax.max``, a numpy golden
names it); kernel values matching ``X`` on tiles of ``T < N`` columns whose column offset is ``T`` times the index
of one ``pypto.loop`` in every execution (that loop walks the axis); ``V`` (optional) a golden whose
``exp(X - M) @ V`` or ``softmax(X) @ V`` is another golden tensor. Without such a loop nothing is derived.
"""

from __future__ import annotations

import logging

import numpy as np

from runtime.bisect._analyzer import Aligned, Analyzer, Golden
from runtime.bisect._compare import close
from runtime.sandbox import no_fork

__all__ = ["online_goldens"]

log = logging.getLogger(__name__)

_MAX_ELEMS = 1 << 24
"""derived goldens are built only for softmax inputs up to this many elements (memory and time stay small)"""


def _float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or "float" in a.dtype.name


def _softmax_inputs(g: Golden) -> list[tuple[str, str]]:
    """(X, M) pairs: golden ``M`` is the row maximum of golden ``X`` over its last axis (``X`` the nearest such
    golden before ``M`` in data-flow order)."""
    out: list[tuple[str, str]] = []
    names = list(g.arrays)
    for mi, m in enumerate(names):
        M = g.arrays[m]
        if g.kinds.get(m) == "input" or M.ndim < 2 or M.shape[-1] != 1 or not _float(M) or M.size == 0:
            continue
        for x in reversed(names[:mi]):
            X = g.arrays[x]
            if X.ndim != M.ndim or X.shape[:-1] != M.shape[:-1] or X.shape[-1] < 2 or not _float(X) \
                    or X.size > _MAX_ELEMS:
                continue
            xm = np.max(np.asarray(X, np.float64), axis=-1, keepdims=True)
            if close(np.asarray(M, np.float64), xm, 0.0, 1e-6):
                out.append((x, m))
                break
    return out


def _tiling(an: Analyzer, x: str) -> tuple[str, int] | None:
    """(loop, T): kernel values matching golden ``x`` cover ``T`` of its ``N`` columns, at column offset ``T``
    times the index of ``loop`` in every execution, over at least two iterations; or ``(loop, N)`` when they cover
    the whole row in iteration 0 of a loop that ran once."""
    n = an.g.arrays[x].shape[-1]
    seen: list[tuple[int, int, dict[str, int]]] = []
    whole: list[dict[str, int]] = []
    for r in an.recs:
        if an.status.get(r.seq) not in ("match", "input") or an.matched.get(r.seq, ("",))[0] != x:
            continue
        bs, reg = r.bshape, an.matched[r.seq][1]
        if not bs or not reg:
            continue
        if bs[-1] >= n:
            if int(reg[-1]) == 0:
                whole.append(dict(r.iteration))
            continue
        seen.append((int(bs[-1]), int(reg[-1]), dict(r.iteration)))
    if not seen:
        # the whole row in one tile, in a pypto.loop that ran once (the one-tile case of a tiled kernel: what its
        # running state starts from is tile 0's own values, the derived tile_*@0 - the unnormalised exp(X - M) @ V
        # has no golden of its own otherwise)
        for loop in dict.fromkeys(k for it in whole for k in it):
            if all(it.get(loop) == 0 for it in whole):
                return loop, n
        return None
    t = max(s[0] for s in seen)
    full = [s for s in seen if s[0] == t]
    loops = list(dict.fromkeys(k for s in full for k in s[2]))  # (in the order the run first entered them)
    for loop in loops:
        mine = [s for s in full if loop in s[2]]
        # (every value of that loop's iterations sits at T times its index; other passes over the axis - a
        # normalising pass 2 - run in loops of their own)
        if all(s[1] == s[2][loop] * t for s in mine) and len({s[2][loop] for s in mine}) >= 2:
            return loop, t
    return None


def _value_tensor(g: Golden, x: str, m: str) -> str | None:
    """A golden ``V`` the softmax of ``x`` is contracted with: ``exp(X - M) @ V`` or ``softmax(X) @ V`` equals
    another golden tensor (any layout of the same size)."""
    X = np.asarray(g.arrays[x], np.float64)
    e = np.exp(X - np.asarray(g.arrays[m], np.float64))
    p = e / e.sum(axis=-1, keepdims=True)
    n = X.shape[-1]
    others = [(k, a) for k, a in g.arrays.items() if k not in (x, m) and _float(a) and g.kinds.get(k) != "input"]
    for v, V in g.arrays.items():
        if v in (x, m) or V.ndim != X.ndim or V.shape[-2] != n or not _float(V) or V.size > _MAX_ELEMS:
            continue
        try:
            with no_fork():  # a threaded BLAS call while another thread forks can hang the fork (`no_fork`)
                cands = [e @ np.asarray(V, np.float64), p @ np.asarray(V, np.float64)]
        except ValueError:
            continue
        for c in cands:
            for k, a in others:
                if k != v and a.size == c.size and close(np.asarray(a, np.float64).reshape(c.shape), c,
                                                         g.atol, g.rtol):
                    return v
    return None


def _derive(x: str, X: np.ndarray, V: np.ndarray | None, t: int, loop: str,
            ) -> tuple[dict[str, np.ndarray], dict[str, Aligned]]:
    """The per-tile and running goldens (module docstring) of softmax input ``X`` (float64) over tiles of ``t``
    columns, each the member of its tile's iteration of ``loop``; in data-flow order (tile by tile, the tile's own
    values before the running ones)."""
    n = X.shape[-1]
    count = (n + t - 1) // t
    derived: dict[str, np.ndarray] = {}
    align: dict[str, Aligned] = {}

    def put(what: str, k: int, a: np.ndarray) -> None:
        if np.isnan(a).any():
            return  # (a fully masked tile: no value to compare with)
        name = f"online({x}).{what}@{k}"
        derived[name] = a.astype(np.float32)
        align[name] = Aligned(f"online({x}).{what}", k, count, loop)

    prev: np.ndarray | None = None
    with np.errstate(all="ignore"):
        for k in range(count):
            lo, hi = k * t, min(n, (k + 1) * t)
            xt = X[..., lo:hi]
            tm = xt.max(axis=-1, keepdims=True)
            te = np.exp(xt - tm)
            put("tile_max", k, tm)
            put("tile_exp", k, te)
            put("tile_sum", k, te.sum(axis=-1, keepdims=True))
            if V is not None:
                with no_fork():
                    put("tile_pv", k, te @ V[..., lo:hi, :])
            rm = X[..., :hi].max(axis=-1, keepdims=True)
            if k >= 1 and prev is not None:
                re = np.exp(X[..., :hi] - rm)
                put("run_max", k, rm)
                put("alpha", k, np.exp(prev - rm))
                put("beta", k, np.exp(tm - rm))
                put("run_sum", k, re.sum(axis=-1, keepdims=True))
                if V is not None:
                    with no_fork():
                        put("run_pv", k, re @ V[..., :hi, :])
            prev = rm
    return derived, align


def online_goldens(an: Analyzer) -> tuple[Golden, str] | None:
    """The golden of ``an`` extended with the per-tile and running goldens of an online softmax over the axis
    a kernel loop walks (module docstring), and a sentence saying what was derived; None when the data flow shows
    no such loop."""
    g = an.g
    for x, m in _softmax_inputs(g):
        tiling = _tiling(an, x)
        if tiling is None:
            continue
        loop, t = tiling
        X = np.asarray(g.arrays[x], np.float64)
        n = X.shape[-1]
        count = (n + t - 1) // t
        v = _value_tensor(g, x, m)
        V = np.asarray(g.arrays[v], np.float64) if v is not None else None
        derived, align = _derive(x, X, V, t, loop)
        if not derived:
            continue
        arrays: dict[str, np.ndarray] = {}
        kinds: dict[str, str] = {}
        for name, a in g.arrays.items():
            arrays[name], kinds[name] = a, g.kinds[name]
            if name == x:
                for dn, da in derived.items():
                    arrays[dn], kinds[dn] = da, "intermediate"
        out = Golden(arrays, kinds, g.atol, g.rtol, align={**g.align, **align})
        for hn, (perm, grid) in g._host_map.items():  # (outputs laid out as their kernel buffers stay so)
            out.set_host(hn, g.host[hn], perm, grid)
        note = (f"second look with derived goldens: kernel loop {loop!r} walks the last axis of golden {x!r} "
                f"({n} columns) in tiles of {t}, and {m!r} is its row maximum (a softmax); the per-tile and running "
                f"values of an online softmax over those {count} tiles (max, exp, sum"
                + (f", and their product with {v!r}" if v is not None else "")
                + ", the rescale factors alpha/beta) are computed from the golden and compared with the kernel's "
                f"values of the same iteration only (named 'online({x}).<value>@<tile>')")
        log.debug("online goldens: %s", note)
        return out, note
    return None

