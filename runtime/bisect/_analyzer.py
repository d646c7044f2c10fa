"""Value mapping for the automatic method: tile regions, golden matching and per-op status.

``Analyzer`` holds one recorded run. It is fed one op value at a time, in execution order, as the trusted
replay (``_replay``) produces them: each value gets its tile offsets in the index space of the tensors it
derives from (from the data flow) and is compared at once with every golden tensor it could be a slice of
(``Summary``: where it matches, NaN, how it follows a golden it does not match). Values are then dropped
(a budget keeps small ones for the report's statistics), so memory does not grow with the run. After the
run, ``finish`` maps kernel arguments to golden tensors and classifies each value (match / mismatch / nan /
unknown / const / input) from the summaries. The rules that pick a culprit live in ``_rules`` and
``_claims``; ``_auto.analyze`` runs them.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from runtime.bisect._compare import any_inf, any_nan, close, equal, fit, inside, tile_check
from runtime.bisect._compare import close as _close
from runtime.bisect._records import Rec
from runtime.dtypes import DTypeError, name_of

__all__ = ["BAD", "CONST", "GOOD", "Aligned", "Analyzer", "AutoResult", "Golden", "Summary", "candidate_regions",
           "close_all", "region_slice"]

log = logging.getLogger(__name__)

_TRANSPARENT = frozenset({"view", "cast", "move", "assemble", "transpose", "reshape", "clone", "read", "setitem"})
_REDUCE = frozenset({"sum", "amax", "amin", "prod", "mean", "var"})
CONST = frozenset({"full", "zeros", "ones", "arange"})
GOOD = frozenset({"match", "const", "input"})
BAD = frozenset({"mismatch", "nan", "misplaced"})
UPDATED = " (updated)"
"""Suffix of the golden tensor holding an input's values after the golden updated it in place."""


