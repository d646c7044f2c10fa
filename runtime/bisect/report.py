"""The bisection report: pydantic, deterministic, sanitized like verify reports.

Sanitized means: statistics and short outlier listings only, never a full golden tensor. The report holds
kernel source lines (the candidate's own code, which the debugger already sees) but no golden.py text.
``to_agent_context()`` is what the debugger agent receives as ``DebugContext.bisect``.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from runtime.agent_view import coarse, coarse_share, coarse_tree

__all__ = [
    "REPORT_VERSION",
    "BisectReport",
    "CheckpointResult",
    "IterationResult",
    "OpFinding",
    "Outlier",
    "OutputResult",
    "Stats",
    "Suspect",
    "UnmappedOp",
    "stats_of",
]

REPORT_VERSION = 1
MAX_OUTLIERS = 5


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Outlier(_Model):
    index: list[int]
    actual: float | None
    expected: float | None
    abs_diff: float | None
    rel_diff: float | None


class Stats(_Model):
    """Comparison statistics of one value against its golden counterpart (no full tensors)."""

    elements: int
    out_of_tolerance: int
    ratio: float
    max_abs_diff: float | None
    mean_abs_diff: float | None
    nan_count: int = 0
    """NaN in the candidate value (poison: uninitialized memory or padding outside valid_shape)."""
    atol: float
    rtol: float
    outliers: list[Outlier] = Field(default_factory=list)


def _f(x: Any) -> float | None:
    v = float(x)
    return None if math.isnan(v) or math.isinf(v) else round(v, 9)


def stats_of(actual: np.ndarray, expected: np.ndarray, atol: float, rtol: float,
             offset: list[int] | None = None) -> Stats:
    """Stats of ``actual`` vs ``expected`` (same shape); outlier indices shifted by ``offset``.

    Arrays above ``_compare.CHUNK`` elements are walked block by block (memory stays a few blocks, whatever
    their size); the counts, maximum and outliers are the same as for the whole array."""
    from runtime.bisect._compare import CHUNK, blocks

    a0, b0 = np.asarray(actual), np.asarray(expected)
    if a0.size <= CHUNK:
        return _stats_whole(a0, b0, atol, rtol, offset)
    n_bad = nan = n_fin = 0
    total = 0.0
    mx: float | None = None
    cand: list[tuple[float, int, float, float]] = []  # (-key, flat index, actual, expected)
    strides = np.array([int(np.prod(a0.shape[k + 1:])) for k in range(a0.ndim)], dtype=np.int64)
    for ix in blocks(a0.shape):
        a = np.asarray(a0[ix], dtype=np.float64)
        b = np.asarray(b0[ix], dtype=np.float64)
        with np.errstate(all="ignore"):
            diff = np.abs(a - b)
            ok = np.isfinite(a) & np.isfinite(b) & (diff <= atol + rtol * np.abs(b))
            ok |= np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
        bad = ~ok
        n_bad += int(bad.sum())
        nan += int(np.isnan(a).sum())
        fin = diff[np.isfinite(diff)]
        if fin.size:
            n_fin += fin.size
            total += float(fin.sum())
            mx = float(fin.max()) if mx is None else max(mx, float(fin.max()))
        if bad.any():
            lead = [int(s) for s in ix if not isinstance(s, slice)]  # axes the block index fixes
            first = next((s.start or 0 for s in ix if isinstance(s, slice)), 0)
            flat = np.flatnonzero(bad.ravel())
            key = np.where(np.isfinite(diff.ravel()[flat]), diff.ravel()[flat], np.inf)
            top = _top(key, MAX_OUTLIERS)
            for t in top:
                p = int(flat[t])
                local = [int(i) for i in np.unravel_index(p, a.shape)]
                coords = np.array([*lead, first + local[0], *local[1:]], dtype=np.int64)
                glob = int((coords * strides).sum())
                cand.append((-float(key[t]), glob, float(a.ravel()[p]), float(b.ravel()[p])))
    cand.sort()
    off = offset or [0] * a0.ndim
    outliers: list[Outlier] = []
    for _k, glob, av, bv in cand[:MAX_OUTLIERS]:
        idx = [int(i) + int(o) for i, o in zip(np.unravel_index(glob, a0.shape), off, strict=True)]
        d = abs(av - bv)
        outliers.append(Outlier(index=idx, actual=_f(av), expected=_f(bv), abs_diff=_f(d),
                                rel_diff=_f(d / (abs(bv) + 1e-12)) if np.isfinite(d) else None))
    return Stats(
        elements=int(a0.size), out_of_tolerance=n_bad, ratio=round(n_bad / a0.size, 9) if a0.size else 0.0,
        max_abs_diff=_f(mx) if mx is not None else None,
        mean_abs_diff=_f(total / n_fin) if n_fin else None,
        nan_count=nan, atol=atol, rtol=rtol, outliers=outliers,
    )


def _top(key: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest ``key`` values, largest first, ties in index order: what
    ``np.argsort(-key, kind="stable")[:k]`` gives, without sorting every departing element (AdamW's 14M)."""
    if key.size <= 4 * k:
        return np.argsort(-key, kind="stable")[:k]
    kth = np.partition(key, key.size - k)[key.size - k]  # the k-th largest value
    sel = np.flatnonzero(key >= kth)  # (every tie of it too, in index order)
    return sel[np.argsort(-key[sel], kind="stable")[:k]]


