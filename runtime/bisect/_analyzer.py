"""Value mapping for the automatic method: tile regions, golden matching and per-op status.

``Analyzer`` holds one recorded run: it maps kernel arguments to golden tensors, infers the tile offsets of
every recorded value from the data flow and classifies each value (match / mismatch / nan / unknown /
const / input). The rules that pick a culprit live in ``_rules``; ``_auto.analyze`` runs both.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

import numpy as np

from runtime.bisect._records import Rec
from runtime.dtypes import DTypeError, name_of

__all__ = ["BAD", "CONST", "GOOD", "Analyzer", "AutoResult", "Golden", "candidate_regions", "close_all", "region_slice"]

log = logging.getLogger(__name__)

_TRANSPARENT = frozenset({"view", "cast", "move", "assemble", "transpose", "reshape", "clone", "read", "setitem"})
_REDUCE = frozenset({"sum", "amax", "amin", "prod", "mean", "var"})
CONST = frozenset({"full", "zeros", "ones", "arange"})
GOOD = frozenset({"match", "const", "input"})
BAD = frozenset({"mismatch", "nan", "misplaced"})


@dataclass
class Golden:
    """The golden tensors of one case, in golden data-flow order (inputs, intermediates, outputs)."""

    arrays: dict[str, np.ndarray]
    kinds: dict[str, str]
    atol: float
    rtol: float

    def __post_init__(self) -> None:
        self.order = {n: i for i, n in enumerate(self.arrays)}
        self.f64 = {n: np.asarray(a, dtype=np.float64) for n, a in self.arrays.items()}
        self._shaped: dict[tuple[str, int], np.ndarray | None] = {}

    def is_input_copy(self, name: str) -> bool:
        """True when golden ``name`` holds an input's values rearranged (``q.reshape(...)``, a transpose):
        kernel views of that input stand for it, so no kernel op is ever compared with it."""
        if not hasattr(self, "_copies"):
            self._copies: dict[str, bool] = {}
        if name not in self._copies:
            a = self.f64[name]
            same = False
            for n, k in self.kinds.items():
                b = self.f64[n]
                if k == "input" and b.size == a.size and a.size:
                    probe = slice(0, min(a.size, 4096))
                    if np.array_equal(np.sort(a.ravel())[probe], np.sort(b.ravel())[probe]):
                        same = True
                        break
            self._copies[name] = same
        return self._copies[name]

    def shaped(self, name: str, ndim: int) -> np.ndarray | None:
        """Golden ``name`` in a kernel tile's rank: as is, with unit axes dropped or added, or with its leading
        axes merged (a golden ``[heads, G, S]`` read by a kernel that keeps heads and groups on one row axis)."""
        key = (name, ndim)
        if key not in self._shaped:
            g = self.f64[name]
            out: np.ndarray | None = None
            if g.ndim == ndim:
                out = g
            elif g.ndim > ndim >= 1:
                sq = [n for n in g.shape if n != 1]
                if len(sq) == ndim:
                    out = g.reshape(sq)
                else:
                    lead = int(np.prod(g.shape[: g.ndim - ndim + 1]))
                    out = g.reshape((lead, *g.shape[g.ndim - ndim + 1:]))
            elif g.ndim < ndim:
                out = g.reshape((1,) * (ndim - g.ndim) + g.shape)
            self._shaped[key] = out
        return self._shaped[key]


@dataclass
class AutoResult:
    status: dict[int, str]
    matched: dict[int, tuple[str, tuple[int, ...]]]
    offsets: dict[int, tuple[int, ...] | None]
    param_map: dict[str, str]
    observed: Rec | None
    culprit: Rec | None
    window: list[Rec]
    evidence: list[str]
    unmapped: list[tuple[Rec, str]]
    coverage: dict[str, int] = field(default_factory=dict)
    """target golden name -> number of mismatching elements no write ever covered."""
    suspects: list = field(default_factory=list)
    """``_claims.Suspect`` list when no culprit could be shown (ranked by the evidence)."""
    call_sites: dict[int, int] = field(default_factory=dict)
    """op seq -> kernel line that called the helper function the op was recorded in."""
    expected: dict[int, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    """op seq -> golden tensor and region a departing value was compared with."""


def _dname(a: np.ndarray) -> str:
    try:
        return name_of(a.dtype)
    except DTypeError:
        return str(a.dtype)


def close_all(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    if a.shape != b.shape:
        return False
    with np.errstate(all="ignore"):
        if a.size > 64:  # most candidates fail on their first elements: check those before the whole tile
            fa, fb = a.flat[:64], b.flat[:64]
            if not np.all(np.abs(fa - fb) <= atol + rtol * np.abs(fb)):
                return False
        return bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


def candidate_regions(offs: tuple[int, ...], ext: tuple[int, ...], shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Where a tile may sit in a golden tensor: the region its provenance implies first, then nearby ones.

    A view of an intermediate keeps the intermediate's column offsets (``gates[:, H:2H]`` sits at column ``H``
    of the fused projection but at column 0 of the golden ``forget_gate``); a tile copied into a local buffer
    restarts at offset 0. So, per axis: the implied offset, the offset modulo the golden extent, and 0.
    """
    if len(offs) != len(shape):
        return []
    per_axis: list[list[int]] = []
    for o, e, n in zip(offs, ext, shape, strict=True):
        cands = []
        for c in (o, o % n if n else 0, 0):
            if 0 <= c and c + e <= n and c not in cands:
                cands.append(c)
        if not cands:
            return []
        per_axis.append(cands)
    out: list[tuple[int, ...]] = [tuple(c[0] for c in per_axis)]
    for a, cands in enumerate(per_axis):  # one axis moved at a time, then all axes at their last candidate
        for c in cands[1:]:
            alt = list(out[0])
            alt[a] = c
            if tuple(alt) not in out:
                out.append(tuple(alt))
    last = tuple(c[-1] for c in per_axis)
    if last not in out:
        out.append(last)
    return out