def close_all(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    return close(a, b, atol, rtol)


class Aligned(NamedTuple):
    """A golden tensor that is the ``k``-th of ``count`` values of one ``family`` (one per iteration of something
    the kernel iterates too): a kernel value may only match the member of its own iteration. Without this, a
    running quantity at iteration j "matches" the golden of iteration j' whenever the two happen to agree (a
    converging loop, a prefix maximum that stops changing), and a wrong value passes for a right one."""

    family: str
    k: int
    count: int
    loop: str | None = None
    """the kernel's ``pypto.loop`` name whose index must equal ``k`` (0-based); None: another kernel-side count"""


@dataclass
class Golden:
    """The golden tensors of one case, in golden data-flow order (inputs, intermediates, outputs).

    Arrays keep their own dtype (a float64 copy of every golden tensor would double the memory at real
    shapes): comparisons convert one block at a time (``_compare``).
    """

    arrays: dict[str, np.ndarray]
    kinds: dict[str, str]
    atol: float
    rtol: float
    align: dict[str, Aligned] = field(default_factory=dict)
    """golden name -> its place in an iteration family (``Aligned``); goldens not in it align with every value"""
    host: dict[str, np.ndarray] = field(default_factory=dict)
    """golden output -> that output in the layout of the kernel buffer the wrapper returns it from, where the
    wrapper permutes / pads / reshapes between the two (``api._host_layouts``): :meth:`shaped` of that rank"""

    def aligned(self, name: str, r: Rec) -> bool:
        """Golden ``name`` may be compared with kernel value ``r``: it belongs to no iteration family, or it is the
        member of ``r``'s own iteration (``r.iteration[loop] == k``)."""
        a = self.align.get(name)
        if a is None or a.loop is None:
            return True
        return r.iteration.get(a.loop) == a.k

    def __post_init__(self) -> None:
        self.order = {n: i for i, n in enumerate(self.arrays)}
        self._shaped: dict[tuple[str, int], np.ndarray | None] = {}
        self._copies: dict[str, bool] = {}
        self._layouts: dict[tuple[str, tuple[int, ...]], list[tuple[str, np.ndarray]]] = {}
        self._tiny: dict[str, bool] = {}
        self._host_map: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}

    @property
    def names(self) -> list[str]:
        return list(self.arrays)

    def is_input_copy(self, name: str) -> bool:
        """True when golden ``name`` holds an input's values rearranged (``q.reshape(...)``, a transpose):
        kernel views of that input stand for it, so no kernel op is ever compared with it."""
        if name not in self._copies:
            same = False
            inputs = [self.arrays[n] for n, k in self.kinds.items() if k == "input"]
            inputs = [b for b in inputs if b.size == self.arrays[name].size]
            if inputs and self.arrays[name].size:
                ends = _ends(self.arrays[name])  # (a copy has the same least and greatest value: cheap to rule out)
                inputs = [b for b in inputs if np.array_equal(ends, _ends(b), equal_nan=True)]
                if inputs:
                    smallest = _smallest(self.arrays[name])
                    same = any(np.array_equal(smallest, _smallest(b)) for b in inputs)
            self._copies[name] = same
        return self._copies[name]

    def tiny(self, name: str, part: np.ndarray) -> bool:
        """``part`` (a slice of golden ``name``) lies entirely inside ``atol``. Whether the whole tensor does is
        computed once per tensor (AdamW: every op value is compared with ~30 tensors of 14M elements)."""
        if name not in self._tiny:
            self._tiny[name] = inside(self.arrays[name], self.atol)
        if self._tiny[name]:
            return True
        if part.size == self.arrays[name].size:
            return False
        return inside(part, self.atol)

    def set_host(self, name: str, laid: np.ndarray, perm: tuple[int, ...], grid: tuple[int, ...]) -> None:
        """Golden output ``name`` is read, in rank ``laid.ndim``, as ``laid`` (its kernel buffer's layout): the
        buffer read as ``grid`` holds the output's non-unit axes transposed by ``perm`` at its origin."""
        self.host[name] = laid
        self._host_map[name] = (perm, grid)
        self._shaped.clear()
        self._layouts.clear()

    def host_view(self, name: str, arr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """``arr`` (in output ``name``'s own shape: what the wrapper returned) laid out as :attr:`host` lays the
        golden, and the mask of the buffer elements the output shows (the rest the wrapper dropped); None when
        ``name`` has no host layout."""
        m = self._host_map.get(name)
        if m is None:
            return None
        perm, grid = m
        core = np.asarray(arr).reshape([n for n in np.shape(arr) if n != 1]).transpose(perm)
        laid = np.zeros(grid, dtype=core.dtype)
        shown = np.zeros(grid, dtype=bool)
        part = tuple(slice(0, n) for n in core.shape)
        laid[part] = core
        shown[part] = True
        shape = self.host[name].shape
        return laid.reshape(shape), shown.reshape(shape)

    def shaped(self, name: str, ndim: int) -> np.ndarray | None:
        """Golden ``name`` in a kernel tile's rank: as is, with unit axes dropped or added, or with its leading
        axes merged (a golden ``[heads, G, S]`` read by a kernel that keeps heads and groups on one row axis); an
        output the wrapper permuted from a kernel buffer of that rank, in the buffer's layout (``host``)."""
        key = (name, ndim)
        if key not in self._shaped:
            g = self.arrays[name]
            out: np.ndarray | None = None
            h = self.host.get(name)
            if h is not None and h.ndim == ndim:
                out = h
            elif g.ndim == ndim:
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

    def layouts(self, name: str, tile: tuple[int, ...]) -> list[tuple[str, np.ndarray]]:
        """Ways golden ``name`` may be laid out in the index space of a kernel tile of shape ``tile``.

        ``""``: :meth:`shaped` (as is, unit axes dropped or added, leading axes merged). ``"split"``: unit axes
        dropped, then leading axes split into the tile's when the tile covers them whole (a golden
        ``[1, 32, 1, S]`` seen as ``[4, 8, S]`` by a kernel that keeps KV heads and groups apart). ``"axes(...)"``:
        the golden's axes permuted (a golden ``[B, 4, 4]`` a kernel transposes to ``[4, 4, B]``), only when no
        other layout fits the tile. Every layout is a view of the golden array (no copy)."""
        tile = tuple(int(n) for n in tile)
        key = (name, tile)
        if key in self._layouts:
            return self._layouts[key]
        out: list[tuple[str, np.ndarray]] = []
        base = self.shaped(name, len(tile))
        if base is not None:
            out.append(("", base))
        g = self.arrays[name]
        sq = [n for n in g.shape if n != 1]
        split = _split(g.reshape(sq) if sq else g.reshape(1), tile)
        if split is not None and (base is None or split.shape != base.shape):
            out.append(("split", split))
        if g.ndim > len(tile) >= 1 and base is not None and len(sq) == len(tile):
            # unit axes dropped was the shaped layout; a golden ``[heads, G, 1]`` read by a kernel tile ``[G, 1]``
            # that keeps heads and groups on one row axis needs its leading axes merged instead (``[heads*G, 1]``)
            lead = int(np.prod(g.shape[: g.ndim - len(tile) + 1]))
            merged = g.reshape((lead, *g.shape[g.ndim - len(tile) + 1:]))
            if merged.shape != base.shape and all(a.shape != merged.shape for _l, a in out):
                out.append(("merge", merged))
        t_one = [n for n in tile if n != 1]
        if not any(_covers(a.shape, tile) for _l, a in out) and len(sq) > 1 and len(t_one) == 1 \
                and t_one[0] <= int(np.prod(sq)):
            # a kernel column (or row) of one non-unit axis walking a golden of several, all merged: gated_delta_rule's
            # ``g_cum_in`` [Nv*S_pad, 1] read as ``[L, 1]`` tiles at ``bn * S_pad + s`` holds the golden's ``g_cum``
            # [B, Nv, chunks, L] merged into one axis; no other layout puts a ``[L, 1]`` tile inside ``[Nv, L]``
            flat = _unsqueeze_like(g.reshape(-1), tile)
            if flat is not None:
                out.append(("flat", flat))
        if not any(_covers(a.shape, tile) for _l, a in out) and 1 < len(sq) <= 4:
            core = g.reshape(sq)
            t_sq = [n for n in tile if n != 1]
            if len(t_sq) == len(sq):
                import itertools

                for perm in itertools.permutations(range(len(sq))):
                    if list(perm) == sorted(perm):
                        continue
                    v = core.transpose(perm)
                    if all(t <= n for t, n in zip(t_sq, v.shape, strict=True)):
                        shaped = _unsqueeze_like(v, tile)
                        if shaped is not None:
                            out.append((f"axes{tuple(perm)}", shaped))
                    if len(out) >= 4:
                        break
        self._layouts[key] = out
        return out

    def layout(self, name: str, tile: tuple[int, ...], lid: str) -> np.ndarray | None:
        """The layout ``lid`` of :meth:`layouts` (None when it does not apply to this tile)."""
        return next((a for lay, a in self.layouts(name, tile) if lay == lid), None)


_PROBE = 4096


def _smallest(a: np.ndarray) -> np.ndarray:
    """The ``_PROBE`` smallest values of ``a``, sorted (a fingerprint of its data in any layout). A partition, not
    a sort of the whole array: at AdamW's ``[7168, 2048]`` sorting every golden tensor took minutes."""
    flat = np.asarray(a, dtype=np.float64).ravel()
    k = min(flat.size, _PROBE)
    if k < flat.size:
        flat = np.partition(flat, k - 1)[:k]
    return np.sort(flat)


def _ends(a: np.ndarray) -> np.ndarray:
    """(least, greatest) value of ``a`` as float64 (NaN when it holds one), without converting it whole."""
    flat = np.asarray(a).ravel()
    try:
        return np.array([float(flat.min()), float(flat.max())])
    except (TypeError, ValueError):  # a dtype without an ordering numpy knows: no shortcut
        return np.array([np.nan, np.nan])


def _covers(shape: tuple[int, ...], tile: tuple[int, ...]) -> bool:
    return len(shape) == len(tile) and all(t <= n for t, n in zip(tile, shape, strict=True))


def _unsqueeze_like(v: np.ndarray, tile: tuple[int, ...]) -> np.ndarray | None:
    """``v`` (no unit axes) with unit axes where ``tile`` has them (a view)."""
    dims = iter(v.shape)
    shape = []
    for t in tile:
        if t == 1:
            shape.append(1)
        else:
            n = next(dims, None)
            if n is None:
                return None
            shape.append(n)
    if next(dims, None) is not None:
        return None
    return v.reshape(shape)


def _split(core: np.ndarray, tile: tuple[int, ...]) -> np.ndarray | None:
    """``core`` (a golden without unit axes) with axes split to the tile's rank.

    Axes are matched from the innermost out (the tile may be shorter there: a tail, or one tile of many); a group
    of tile axes whose product equals one golden axis replaces it (the tile covers that axis whole). The
    outermost golden axis may also be split with its leading factor inferred (``32`` seen by a ``[1, 8, S]``
    tile, one KV head at a time, is ``[4, 8]``)."""
    t = list(tile)
    g = list(core.shape)
    if len(g) >= len(t):
        return None
    new: list[int] = []
    i, j = len(g) - 1, len(t) - 1
    while i >= 0 and j >= 0:
        if t[j] <= g[i] and (i == 0) == (j == 0):
            new.insert(0, g[i])
            i, j = i - 1, j - 1
            continue
        prod, k = 1, j
        while k >= 0 and prod < g[i]:
            prod *= t[k]
            k -= 1
        if prod == g[i]:
            new[0:0] = t[k + 1: j + 1]
            i, j = i - 1, k
            continue
        if i == 0 and j > 0:  # outermost: split off the inner tile axes, infer the leading factor
            inner = int(np.prod(t[1: j + 1]))
            if inner and g[0] % inner == 0 and t[0] <= g[0] // inner:
                new[0:0] = [g[0] // inner, *t[1: j + 1]]
                i, j = -1, -1
                break
        if t[j] <= g[i] and i > 0:
            new.insert(0, g[i])
            i, j = i - 1, j - 1
            continue
        return None
    if i >= 0:
        return None
    new[0:0] = [1] * (j + 1)
    if int(np.prod(new)) != core.size:
        return None
    return core.reshape(new)


@dataclass
class Summary:
    """How one recorded value compared with the golden when it was produced (the value itself may be gone)."""

    shape: tuple[int, ...]
    """shape of the valid region"""
    nan: bool = False
    inf: bool = False
    """the valid region holds +-inf"""
    hits: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """golden name -> the region (in the coordinates of the layout ``lids`` names) of the first candidate region
    it matches"""
    lids: dict[str, str] = field(default_factory=dict)
    """golden name -> the layout (``Golden.layouts``) of its hit, when not the plain one"""
    exact: frozenset[str] = frozenset()
    """golden tensors of the value's rank it matches at exactly its own tile offsets"""
    at_src: frozenset[str] = frozenset()
    """for a write: golden tensors it matches at the offsets of the value it copies (read/write disagree)"""
    fit: dict[str, tuple[float, float | None]] = field(default_factory=dict)
    """unmatched intermediate -> (|correlation|, constant factor or None) at the first candidate region"""
    vacuous: frozenset[str] = frozenset()
    """golden tensors the value is within tolerance of only because both lie inside ``atol`` (and differ): no
    evidence either way, so neither a hit nor a mismatch (``_compare.vacuous``)"""
    ck: tuple[bool, float | None, int] | None = None
    """for a write into a checkpoint: (all close, max |diff|, NaN count) against the golden at its offsets"""


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
    write_map: dict[str, str] = field(default_factory=dict)
    """kernel tensor written -> golden tensor its writes are compared with (an in-place update: the golden's
    updated values, never its input of the same name)."""
    lids: dict[int, str] = field(default_factory=dict)
    """op seq -> golden layout of its matched / expected region (``Golden.layouts``), when not the plain one."""


def _dname(a: np.ndarray) -> str:
    try:
        return name_of(a.dtype)
    except DTypeError:
        return str(a.dtype)


def candidate_regions(offs: tuple[int, ...], ext: tuple[int, ...], shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Where a tile may sit in a golden tensor: the region its provenance implies first, then nearby ones.

    A view of an intermediate keeps the intermediate's column offsets (``gates[:, H:2H]`` sits at column ``H``
    of the fused projection but at column 0 of the golden ``forget_gate``); a tile copied into a local buffer
    restarts at offset 0. So, per axis: the implied offset, the offset modulo the golden extent, and 0.
    """
    if len(offs) != len(shape) or len(ext) != len(shape):
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
    if g.ndim != len(offs) or len(ext) != len(offs):
        return None
    for o, e, n in zip(offs, ext, g.shape, strict=True):
        if o < 0 or o + e > n:
            return None
    return g[tuple(slice(o, o + e) for o, e in zip(offs, ext, strict=True))]


class Analyzer:
    """One recorded run: fed value by value (``add``), then ``finish``-ed."""

    def __init__(self, golden: Golden, kernel_args: list[dict] | None = None, *,
                 fit_executions: int = 2) -> None:
        self.recs: list[Rec] = []
        self._kids: dict[bool, tuple[int, dict[int, list[Rec]]]] = {}
        self.g = golden
        self.by_seq: dict[int, Rec] = {}
        self.linked = False
        self.arg_shapes: dict[str, tuple[int, ...]] = {}
        if kernel_args:
            if "args" in kernel_args[-1]:  # one entry per jit call: use the last call
                kernel_args = list(kernel_args[-1].get("args") or [])
            self.arg_shapes = {a["name"]: tuple(a.get("shape") or ()) for a in kernel_args if "name" in a}
        self.writes: dict[str, list[Rec]] = {}
        self.status: dict[int, str] = {}
        self.matched: dict[int, tuple[str, tuple[int, ...]]] = {}
        self.offs: dict[int, tuple[int, ...] | None] = {}
        self.conflicts: dict[int, list[int]] = {}
        self.minority: dict[int, list[tuple[int, Rec]]] = {}
        """op seq -> (axis, operand) whose tile offset on that axis disagrees with the other operands' majority"""
        self.expected: dict[int, tuple[str, tuple[int, ...]]] = {}
        """op seq -> the golden tensor and region it was compared with when it mismatched"""
        self.lids: dict[int, str] = {}
        """op seq -> the golden layout (``Golden.layouts``) of its ``matched`` / ``expected`` region, when not plain"""
        self.paired: dict[int, str] = {}
        """node -> golden tensor paired with it by data-flow position (no value matched either)"""
        self.unmapped: list[tuple[Rec, str]] = []
        self.param_map: dict[str, str] = {}
        """kernel tensor -> golden tensor its *reads* stand for (inputs: by value at the call, by name, by views)"""
        self.write_map: dict[str, str] = {}
        """kernel tensor -> golden tensor its *writes* are compared with (outputs; in-place: the updated input)"""
        self.inputs = {n for n, k in golden.kinds.items() if k == "input"}
        self._overwritten: set[int] = set()
        self.source: str | None = None
        self.fit_executions = fit_executions
        self._fitted: dict[int | None, int] = {}
        self.returned: dict[str, str] = {}
        """kernel argument -> the golden output the wrapper returned its final contents as (set before ``finish``)"""
        self.checkpoints: set[str] = set()
        """kernel parameters named like golden intermediates (checkpoint method): writes into them are checked"""
        self._exec: dict[int, tuple[tuple, int]] = {}
        """op seq -> (statement-op key, 1-based execution number within its loop iteration); see ``exec_index``"""
        self._exec_count: dict[tuple, int] = {}
        self._loop_counts: set[int] | None = None
        self.peers: dict[int, list[int]] = {}
        """node -> the nodes of every execution of its statement paired with one golden family (``_claims``)"""

    # ------------------------------------------------------------------------------- feeding

    def begin_call(self, params: list[tuple[str, np.ndarray]]) -> None:
        """A kernel call with these (trusted) argument arrays: kernel inputs are mapped to golden inputs by
        value before any op runs (the wrapper may rename, reshape or pad them)."""
        for name, arr in params:
            self.arg_shapes[name] = tuple(arr.shape)
        for name, arr in params:
            if name in self.param_map:
                continue
            if name in self.g.arrays and self._fits(tuple(arr.shape), self.g.arrays[name].shape):
                self.param_map[name] = name
                continue
            for gname in sorted(self.inputs, key=lambda n: self.g.order[n]):
                if gname in self.param_map.values():
                    continue
                if self._holds(arr, gname):
                    self.param_map[name] = gname
                    break

    def _holds(self, arr: np.ndarray, gname: str) -> bool:
        """The argument holds golden ``gname``'s values: same data in the argument's rank (padding allowed)."""
        g = self.g.shaped(gname, arr.ndim)
        if g is None or not self._fits(tuple(arr.shape), g.shape):
            return False
        part = arr[tuple(slice(0, n) for n in g.shape)]
        return close(part, g, 0.0, 0.0)

    def add(self, r: Rec, value: np.ndarray | None = None) -> None:
        """One executed op, in execution order; ``value`` (the op's output) is summarized now, not kept."""
        self.recs.append(r)
        self.by_seq[r.seq] = r
        if r.inputs:
            self.linked = True
        if r.is_write and r.target:
            self.writes.setdefault(r.target, []).append(r)
        key = (r.file, r.line, r.op, tuple(sorted(r.iteration.items())))
        self._exec_count[key] = self._exec_count.get(key, 0) + 1
        self._exec[r.seq] = (key, self._exec_count[key])
        self.offs[r.seq] = self.region(r)
        if value is None and r.value is not None:
            value = np.asarray(r.value)
        if value is not None and r.summ is None:
            r.summ = self.summarize(r, value)

    def summarize(self, r: Rec, value: np.ndarray) -> Summary:
        box = value
        if r.valid_shape is not None and len(r.valid_shape) == value.ndim:
            box = value[tuple(slice(0, max(0, int(n))) for n in r.valid_shape)]
        s = Summary(shape=tuple(box.shape), nan=any_nan(box), inf=any_inf(box))
        if s.nan and r.shape is not None and len(r.shape) == box.ndim and \
                any(_padded(p) for p in self.operand_recs(r)):
            # computed from a padded tile (a reshape / transpose / reduction of it): the emulator's poison (NaN) fills
            # what was padding; the valid region is what is left without whole-NaN trailing slices
            trimmed = _trim_poison(box)
            if trimmed != tuple(box.shape):
                r.valid_shape = list(trimmed)
                box = box[tuple(slice(0, n) for n in trimmed)]
                s = Summary(shape=tuple(box.shape), nan=any_nan(box), inf=any_inf(box))
        if r.is_write and r.target in self.checkpoints and r.offsets is not None and r.target in self.g.arrays:
            s.ck = tile_check(box, list(r.offsets), self.g.arrays[r.target], self.g.atol, self.g.rtol)
        if box.size == 0 or box.dtype.kind not in "fiub" and "float" not in box.dtype.name:
            return s
        offs = self.offs.get(r.seq)
        atol, rtol = self.g.atol, self.g.rtol
        order_free = r.op in _ORDER_FREE and box.ndim >= 1

        def close(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
            # a top-k's order is its own where the golden asks for none (torch.topk(sorted=False)): the same
            # elements in another order along the last axis are the same value
            return _close(a, b, atol, rtol) or (order_free and a.shape == b.shape
                                                and _close(np.sort(a, axis=-1), np.sort(b, axis=-1), atol, rtol))

        exact = set()
        empty: set[str] = set()
        unmatched = []
        small: list[bool] = []  # whether the whole box lies inside atol (computed once, when first needed)

        def agrees(a: np.ndarray, g: np.ndarray, gname: str) -> bool:
            """``a`` is within tolerance of ``g`` *and* that says something: not both inside atol and unequal
            (``_compare.vacuous``). Both inside atol, only bit-equal values match; a computed value is then
            not compared at all (no evidence either way: AdamW's tiny moments were each compared in full with
            every tiny golden), a write is, since an output element off by more than the tolerance departs."""
            if not small:
                small.append(inside(a, atol))
            if small[0] and self.g.tiny(gname, g):
                if equal(a, g):
                    return True
                if not r.is_write or close(a, g, atol, rtol):
                    empty.add(gname)
                return False
            return close(a, g, atol, rtol)

        for gname in self.g.arrays:
            if self.g.align and not self.g.aligned(gname, r):
                continue  # another iteration's member of a family: never compared with this value
            hit = None
            first: tuple[str, np.ndarray, tuple[int, ...]] | None = None
            for lid, garr in self.g.layouts(gname, tuple(box.shape)):
                if offs is None:
                    regions = [(0,) * box.ndim] if garr.shape == box.shape else []
                else:
                    regions = candidate_regions(tuple(offs), box.shape, garr.shape)
                if regions and first is None:
                    first = (lid, garr, regions[0])
                for reg in regions:
                    sl = region_slice(garr, reg, box.shape)
                    if sl is not None and agrees(box, sl, gname):
                        hit = reg
                        if lid:
                            s.lids[gname] = lid
                        break
                if hit is not None:
                    break
            if hit is not None:
                s.hits[gname] = hit
                if offs is not None and tuple(hit) == tuple(offs) and gname not in s.lids:
                    exact.add(gname)
            elif offs is not None and self.g.arrays[gname].ndim == box.ndim:
                sl = region_slice(self.g.arrays[gname], tuple(offs), box.shape)
                if sl is not None and agrees(box, sl, gname):
                    exact.add(gname)
            if hit is None and first is not None and self.g.kinds[gname] == "intermediate":
                unmatched.append((gname, first[1], first[2]))
        s.exact = frozenset(exact)
        s.vacuous = frozenset(empty - set(s.hits) - exact)
        if r.is_write:
            src = self.operand_recs(r)
            lin = self.offs.get(src[0].seq) if src else None
            if lin is not None and r.offsets is not None and tuple(lin) != tuple(r.offsets):
                s.at_src = frozenset(
                    g for g, a in self.g.arrays.items()
                    if a.ndim == box.ndim and self.g.aligned(g, r) and (sl := region_slice(a, tuple(lin), box.shape)) is not None
                    and agrees(box, sl, g))
        n = self._fitted.get(r.node, 0)
        if unmatched and not r.is_write and n < self.fit_executions and box.size > 2:
            self._fitted[r.node] = n + 1
            for gname, garr, reg in unmatched:
                sl = region_slice(garr, reg, box.shape)
                if sl is not None:
                    s.fit[gname] = fit(box, sl)
        return s

    # ------------------------------------------------------------------------------- kernel arguments

    @staticmethod
    def _fits(arg: tuple[int, ...], golden: tuple[int, ...]) -> bool:
        """A kernel argument holds a golden tensor: same shape, or padded to whole tiles on some axes."""
        return len(arg) == len(golden) and all(a >= n for a, n in zip(arg, golden, strict=True))

    def map_params(self) -> None:
        """Kernel tensor names -> golden names: by name, by view contents (inputs), by writes (outputs)."""
        names = set(self.arg_shapes) | {r.source for r in self.recs if r.source} | set(self.writes)
        for n in sorted(names):
            if n in self.param_map:
                continue
            if n in self.g.arrays and (n not in self.arg_shapes or self._fits(self.arg_shapes[n], self.g.arrays[n].shape)):
                self.param_map[n] = n
        votes: dict[str, dict[str, int]] = {}
        for r in self.recs:
            if r.op != "view" or not r.source or r.source in self.param_map or r.offsets is None or r.summ is None:
                continue
            for gname in self.inputs & r.summ.exact:
                votes.setdefault(r.source, {}).setdefault(gname, 0)
                votes[r.source][gname] += 1
        for src, v in sorted(votes.items()):
            self.param_map[src] = max(sorted(v), key=lambda k: v[k])
        for tgt in self.writes:
            out = self.returned.get(tgt)
            if out is not None and out in self.g.arrays and self.g.kinds.get(out) == "output":
                self.write_map[tgt] = out  # the wrapper returns what it holds: compared with that output
                self.param_map.setdefault(tgt, out)
                continue
            g = self.param_map.get(tgt)
            if g is not None and g not in self.inputs:
                self.write_map[tgt] = g
            elif g is not None and g + UPDATED in self.g.arrays:
                self.write_map[tgt] = g + UPDATED  # written in place: compared with the golden's update
        taken = set(self.param_map.values()) | set(self.write_map.values())
        scored: list[tuple[float, str, str]] = []
        for tgt in sorted(self.writes):
            if tgt in self.write_map or (self.arg_shapes and tgt not in self.arg_shapes):
                continue
            for gname, garr in self.g.arrays.items():
                if gname in self.inputs or gname in taken:
                    continue
                shp = self.arg_shapes.get(tgt)
                if shp:
                    # the golden in the argument's rank: a wrapper that reshapes the output on the host (a kernel
                    # ``out`` [32, 256] returned as ``[1, 1, 32, 256]``) writes the same data without the unit axes
                    g_in = self.g.shaped(gname, len(shp))
                    if g_in is None or any(a < n for a, n in zip(shp, g_in.shape, strict=True)):
                        continue  # (an argument larger than the golden is an output padded to whole tiles)
                    garr = g_in
                ws = self.writes[tgt]
                fits = ok = 0
                for w in ws:
                    bs = w.bshape
                    if bs is None or w.offsets is None or w.summ is None:
                        continue
                    if region_slice(garr, tuple(w.offsets), bs) is None:
                        continue
                    fits += 1
                    ok += gname in w.summ.exact and tuple(self.offs.get(w.seq) or ()) == tuple(w.offsets)
                if fits == 0:
                    continue
                # evidence first (tiles that match), then outputs over intermediates, then a shared name prefix
                # (`p_out` -> `p_new`), so a wrong output tile does not steal another output's golden
                prefix = len(os.path.commonprefix([tgt, gname]))
                score = ok / len(ws) + (0.5 if self.g.kinds[gname] == "output" else 0.0) + 0.01 * min(prefix, 9)
                scored.append((score, tgt, gname))
        for _score, tgt, gname in sorted(scored, key=lambda t: (-t[0], t[1], t[2])):
            if tgt not in self.write_map and gname not in taken:
                self.write_map[tgt] = gname
                if tgt not in self.param_map:
                    self.param_map[tgt] = gname
                taken.add(gname)

    def target_golden(self, r: Rec) -> str | None:
        """The golden tensor a write into ``r.target`` is compared with (None: not mapped)."""
        if not r.target:
            return None
        return self.write_map.get(r.target) or (None if self.param_map.get(r.target) in self.inputs
                                                 else self.param_map.get(r.target))

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
            wshape = tuple(w.shape) if w.shape is not None else tuple(shp or ())
            if src and (w.offsets is None or not any(w.offsets)):
                return wshape, self.offs.get(src[0].seq)
            return wshape, None
        return tuple(shp or ()), None

    def region(self, r: Rec) -> tuple[int, ...] | None:
        nd = len(r.shape) if r.shape else 0
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
                if p is not None and p.shape:
                    shapes.append((tuple(p.shape), self.offs.get(p.seq)))
                    owners.append(p)
            elif ref.get("kind") == "tensor":
                shapes.append(self._tensor_operand(str(ref.get("name")), r.seq))
                owners.append(None)
        if r.shape is None:
            return None
        oshape = tuple(r.shape)
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
            # a reshape of a value at the origin stays at the origin (``reshape(q, [Nkv, G, D])`` of a whole
            # kernel argument); elsewhere its place in the new shape is not known
            if shapes and shapes[0][1] is not None and not any(shapes[0][1]):
                return (0,) * len(oshape)
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

    def match_region(self, r: Rec, gname: str) -> tuple[int, ...] | None:
        """The region of golden ``gname`` (in its layout's coordinates, ``lid``) that ``r``'s value equals."""
        return r.summ.hits.get(gname) if r.summ is not None else None

    def lid(self, r: Rec, gname: str) -> str:
        """The golden layout ``r``'s value was matched in (``""``: the plain one)."""
        return r.summ.lids.get(gname, "") if r.summ is not None else ""

    def first_region(self, r: Rec, gname: str) -> tuple[str, tuple[int, ...]] | None:
        """The layout and region ``r``'s tile would take in golden ``gname`` (what a mismatch is compared with)."""
        bs = r.bshape
        offs = self.offs.get(r.seq)
        if bs is None or offs is None:
            return None
        for lid, garr in self.g.layouts(gname, bs):
            regs = candidate_regions(tuple(offs), bs, garr.shape)
            if regs:
                return lid, regs[0]
        return None

    def _operand_order(self, r: Rec, lowest: bool = False) -> int:
        """The golden data-flow position of ``r``'s matched operands: the latest (``lowest``: the earliest), -1 when
        none matches."""
        orders = [self.g.order[m[0]] for p in self.operand_recs(r) if (m := self.matched.get(p.seq)) is not None]
        for ref in r.inputs or []:
            if ref.get("kind") == "tensor":
                gname = self.param_map.get(str(ref.get("name")))
                if gname in self.inputs:
                    orders.append(self.g.order[gname])
        if not orders:
            return -1
        return min(orders) if lowest else max(orders)

    def exec_index(self, r: Rec) -> tuple[int, int]:
        """(j, n): ``r`` is the j-th (1-based) of the n executions of its statement's op (same file, line and op)
        within one iteration of the kernel's traced loops - a Python loop the trace unrolls (Sinkhorn's
        ``for _ in range(num_iters - 1)``) runs one line n times with the same loop iteration."""
        e = self._exec.get(r.seq)
        if e is None:
            return 1, 1
        return e[1], self._exec_count[e[0]]

    def aligned(self, r: Rec, gname: str) -> bool:
        """Iteration-aligned matching: the j-th of n executions of a kernel loop line may stand for the k-th value
        of a golden family of n values (one golden loop statement) only when k == j. A loop that converges
        (Sinkhorn) makes every late iteration's golden equal the next within tolerance, and a kernel that converges
        to a *wrong* fixed point equals a golden of another iteration (or of the sibling statement: late row sums
        and column sums are all ~1): without the alignment the first iterations, where the values still differ
        clearly, never depart. A kernel line run once, or a family of another count, is not constrained."""
        it = self.g.align.get(gname)
        if it is None or it.loop is not None:
            return self.g.aligned(gname, r)
        if it.count <= 1:
            return True
        j, n = self.exec_index(r)
        return n != it.count or j == it.k

    def family(self, gname: str) -> Aligned | None:
        """The family of a golden computed by a statement of a golden loop the kernel unrolls (None otherwise)."""
        a = self.g.align.get(gname)
        return a if a is not None and a.loop is None else None

    def family_members(self, family: str, count: int) -> dict[int, str]:
        """k -> golden name of every value of ``family``."""
        return {a.k: n for n, a in self.g.align.items() if a.loop is None and a.family == family and a.count == count}

    def same_statement_op(self, r: Rec) -> list[Rec]:
        """Every execution of ``r``'s statement op in ``r``'s loop iteration (see :meth:`exec_index`), in order."""
        e = self._exec.get(r.seq)
        if e is None:
            return [r]
        return [x for x in self.recs if self._exec.get(x.seq, (None,))[0] == e[0]]

    def loop_reductions(self) -> list[Rec]:
        """Reductions of a statement a Python loop unrolls as many times as a golden loop runs its statements
        (:meth:`aligned`), that match nothing. With a converging loop the first departing value is not downstream
        of them any more (a wrong-axis column sum of a row-normalized matrix is ~1, and the loop just stops
        moving), so the wrong-axis rule looks at them besides the window."""
        counts = {a.count for a in self.g.align.values() if a.loop is None and a.count > 1}
        if not counts:
            return []
        return [r for r in self.recs if r.op in _REDUCE and self.status.get(r.seq) == "unknown"
                and self.exec_index(r)[1] in counts]

    def _in_golden_loop(self, r: Rec) -> bool:
        """``r``'s statement runs as many times per loop iteration as a golden loop statement (:meth:`aligned`)."""
        if self._loop_counts is None:
            self._loop_counts = {a.count for a in self.g.align.values() if a.loop is None and a.count > 1}
        if not self._loop_counts:
            return False
        return self.exec_index(r)[1] in self._loop_counts

    def _ancestor_order(self, r: Rec, limit: int = 64) -> int:
        """The latest golden data-flow position among the values ``r`` is computed from, looking through operands
        that match nothing. Inside a loop that mirrors a golden loop, a value computed from the iteration-j values
        cannot be a golden of before the loop: a Sinkhorn step that divides by the wrong sums oscillates back to the
        value the golden had before its loop (``golden.py:33 div``), which is a coincidence, not a match."""
        best, stack, seen = -1, list(self.operand_recs(r)), set()
        while stack and len(seen) < limit:
            p = stack.pop()
            if p.seq in seen:
                continue
            seen.add(p.seq)
            m = self.matched.get(p.seq)
            if m is not None and self.status.get(p.seq) in GOOD:
                best = max(best, self.g.order[m[0]])
                continue
            stack.extend(self.operand_recs(p))
        return best

    def _align(self) -> None:
        """Drop the golden hits :meth:`aligned` refuses from every summary (before anything reads them)."""
        if not any(a.loop is None for a in self.g.align.values()):
            return
        for r in self.recs:
            s = r.summ
            if s is None or not s.hits and not s.exact:
                continue
            j, n = self.exec_index(r)
            if n <= 1:
                continue
            bad = {g for g in (*s.hits, *s.exact) if not self.aligned(r, g)}
            if bad:
                s.hits = {g: v for g, v in s.hits.items() if g not in bad}
                s.lids = {g: v for g, v in s.lids.items() if g not in bad}
                s.exact = s.exact - bad

    def _inner_golden(self, r: Rec) -> str | None:
        """The golden that ``r``'s one operand matched when that operand is an op of the same statement (same
        line and loop iteration) and ``r`` is the value the statement binds: ``comb_flag / row_sum + eps`` is the
        kernel's formula for the golden's ``h / (row_sum + eps)``, and the value bound equals the golden the inner
        ``div`` matched. A computed value may not match the golden its operand matched (``acc = acc + 0``, two
        statements, is no evidence of being right), but within one statement the formula as a whole stands for
        it. None otherwise."""
        if r.name is None or r.is_write or any(ref.get("kind") == "tensor" for ref in r.inputs or []):
            return None
        ops = self.operand_recs(r)
        if len(ops) != 1 or ops[0].line != r.line or ops[0].iteration != r.iteration or ops[0].file != r.file:
            return None
        m = self.matched.get(ops[0].seq)
        return m[0] if m is not None and self.status.get(ops[0].seq) == "match" else None

    def finish(self) -> None:
        """All values are in: map kernel arguments to golden tensors and classify every value."""
        self._align()
        self.map_params()
        self.classify()

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
            self.status[r.seq] = self._classify(r)

    def _classify(self, r: Rec) -> str:
        s = r.summ
        if r.op in CONST and not (r.inputs or []):
            return "const"
        if s is None:
            self.unmapped.append((r, "no value recorded"))
            return "unknown"
        offs = self.offs.get(r.seq)
        if r.op == "view" and r.source and self.param_map.get(r.source) in self.inputs:
            self.matched[r.seq] = (self.param_map[r.source], tuple(r.offsets or ()))
            return "input"
        if r.is_write and r.target:
            gname = self.target_golden(r)
            if gname is not None and r.seq not in self._overwritten and offs is not None:
                if gname in s.exact:
                    self.matched[r.seq] = (gname, offs)
                    return "match"
                if gname in s.vacuous and not s.nan:
                    return "unknown"  # inside atol like its golden: no evidence either way
                return "nan" if s.nan else "mismatch"
            srcs = self.operand_recs(r)
            if srcs and self.status.get(srcs[0].seq) in GOOD and srcs[0].seq in self.matched:
                self.matched[r.seq] = self.matched[srcs[0].seq]
                return self.status[srcs[0].seq]
        if s.nan and not any(_padded(p) for p in self.operand_recs(r)):
            return "nan"  # (NaN next to a padded operand may be its poison carried along: no evidence)
        floor = -1 if r.op in _TRANSPARENT else self._operand_order(r)
        if r.op not in _TRANSPARENT and self._in_golden_loop(r):
            floor = max(floor, self._ancestor_order(r))
        strict = r.op not in _TRANSPARENT
        derived_ok = all(self.status.get(p.seq) in GOOD for p in self.operand_recs(r))
        dt = str(r.dtype or "")
        cands = sorted(s.hits, key=lambda n: (n != r.name, _dname(self.g.arrays[n]) != dt, self.g.order[n]))
        inner = self._inner_golden(r)
        for gname in cands:
            o = self.g.order[gname]
            if gname != r.name and (o < floor or (strict and o == floor and gname != inner)):
                continue
            if (strict or not derived_ok) and (self.g.kinds[gname] == "input" or self.g.is_input_copy(gname)):
                # a computed value equal to an input (``states + 1e-6 * z4``, or a view of it) is no evidence
                continue
            self.matched[r.seq] = (gname, s.hits[gname])
            if gname in s.lids:
                self.lids[r.seq] = s.lids[gname]
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

    def kids(self, *, through_tensors: bool = False) -> dict[int, list[Rec]]:
        """Record seq -> the records reading it, in record order: the inverse of :meth:`operand_recs` (the values an
        op takes directly), or with ``through_tensors`` of :meth:`parents` (also the writes into a local tensor that
        a read of it sees). Shared, do not mutate.

        Why (s49): the same plain map was built in four places (claims, the pairing test, the running-state guard),
        each walking every record again; it is built once per kind here, and again only if records were added."""
        n = len(self.recs)
        cached = self._kids.get(through_tensors)
        if cached is not None and cached[0] == n:
            return cached[1]
        kids: dict[int, list[Rec]] = {}
        for r in self.recs:
            for p in (self.parents(r) if through_tensors else self.operand_recs(r)):
                kids.setdefault(p.seq, []).append(r)
        self._kids[through_tensors] = (n, kids)
        return kids

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
        """The op where NaN first appears from operands without NaN - or, when those operands hold inf, the op
        where that inf first appears from finite operands (`inf_origin`)."""
        for r in window:
            if r.summ is None or not r.summ.nan:
                continue
            ops = self.operand_recs(r)
            if any(_padded(p) for p in ops):
                continue  # the poison in an operand's padding (outside its valid shape) may be what it carried in
            if not any(p.summ is not None and p.summ.nan for p in ops):
                return self.inf_origin(r) or r
        return None

    def inf_origin(self, r: Rec) -> Rec | None:
        """Walking back from ``r`` (NaN from inf operands: ``inf / inf``, ``inf - inf``), the first op whose value
        holds inf although every recorded operand it reads is finite (fifth gym corpus, s25: ``exp`` of a logit
        without the running max subtracted overflowed at line 134; NaN appeared at the ``div`` of line 160, which
        bisect named). None when no such op has operands (an inf constant, a mask fill: the inf is meant)."""
        frontier = [p for p in self.operand_recs(r) if p.summ is not None and p.summ.inf]
        seen: set[int] = set()
        found: Rec | None = None
        while frontier and len(seen) < 2000:
            p = frontier.pop()
            if p.seq in seen:
                continue
            seen.add(p.seq)
            ops = self.operand_recs(p)
            bad = [q for q in ops if q.summ is not None and (q.summ.inf or q.summ.nan)]
            if bad:
                frontier.extend(bad)
            elif ops and not any(_padded(q) for q in ops) and (found is None or p.seq < found.seq):
                found = p
        return found


_ORDER_FREE = frozenset({"topk"})
"""ops whose result order along the last axis may legitimately differ from the golden's"""


def _trim_poison(a: np.ndarray) -> tuple[int, ...]:
    """``a``'s shape without trailing index ranges, per axis, that hold only NaN."""
    m = np.isnan(np.asarray(a, dtype=np.float32)) if a.dtype.kind not in "iub" else np.zeros(a.shape, bool)
    out = []
    for ax in range(a.ndim):
        full = m.all(axis=tuple(i for i in range(a.ndim) if i != ax)) if a.ndim > 1 else m
        keep = np.nonzero(~full)[0]
        out.append(int(keep[-1]) + 1 if keep.size else 0)
    return tuple(out)


def _padded(r: Rec) -> bool:
    """``r``'s tile has a region outside its valid shape (poison or stale data, not compared)."""
    if r.valid_shape is None or r.shape is None or len(r.valid_shape) != len(r.shape):
        return False
    return any(int(v) < int(n) for v, n in zip(r.valid_shape, r.shape, strict=True))