def _stats_whole(actual: np.ndarray, expected: np.ndarray, atol: float, rtol: float,
                 offset: list[int] | None = None) -> Stats:
    a = np.asarray(actual, dtype=np.float64)
    b = np.asarray(expected, dtype=np.float64)
    with np.errstate(all="ignore"):
        diff = np.abs(a - b)
        ok = np.isfinite(a) & np.isfinite(b) & (diff <= atol + rtol * np.abs(b))
        ok |= np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    bad = ~ok
    n_bad = int(bad.sum())
    finite = diff[np.isfinite(diff)]
    outliers: list[Outlier] = []
    if n_bad:
        flat = np.flatnonzero(bad.ravel())
        key = np.where(np.isfinite(diff.ravel()[flat]), diff.ravel()[flat], np.inf)
        top = _top(key, MAX_OUTLIERS)  # (ties in index order, as the blockwise walk picks them)
        pick = flat[top]
        off = offset or [0] * a.ndim
        for p in pick:
            idx = [int(i) + int(o) for i, o in zip(np.unravel_index(p, a.shape), off, strict=True)] if a.ndim else []
            av, bv = a.ravel()[p], b.ravel()[p]
            d = abs(av - bv)
            outliers.append(Outlier(index=idx, actual=_f(av), expected=_f(bv), abs_diff=_f(d),
                                    rel_diff=_f(d / (abs(bv) + 1e-12)) if np.isfinite(d) else None))
    return Stats(
        elements=int(a.size), out_of_tolerance=n_bad, ratio=round(n_bad / a.size, 9) if a.size else 0.0,
        max_abs_diff=_f(finite.max()) if finite.size else None,
        mean_abs_diff=_f(finite.mean()) if finite.size else None,
        nan_count=int(np.isnan(a).sum()), atol=atol, rtol=rtol, outliers=outliers,
    )


class OpFinding(_Model):
    """One executed op (one traced op in one loop iteration) and how it compares to the golden."""

    file: str | None
    line: int | None
    code: str = ""
    """The kernel source line (stripped)."""
    op: str
    name: str | None = None
    iteration: dict[str, int] = Field(default_factory=dict)
    offsets: list[int] | None = None
    """Tile offsets: of the view window / the write, or inferred from the data flow (see ``golden_region``)."""
    valid_shape: list[int] | None = None
    status: str
    """match | mismatch | nan | unknown | const | input."""
    golden: str | None = None
    """The golden tensor this value was compared with (by name, write target or shape and position)."""
    golden_region: list[int] | None = None
    stats: Stats | None = None
    call_site: int | None = None
    """For an op recorded inside a plain helper function: the kernel line that called the helper (in this
    iteration), so two passes sharing the helper's code text are told apart."""


class Suspect(_Model):
    """A line that may hold the bug when none can be shown to (ranked by the evidence, 1 = first)."""

    rank: int
    line: int | None
    code: str = ""
    op: str
    iteration: dict[str, int] = Field(default_factory=dict)
    call_site: int | None = None
    status: str = "unknown"
    reason: str


class UnmappedOp(_Model):
    line: int | None
    op: str
    reason: str


class IterationResult(_Model):
    iteration: dict[str, int]
    offsets: list[int] | None
    all_close: bool
    max_abs_diff: float | None
    nan_count: int = 0


class CheckpointResult(_Model):
    name: str
    status: Literal["match", "mismatch", "not_written", "shape_mismatch"]
    stats: Stats | None = None
    not_written: int = 0
    """Elements still holding the poison the tool filled in (the kernel never wrote them)."""
    per_iteration: list[IterationResult] = Field(default_factory=list)
    drift_onset: dict[str, int] | None = None
    first_bad_index: list[int] | None = None


class OutputResult(_Model):
    name: str
    all_close: bool
    stats: Stats | None = None
    never_written: int | None = None


Status = Literal["DIVERGENCE_FOUND", "NO_DIVERGENCE", "RUNTIME_ERROR", "NOT_LOCALIZED", "ERROR"]