def region_slice(g: np.ndarray, offs: tuple[int, ...], ext: tuple[int, ...]) -> np.ndarray | None:
    if g.ndim != len(offs):
        return None
    for o, e, n in zip(offs, ext, g.shape, strict=True):
        if o < 0 or o + e > n:
            return None
    return g[tuple(slice(o, o + e) for o, e in zip(offs, ext, strict=True))]


class Analyzer:
    def __init__(self, recs: list[Rec], golden: Golden, kernel_args: list[dict]) -> None:
        self.recs = recs
        self.g = golden
        self.by_seq = {r.seq: r for r in recs}
        self.linked = any(r.inputs for r in recs)
        if kernel_args and "args" in kernel_args[-1]:  # one entry per jit call: use the last call
            kernel_args = list(kernel_args[-1].get("args") or [])
        self.arg_shapes = {a["name"]: tuple(a.get("shape") or ()) for a in kernel_args if "name" in a}
        self.writes: dict[str, list[Rec]] = {}
        for r in recs:
            if r.is_write and r.target:
                self.writes.setdefault(r.target, []).append(r)
        self.status: dict[int, str] = {}
        self.matched: dict[int, tuple[str, tuple[int, ...]]] = {}
        self.offs: dict[int, tuple[int, ...] | None] = {}
        self.conflicts: dict[int, list[int]] = {}
        self.minority: dict[int, list[tuple[int, Rec]]] = {}
        """op seq -> (axis, operand) whose tile offset on that axis disagrees with the other operands' majority"""
        self.expected: dict[int, tuple[str, tuple[int, ...]]] = {}
        """op seq -> the golden tensor and region it was compared with when it mismatched"""
        self.paired: dict[int, str] = {}
        """node -> golden tensor paired with it by data-flow position (no value matched either)"""
        self.unmapped: list[tuple[Rec, str]] = []
        self.param_map: dict[str, str] = {}
        self.inputs = {n for n, k in golden.kinds.items() if k == "input"}
        self._overwritten: set[int] = set()
        self.source: str | None = None

    # ------------------------------------------------------------------------------- kernel arguments

    @staticmethod
    def _fits(arg: tuple[int, ...], golden: tuple[int, ...]) -> bool:
        """A kernel argument holds a golden tensor: same shape, or padded to whole tiles on some axes."""
        return len(arg) == len(golden) and all(a >= n for a, n in zip(arg, golden, strict=True))

    def map_params(self) -> None:
        """Kernel tensor names -> golden names: by name, by view contents (inputs), by writes (outputs)."""
        names = set(self.arg_shapes) | {r.source for r in self.recs if r.source} | set(self.writes)
        for n in sorted(names):
            if n in self.g.arrays and (n not in self.arg_shapes or self._fits(self.arg_shapes[n], self.g.arrays[n].shape)):
                self.param_map[n] = n
        votes: dict[str, dict[str, int]] = {}
        for r in self.recs:
            if r.op != "view" or not r.source or r.source in self.param_map or r.offsets is None:
                continue
            box = r.box()
            if box is None:
                continue
            b = box.astype(np.float64)
            for gname in self.inputs:
                sl = region_slice(self.g.f64[gname], tuple(r.offsets), b.shape)
                if sl is not None and np.array_equal(sl, b, equal_nan=False):
                    votes.setdefault(r.source, {}).setdefault(gname, 0)
                    votes[r.source][gname] += 1
        for src, v in sorted(votes.items()):
            self.param_map[src] = max(sorted(v), key=lambda k: v[k])
        taken = set(self.param_map.values())
        scored: list[tuple[float, str, str]] = []
        for tgt in sorted(self.writes):
            if tgt in self.param_map or (self.arg_shapes and tgt not in self.arg_shapes):
                continue
            for gname, garr in self.g.f64.items():
                if gname in self.inputs or gname in taken:
                    continue
                shp = self.arg_shapes.get(tgt)
                if shp and (len(shp) != garr.ndim or any(a < n for a, n in zip(shp, garr.shape, strict=True))):
                    continue  # (an argument larger than the golden is an output padded to whole tiles)
                ws = self.writes[tgt]
                fits = ok = 0
                for w in ws:
                    box = w.box()
                    if box is None or w.offsets is None:
                        continue
                    sl = region_slice(garr, tuple(w.offsets), box.shape)
                    if sl is None:
                        continue
                    fits += 1
                    ok += close_all(box.astype(np.float64), sl, self.g.atol, self.g.rtol)
                if fits == 0:
                    continue
                # evidence first (tiles that match), then outputs over intermediates, then a shared name prefix
                # (`p_out` -> `p_new`), so a wrong output tile does not steal another output's golden
                prefix = len(os.path.commonprefix([tgt, gname]))
                score = ok / len(ws) + (0.5 if self.g.kinds[gname] == "output" else 0.0) + 0.01 * min(prefix, 9)
                scored.append((score, tgt, gname))
        for _score, tgt, gname in sorted(scored, key=lambda t: (-t[0], t[1], t[2])):
            if tgt not in self.param_map and gname not in taken:
                self.param_map[tgt] = gname
                taken.add(gname)

    # ------------------------------------------------------------------------------- regions

    def operand_recs(self, r: Rec) -> list[Rec]:
        out = []
        for ref in r.inputs or []:
            if ref.get("kind") == "record":
                p = self.by_seq.get(int(ref.get("seq", -1)))
                if p is not None:
                    out.append(p)
        return out

    def _tensor_operand(self, name: str, before: int) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        """Shape and tile offsets of a tensor read directly (``acc + part``).

        A kernel argument mapped to a golden tensor is read whole (offsets 0). A local tensor carries the
        offsets of the value last written into it: ``acc`` holds rows ``i*T..`` when ``acc[:] = f(x_tile)``.
        """
        shp = self.arg_shapes.get(name)
        if shp is None and name in self.g.arrays:
            shp = self.g.arrays[name].shape
        if name in self.param_map and shp is not None:
            return tuple(shp), (0,) * len(shp)
        ws = self.resolve_tensor(name, before)
        if ws:
            w = ws[-1]
            src = self.operand_recs(w)
            box = w.value
            wshape = tuple(np.asarray(box).shape) if box is not None else tuple(shp or ())
            if src and (w.offsets is None or not any(w.offsets)):
                return wshape, self.offs.get(src[0].seq)
            return wshape, None
        return tuple(shp or ()), None

    def region(self, r: Rec) -> tuple[int, ...] | None:
        value = r.value
        nd = np.asarray(value).ndim if value is not None else (len(r.shape) if r.shape else 0)
        if r.is_write and r.target and self.arg_shapes and r.target not in self.arg_shapes \
                and not any(r.offsets or ()):
            # a whole-tile copy into a local buffer (``q_tile[:] = view(q, ..., [h * G, 0])``): the value keeps its
            # provenance; the buffer's own offsets restart at 0 in every iteration and say nothing about it
            src = self.operand_recs(r)
            if src:  # (a constant fill has no place: None, so it does not outvote real operands later)
                return self.offs.get(src[0].seq)
        if r.is_write or r.op == "view":
            if r.op == "view" and not r.source and self.operand_recs(r):
                ops = self.operand_recs(r)
                parent = self.offs.get(ops[0].seq) if ops else None
                if parent is None or r.offsets is None or len(parent) != len(r.offsets):
                    return None
                return tuple(p + o for p, o in zip(parent, r.offsets, strict=True))
            return tuple(r.offsets) if r.offsets is not None else (0,) * nd
        if r.op in CONST:
            return None
        shapes: list[tuple[tuple[int, ...], tuple[int, ...] | None]] = []
        owners: list[Rec | None] = []
        for ref in r.inputs or []:
            if ref.get("kind") == "record":
                p = self.by_seq.get(int(ref.get("seq", -1)))
                if p is not None and (p.value is not None or p.shape):
                    shapes.append((tuple(np.asarray(p.value).shape) if p.value is not None else tuple(p.shape or ()),
                                   self.offs.get(p.seq)))
                    owners.append(p)
            elif ref.get("kind") == "tensor":
                shapes.append(self._tensor_operand(str(ref.get("name")), r.seq))
                owners.append(None)
        if value is None:
            return None
        oshape = np.asarray(value).shape
        if r.op == "matmul" and len(shapes) == 2 and shapes[0][1] is not None and shapes[1][1] is not None:
            (sa, oa), (sb, ob) = shapes
            if len(oa) < 2 or len(ob) < 2:
                return None
            m = oa[-1] if r.attrs.get("a_trans") else oa[-2]
            n = ob[-2] if r.attrs.get("b_trans") else ob[-1]
            return (*oa[:-2], m, n)
        if r.op == "transpose":
            if not shapes or shapes[0][1] is None:
                return None
            o = list(shapes[0][1])
            d0, d1 = int(r.attrs.get("dim0", -2)), int(r.attrs.get("dim1", -1))
            o[d0], o[d1] = o[d1], o[d0]
            return tuple(o)
        if r.op in _REDUCE:
            if not shapes or shapes[0][1] is None:
                return None
            o = list(shapes[0][1])
            d = int(r.attrs.get("dim", -1)) % len(o)
            if r.attrs.get("keepdim", len(o) == len(oshape)) and len(o) == len(oshape):
                o[d] = 0
            else:
                o.pop(d)
            return tuple(o) if len(o) == len(oshape) else None
        if r.op == "reshape" and not (shapes and shapes[0][0] == oshape):
            return None
        out: list[int] = []
        for a, n in enumerate(oshape):
            votes: dict[int, list[Rec | None]] = {}
            for (shp, o), owner in zip(shapes, owners, strict=True):
                if o is None or len(shp) != len(oshape):
                    continue
                if shp[a] == n and (n > 1 or all(s[0][a] == 1 for s in shapes if len(s[0]) == len(oshape))):
                    votes.setdefault(o[a], []).append(owner)
            pick = None
            if votes:
                # the offset most operands agree on (ties: the first operand's); the others are the minority
                pick = max(votes, key=lambda k: (len(votes[k]), -min(i for i, (_, o) in enumerate(shapes)
                                                                    if o is not None and len(o) > a and o[a] == k)))
            if len(votes) > 1:
                self.conflicts.setdefault(r.seq, []).append(a)
                for k, owners_k in votes.items():
                    if k != pick and len(owners_k) < len(votes[pick]):  # type: ignore[index]
                        self.minority.setdefault(r.seq, []).extend((a, w) for w in owners_k if w is not None)
            out.append(pick if pick is not None else 0)
        if not shapes or all(o is None for _, o in shapes):
            return None
        return tuple(out)

    # ------------------------------------------------------------------------------- status

    def match_region(self, b: np.ndarray, gname: str, offs: tuple[int, ...] | None) -> tuple[int, ...] | None:
        """The region of golden ``gname`` (in :meth:`Golden.shaped` coordinates) that ``b`` equals, or None."""
        garr = self.g.shaped(gname, b.ndim)
        if garr is None:
            return None
        if offs is None:
            regions = [(0,) * b.ndim] if garr.shape == b.shape else []
        else:
            regions = candidate_regions(tuple(offs), b.shape, garr.shape)
        for reg in regions:
            sl = region_slice(garr, reg, b.shape)
            if sl is not None and close_all(b, sl, self.g.atol, self.g.rtol):
                return reg
        return None

    def _operand_order(self, r: Rec) -> int:
        best = -1
        for p in self.operand_recs(r):
            m = self.matched.get(p.seq)
            if m is not None:
                best = max(best, self.g.order[m[0]])
        for ref in r.inputs or []:
            if ref.get("kind") == "tensor":
                gname = self.param_map.get(str(ref.get("name")))
                if gname in self.inputs:
                    best = max(best, self.g.order[gname])
        return best

    def classify(self) -> None:
        for ws in self.writes.values():
            for i, w in enumerate(ws):
                if w.offsets is None or w.valid_shape is None:
                    continue
                lo = np.array(w.offsets)
                hi = lo + np.array(w.valid_shape)
                for later in ws[i + 1:]:
                    if later.offsets is None or later.valid_shape is None:
                        continue
                    lo2 = np.array(later.offsets)
                    hi2 = lo2 + np.array(later.valid_shape)
                    if np.all(np.maximum(lo, lo2) < np.minimum(hi, hi2)):
                        self._overwritten.add(w.seq)
                        break
        for r in self.recs:
            self.offs[r.seq] = self.region(r)
            self.status[r.seq] = self._classify(r)

    def _classify(self, r: Rec) -> str:
        box = r.box()
        if r.op in CONST and not (r.inputs or []):
            return "const"
        if box is None:
            self.unmapped.append((r, "no value recorded"))
            return "unknown"
        b = box.astype(np.float64)
        offs = self.offs.get(r.seq)
        if r.op == "view" and r.source and self.param_map.get(r.source) in self.inputs:
            self.matched[r.seq] = (self.param_map[r.source], tuple(r.offsets or ()))
            return "input"
        if r.is_write and r.target:
            gname = self.param_map.get(r.target)
            if gname is not None and r.seq not in self._overwritten and offs is not None:
                sl = region_slice(self.g.f64[gname], offs, b.shape)
                if sl is not None and close_all(b, sl, self.g.atol, self.g.rtol):
                    self.matched[r.seq] = (gname, offs)
                    return "match"
                return "nan" if np.isnan(b).any() else "mismatch"
            srcs = self.operand_recs(r)
            if srcs and self.status.get(srcs[0].seq) in GOOD and srcs[0].seq in self.matched:
                self.matched[r.seq] = self.matched[srcs[0].seq]
                return self.status[srcs[0].seq]
        if np.isnan(b).any():
            return "nan"
        floor = -1 if r.op in _TRANSPARENT else self._operand_order(r)
        strict = r.op not in _TRANSPARENT
        dt = str(r.dtype or "")
        cands = sorted(self.g.f64, key=lambda n: (n != r.name, _dname(self.g.arrays[n]) != dt, self.g.order[n]))
        for gname in cands:
            o = self.g.order[gname]
            if gname != r.name and (o < floor or (strict and o == floor)):
                continue
            reg = self.match_region(b, gname, offs)
            if reg is not None:
                self.matched[r.seq] = (gname, reg)
                return "match"
        # a kernel name equal to a golden name is no evidence by itself (an online softmax's block-local `p` is
        # not the golden's `p`): such ops are compared by name only through _claims.pair_orphans
        if offs is None and r.op not in CONST:
            self.unmapped.append((r, "no tile offsets could be inferred (no data-flow link or reshape)"))
        return "unknown"

    # ------------------------------------------------------------------------------- narrowing

    def resolve_tensor(self, name: str, before: int) -> list[Rec]:
        """The writes into tensor ``name`` whose data a read at ``before`` sees (latest first)."""
        ws = [w for w in self.writes.get(name, []) if w.seq < before]
        return ws[-1:] if ws else []

    def parents(self, r: Rec) -> list[Rec]:
        out = self.operand_recs(r)
        for ref in r.inputs or []:
            if ref.get("kind") == "tensor":
                nm = str(ref.get("name"))
                if self.param_map.get(nm) in self.inputs:
                    continue
                out.extend(self.resolve_tensor(nm, r.seq))
        return out

    def uninitialized_reads(self, r: Rec) -> list[str]:
        bad = []
        for ref in r.inputs or []:
            if ref.get("kind") == "tensor":
                nm = str(ref.get("name"))
                if self.param_map.get(nm) not in self.inputs and not self.resolve_tensor(nm, r.seq):
                    bad.append(nm)
        return bad

    def window(self, b: Rec) -> list[Rec]:
        seen: dict[int, Rec] = {b.seq: b}
        stack = [b]
        while stack and len(seen) < 5000:
            cur = stack.pop()
            for p in self.parents(cur):
                if p.seq in seen:
                    continue
                if self.status.get(p.seq) in GOOD:
                    continue
                seen[p.seq] = p
                stack.append(p)
        return sorted(seen.values(), key=lambda r: r.seq)

    def lineage_views(self, b: Rec) -> list[Rec]:
        seen: dict[int, Rec] = {}
        stack = [b]
        visited = {b.seq}
        while stack:
            cur = stack.pop()
            for p in self.operand_recs(cur):
                if p.seq in visited:
                    continue
                visited.add(p.seq)
                if p.op == "view" and (p.source or not self.operand_recs(p)):
                    seen[p.seq] = p
                else:
                    stack.append(p)
        return sorted(seen.values(), key=lambda r: r.seq)

    def irregular_axes(self, r: Rec) -> list[int]:
        """Axes on which the tiles of ``r``'s op (all iterations) break the tiling grid of their tensor."""
        tensor = r.source or r.target
        gname = self.param_map.get(tensor or "")
        if gname is None:
            return []
        dims = self.g.arrays[gname].shape
        same = [x for x in self.recs if x.node == r.node and x.line == r.line and x.op == r.op
                and x.offsets is not None]
        if not same or len(dims) != len(same[0].offsets or ()):
            return []
        bad = []
        for a, n in enumerate(dims):
            offs = sorted({x.offsets[a] for x in same})  # type: ignore[index]
            tile = (same[0].shape or [n] * len(dims))[a]
            ends = [x.offsets[a] + (x.valid_shape or x.shape or [0] * len(dims))[a] for x in same]  # type: ignore[index]
            if offs[0] != 0 or max(ends) > n or any(o % tile for o in offs if tile):
                bad.append(a)
        return bad

    def nan_origin(self, window: list[Rec]) -> Rec | None:
        for r in window:
            box = r.box()
            if box is None or not np.isnan(box.astype(np.float64)).any():
                continue
            parents_nan = False
            for p in self.operand_recs(r):
                pb = p.box()
                if pb is not None and np.isnan(pb.astype(np.float64)).any():
                    parents_nan = True
            if not parents_nan:
                return r
        return None
