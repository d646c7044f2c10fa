"""One normalized view of the emulator's op records, whatever fields the emulator version provides.

Why: bisection must work with the records the emulator has today and get better as it adds fields
(the fields of ``runtime.emulator.OpRecord``, the one definition of a record). Everything downstream reads :class:`Rec`; only this module knows the raw shape.
Records cross the sandbox boundary as JSON (values base64-encoded), see :func:`encode_record`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runtime.arrays import decode_array, encode_array  # the one array format (JSON form)
from runtime.dtypes import DTypeError, canonical_name

__all__ = ["WRITE_OPS", "Rec", "decode_array", "decode_records", "encode_array", "encode_record"]

WRITE_OPS = frozenset({"assemble", "move", "setitem", "write"})
"""Ops that write into a kernel argument or local tensor (``target`` names it)."""


@dataclass
class Rec:
    """One executed op (one traced op in one loop iteration)."""

    seq: int
    node: int | None
    op: str
    file: str | None
    line: int | None
    iteration: dict[str, int]
    name: str | None = None
    value: np.ndarray | None = None
    dtype: str | None = None
    offsets: list[int] | None = None
    shape: list[int] | None = None
    valid_shape: list[int] | None = None
    source: str | None = None
    target: str | None = None
    inputs: list[dict] | None = None
    """None when the emulator gives no data-flow links (then only program order is known)."""
    attrs: dict = field(default_factory=dict)
    summ: Any = None
    """``_analyzer.Summary``: how the value compared with the golden when it was produced (streamed runs keep
    this instead of the value)."""

    @property
    def is_write(self) -> bool:
        return self.op in WRITE_OPS or (self.target is not None and self.op not in ("view",))

    @property
    def bshape(self) -> tuple[int, ...] | None:
        """Shape of the valid region (the part that is data), from the value or the recorded geometry."""
        if self.value is not None:
            b = self.box()
            return tuple(b.shape) if b is not None else None
        if self.shape is None:
            return None
        if self.valid_shape is None or len(self.valid_shape) != len(self.shape):
            return tuple(int(n) for n in self.shape)
        return tuple(max(0, min(int(v), int(n))) for v, n in zip(self.valid_shape, self.shape, strict=True))

    @property
    def has_value(self) -> bool:
        """A value was recorded (kept, or summarized when it was produced)."""
        return self.value is not None or self.summ is not None

    def box(self) -> np.ndarray | None:
        """The valid region of the value (the part that is data), or None."""
        if self.value is None:
            return None
        v = np.asarray(self.value)
        if self.valid_shape is None or len(self.valid_shape) != v.ndim:
            return v
        return v[tuple(slice(0, max(0, int(n))) for n in self.valid_shape)]

    def where(self) -> str:
        it = ", ".join(f"{k}={v}" for k, v in self.iteration.items())
        return f"line {self.line} ({self.op}{', ' + it if it else ''})"


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _ints(v: Any) -> list[int] | None:
    if v is None:
        return None
    try:
        return [int(x) for x in v]
    except (TypeError, ValueError):
        return None


def _dtype(v: Any) -> str | None:
    if v is None:
        return None
    try:
        return canonical_name(str(v))
    except DTypeError:
        return str(v)


def encode_record(raw: Any, index: int) -> dict:
    """Serialize one emulator record (pydantic model, dataclass or dict) for the trip out of the sandbox."""
    it = _get(raw, "iteration") or {}
    if not isinstance(it, dict):
        it = {f"loop_{i}": int(v) for i, v in enumerate(it)}
    inputs = _get(raw, "inputs")
    attrs = _get(raw, "attrs") or {}
    seq = _get(raw, "seq")
    return {
        "seq": int(seq) if seq is not None else index,
        "node": _get(raw, "node"),
        "op": str(_get(raw, "op", "?")),
        "file": _get(raw, "file"),
        "line": _get(raw, "line"),
        "iteration": {str(k): int(v) for k, v in it.items()},
        "name": _get(raw, "name") or None,  # an unnamed op output is None, never ''
        "value": encode_array(_get(raw, "value")),
        "dtype": _dtype(_get(raw, "dtype")),
        "offsets": _ints(_get(raw, "offsets")),
        "shape": _ints(_get(raw, "shape")),
        "valid_shape": _ints(_get(raw, "valid_shape")),
        "source": _get(raw, "source"),
        "target": _get(raw, "target"),
        "inputs": [dict(i) for i in inputs] if isinstance(inputs, list) else None,
        "attrs": {str(k): v for k, v in dict(attrs).items() if isinstance(v, str | int | float | bool | None)},
    }


def decode_records(items: list[dict]) -> list[Rec]:
    """Records from their JSON form, sorted by execution order."""
    out = []
    for d in items:
        out.append(Rec(
            seq=int(d["seq"]), node=d.get("node"), op=str(d.get("op", "?")), file=d.get("file"),
            line=d.get("line"), iteration=dict(d.get("iteration") or {}), name=d.get("name") or None,
            value=decode_array(d.get("value")), dtype=d.get("dtype"), offsets=d.get("offsets"),
            shape=d.get("shape"), valid_shape=d.get("valid_shape"), source=d.get("source"),
            target=d.get("target"), inputs=d.get("inputs"), attrs=dict(d.get("attrs") or {}),
        ))
    out.sort(key=lambda r: r.seq)
    return out