class BisectReport(_Model):
    """Where the candidate first departs from the golden, for one case.

    Example::

        report = bisect("workspace/rms_norm", "rms_norm_impl.py")
        report.status                    # "DIVERGENCE_FOUND"
        report.first_divergence.line     # kernel line of the culprit op
        report.to_agent_context()        # dict for the debugger agent
    """

    version: int = REPORT_VERSION
    op_name: str
    stage_file: str
    case: str
    method: Literal["auto", "checkpoint", "auto+checkpoint"]
    status: Status
    summary: str
    first_divergence: OpFinding | None = None
    """The op the tool names as the first divergence (the culprit)."""
    observed_at: OpFinding | None = None
    """The first op whose value departs from a golden tensor (equals the culprit unless noted)."""
    candidates: list[OpFinding] = Field(default_factory=list)
    """Ops between the last value that matched the golden and ``observed_at`` (no golden counterpart)."""
    suspects: list[Suspect] = Field(default_factory=list)
    """When no culprit can be shown: the lines that may hold the bug, ranked by the evidence, with reasons."""
    case_reason: str = ""
    """Why this case was chosen (failing, without tail or padding, smallest first)."""
    evidence: list[str] = Field(default_factory=list)
    """Why the culprit was chosen (geometry, NaN origin, coverage, window), in plain words."""
    outputs: list[OutputResult] = Field(default_factory=list)
    checkpoints: list[CheckpointResult] = Field(default_factory=list)
    first_checkpoint: str | None = None
    """First diverging checkpoint in data-flow order (checkpoint method)."""
    unmapped: list[UnmappedOp] = Field(default_factory=list)
    runtime_error: dict[str, Any] | None = None
    records: int = 0
    recording: bool = False
    emulator: str = ""
    isolation: list[str] = Field(default_factory=list)
    duration_s: float = Field(default=0.0, exclude=True)
    """Wall time (excluded from JSON and hash: reports are deterministic)."""

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=1)

    @property
    def report_hash(self) -> str:
        canon = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()

    def to_agent_context(self) -> dict[str, Any]:
        """Compact dict for ``DebugContext.bisect``: culprit, evidence, window, failing outputs.

        Agent-visible, so every measurement goes through :mod:`runtime.agent_view` (``coarse``,
        ``coarse_share``): a model request must be identical on every machine (ARCHITECTURE §0.2).
        """

        def op(f: OpFinding | None) -> dict[str, Any] | None:
            if f is None:
                return None
            d: dict[str, Any] = {"line": f.line, "code": f.code, "op": f.op, "iteration": f.iteration,
                                 "offsets": f.offsets, "status": f.status}
            if f.call_site is not None:
                d["call_site"] = f.call_site
            if f.valid_shape is not None:
                d["valid_shape"] = f.valid_shape
            if f.golden:
                d["golden"] = f.golden
            if f.stats is not None and f.status != "match":  # a match carries no numbers (they are noise)
                # agent-visible: coarse (runtime.agent_view), so CPU last-bit differences cannot move it
                d["max_abs_diff"] = coarse(_num(f.stats.max_abs_diff))
                d["out_of_tolerance"] = coarse_share(f.stats.out_of_tolerance / max(1, f.stats.elements))
                d["nan_count"] = f.stats.nan_count
                d["outliers"] = coarse_tree([o.model_dump() for o in f.stats.outliers[:3]])
            return d

        return {
            "tool": "runtime.bisect",
            "case": self.case,
            "method": self.method,
            "status": self.status,
            "summary": self.summary,
            "first_divergence": op(self.first_divergence),
            "observed_at": op(self.observed_at),
            "case_reason": self.case_reason,
            "suspects": [{"rank": x.rank, "line": x.line, "code": x.code, "reason": x.reason}
                         | ({"call_site": x.call_site} if x.call_site is not None else {}) for x in self.suspects],
            "candidate_lines": sorted({c.line for c in self.candidates if c.line is not None}),
            "evidence": self.evidence,
            "failing_outputs": [o.name for o in self.outputs if not o.all_close],
            "first_checkpoint": self.first_checkpoint,
            "checkpoints": [{"name": c.name, "status": c.status, "drift_onset": c.drift_onset,
                             "max_abs_diff": coarse(_num(c.stats.max_abs_diff))
                             if c.stats and c.status != "match" else None,
                             "not_written": c.not_written} for c in self.checkpoints],
            "unmapped": [u.model_dump() for u in self.unmapped[:10]],
            "runtime_error": self.runtime_error,
        }


def _num(value: Any) -> Any:
    """A statistic as float for :func:`coarse` (None, e.g. when nothing was comparable, stays None)."""
    return float(value) if isinstance(value, int | float) else value
